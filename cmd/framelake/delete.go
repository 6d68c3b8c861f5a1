package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"reflect"
	"strings"
	"text/tabwriter"

	"github.com/framelake/framelake/client"
)

// serverFlags are the flags of commands that talk to a server, read from the
// environment like import's --url.
type serverFlags struct{ url, key, secret *string }

func addServerFlags(fs *flag.FlagSet) serverFlags {
	return serverFlags{
		url:    fs.String("url", envOr("FRAMELAKE_URL", ""), "server URL (env FRAMELAKE_URL)"),
		key:    fs.String("key", os.Getenv("FRAMELAKE_KEY"), "API key (env FRAMELAKE_KEY)"),
		secret: fs.String("secret", os.Getenv("FRAMELAKE_SECRET"), "API secret (env FRAMELAKE_SECRET)"),
	}
}

func (f serverFlags) client() (*client.Client, error) {
	if *f.url == "" {
		return nil, errors.New("--url is required (or set FRAMELAKE_URL)")
	}
	return client.New(*f.url, *f.key, *f.secret), nil
}

// deleters are the kinds framelake delete takes, and whether --files
// applies; each is a client method expression, receiver first.
var deleters = map[string]struct {
	files bool
	del   func(c *client.Client, ctx context.Context, id string, files bool) (*client.Deleted, error)
}{
	"file": {false, func(c *client.Client, ctx context.Context, id string, _ bool) (*client.Deleted, error) {
		return c.DeleteFile(ctx, id)
	}},
	"collection": {true, (*client.Client).DeleteCollection},
	"dataset": {false, func(c *client.Client, ctx context.Context, id string, _ bool) (*client.Deleted, error) {
		return c.DeleteDataset(ctx, id)
	}},
	"version": {false, func(c *client.Client, ctx context.Context, id string, _ bool) (*client.Deleted, error) {
		return c.DeleteDatasetVersion(ctx, id)
	}},
	"project": {true, (*client.Client).DeleteProject},
}

func cmdDelete(ctx context.Context, args []string) error {
	const use = "usage: framelake delete file|collection|dataset|version|project ID [--files] --url URL [--key K --secret S] [--json]"
	if len(args) == 0 {
		return errors.New(use)
	}
	if args[0] == "-h" || args[0] == "--help" {
		fmt.Fprintln(os.Stderr, use+"\n\nRun 'framelake delete KIND -h' for its flags.")
		return flag.ErrHelp
	}
	kind, ok := deleters[args[0]]
	if !ok {
		return fmt.Errorf("cannot delete a %q: %s", args[0], use)
	}
	fs := flag.NewFlagSet("delete "+args[0], flag.ContinueOnError)
	srv := addServerFlags(fs)
	files := fs.Bool("files", false, "also delete the files of the collection or project (default: they stay in the lake)")
	asJSON := fs.Bool("json", false, "print the server's answer as JSON")
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), use)
		fs.PrintDefaults()
	}
	if err := parse(fs, args[1:], 1); err != nil {
		return err
	}
	if *files && !kind.files {
		return fmt.Errorf("--files applies to a collection or a project, not a %s", args[0])
	}
	c, err := srv.client()
	if err != nil {
		return err
	}
	d, err := kind.del(c, ctx, fs.Arg(0), *files)
	if err != nil {
		return err
	}
	if *asJSON {
		return json.NewEncoder(os.Stdout).Encode(d)
	}
	return printDeleted(os.Stdout, args[0]+" "+fs.Arg(0), d)
}

// printDeleted says in one or two lines what a delete removed and kept,
// naming only the kinds it counted.
func printDeleted(w io.Writer, what string, d *client.Deleted) error {
	fmt.Fprintf(w, "deleted %s: removed %s\n", what, countList(d.Removed))
	if kept := countList(d.Kept); kept != "nothing" {
		fmt.Fprintf(w, "kept (still needed elsewhere or not asked for): %s\n", kept)
	}
	if len(d.CancelledJobs) > 0 {
		fmt.Fprintf(w, "cancelled builds: %s\n", strings.Join(d.CancelledJobs, ", "))
	}
	return nil
}

// countList is "1 file, 2 annotations" from the non-zero counts, in the
// order and with the names of the JSON answer (singular for one).
func countList(c client.DeleteCounts) string {
	v, t := reflect.ValueOf(c), reflect.TypeOf(c)
	var parts []string
	for i := range t.NumField() {
		if n := v.Field(i).Int(); n != 0 {
			name, _, _ := strings.Cut(t.Field(i).Tag.Get("json"), ",")
			if n == 1 {
				name = strings.TrimSuffix(name, "s")
			}
			parts = append(parts, fmt.Sprintf("%d %s", n, name))
		}
	}
	if len(parts) == 0 {
		return "nothing"
	}
	return strings.Join(parts, ", ")
}

func cmdProjects(ctx context.Context, args []string) error {
	const use = "usage: framelake projects list --url URL [--key K --secret S] [--page N] [--page-size N] [--json]"
	if len(args) == 0 || args[0] != "list" {
		return errors.New(use)
	}
	fs := flag.NewFlagSet("projects list", flag.ContinueOnError)
	srv := addServerFlags(fs)
	page := fs.Int("page", 0, "page index, from 0")
	size := fs.Int("page-size", 0, "projects per page (server default 100, at most 1000)")
	asJSON := fs.Bool("json", false, "print the server's answer as JSON")
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), use)
		fs.PrintDefaults()
	}
	if err := parse(fs, args[1:], 0); err != nil {
		return err
	}
	c, err := srv.client()
	if err != nil {
		return err
	}
	list, err := c.ListProjects(ctx, client.ProjectListOptions{PageIndex: *page, PageSize: *size})
	if err != nil {
		return err
	}
	if *asJSON {
		return json.NewEncoder(os.Stdout).Encode(list)
	}
	tw := tabwriter.NewWriter(os.Stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tNAME\tCONTENT\tLABELS\tTASKS\tFRAMES\tPROGRESS")
	for _, p := range list.ProjectList {
		labels := make([]string, len(p.Labels))
		for i, l := range p.Labels {
			labels[i] = l.Name
		}
		content := "image"
		if p.ContentType == client.ContentVideo {
			content = "video"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%d\t%d/%d\t%g%%\n", p.ProjectID, p.ProjectName, content,
			strings.Join(labels, ","), p.TaskCount, p.CompletedFrames, p.FrameCount, p.Progress)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Printf("%d of %d projects\n", len(list.ProjectList), list.ProjectCount)
	return nil
}
