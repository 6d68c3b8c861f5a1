package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/framelake/framelake/client"
	"github.com/framelake/framelake/lake/benchlake"
)

// urls is a repeatable flag.
type urls []string

func (u *urls) String() string     { return strings.Join(*u, ",") }
func (u *urls) Set(s string) error { *u = append(*u, s); return nil }

// shape is one question the load asks, timed alone.
type shape struct {
	name string
	do   func(ctx context.Context, c *client.Client, colls []string) error
}

func listShape(name string, q client.ItemQuery) shape {
	return shape{name, func(ctx context.Context, c *client.Client, _ []string) error {
		_, err := c.GetItemListFromDatalake(ctx, q)
		return err
	}}
}

func countShape(name, q string) shape {
	return shape{name, func(ctx context.Context, c *client.Client, _ []string) error {
		_, err := c.GetItemCountFromLake(ctx, "", q, nil)
		return err
	}}
}

func collectionShape(name string, page int) shape {
	return shape{name, func(ctx context.Context, c *client.Client, colls []string) error {
		_, err := c.GetItemListFromCollection(ctx, colls[2], client.ItemQuery{PageIndex: page})
		return err
	}}
}

// shapes are the slow questions on the 100,000-file lake, at the
// first page, page 50 and the last page of camera c's 12,500 files.
func shapes(files int) []shape {
	name := fmt.Sprintf("name = %q", benchlake.FileName(files/2))
	last := files/8/pageSize - 1
	return []shape{
		listShape("list name=", client.ItemQuery{Query: name}),
		listShape("list name= (no match)", client.ItemQuery{Query: `name = "no-such.jpg"`}),
		countShape("count name=", name),
		listShape("list collection= page 0", client.ItemQuery{Query: "collection = cam-c"}),
		listShape("list collection= page 50", client.ItemQuery{Query: "collection = cam-c", PageIndex: 50}),
		listShape(fmt.Sprintf("list collection= page %d", last), client.ItemQuery{Query: "collection = cam-c", PageIndex: last}),
		countShape("count collection=", "collection = cam-c"),
		collectionShape("collection files page 0", 0),
		collectionShape("collection files page 50", 50),
		collectionShape(fmt.Sprintf("collection files page %d", last), last),
		listShape("list metadata= page 0", client.ItemQuery{Query: "metadata.camera = cam-c"}),
		listShape("list metadata= page 50", client.ItemQuery{Query: "metadata.camera = cam-c", PageIndex: 50}),
		listShape(fmt.Sprintf("list metadata= page %d", last), client.ItemQuery{Query: "metadata.camera = cam-c", PageIndex: last}),
		countShape("count metadata=", "metadata.camera = cam-c"),
		listShape("list page 0", client.ItemQuery{}),
		listShape(fmt.Sprintf("list page %d", files/pageSize-1), client.ItemQuery{PageIndex: files/pageSize - 1}),
		{"file details", func(ctx context.Context, c *client.Client, _ []string) error {
			_, err := c.GetFileDetails(ctx, benchlake.UniqueName(files/2), nil)
			return err
		}},
	}
}

// cmdShapes times each shape on each server, interleaved in a fresh random
// order every round, and prints each one's median per server.
func cmdShapes(ctx context.Context, args []string, out io.Writer) error {
	fs := flag.NewFlagSet("shapes", flag.ContinueOnError)
	var servers urls
	fs.Var(&servers, "url", "server to time; repeat to compare builds side by side")
	key := fs.String("key", os.Getenv("FRAMELAKE_KEY"), "key (env FRAMELAKE_KEY)")
	secret := fs.String("secret", os.Getenv("FRAMELAKE_SECRET"), "its secret (env FRAMELAKE_SECRET)")
	rounds := fs.Int("rounds", 21, "timed rounds (after two warm-up rounds)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if len(servers) == 0 || *key == "" || *secret == "" {
		return errors.New("shapes needs --url (one or more), --key and --secret")
	}
	var loads []*load
	for _, u := range servers {
		l, err := newLoad(ctx, u, *key, *secret, 8)
		if err != nil {
			return fmt.Errorf("%s: %w", u, err)
		}
		loads = append(loads, l)
	}
	ss := shapes(loads[0].files)
	took := make([][][]time.Duration, len(loads)) // server, shape, rounds
	for i := range took {
		took[i] = make([][]time.Duration, len(ss))
	}
	r := rand.New(rand.NewPCG(5, 9))
	for round := -2; round < *rounds; round++ {
		for _, k := range r.Perm(len(ss) * len(loads)) {
			si, li := k%len(ss), k/len(ss)
			t := time.Now()
			if err := ss[si].do(ctx, loads[li].c, loads[li].colls); err != nil {
				return fmt.Errorf("%s on %s: %w", ss[si].name, servers[li], err)
			}
			if round >= 0 {
				took[li][si] = append(took[li][si], time.Since(t))
			}
		}
	}
	tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "median ms of %d\t%s\t\n", *rounds, strings.Join(servers, "\t"))
	for si, s := range ss {
		row := []string{s.name}
		for li := range loads {
			ds := took[li][si]
			slices.Sort(ds)
			row = append(row, fmt.Sprintf("%.2f", float64(ds[len(ds)/2].Microseconds())/1000))
		}
		fmt.Fprintf(tw, "%s\t\n", strings.Join(row, "\t"))
	}
	return tw.Flush()
}
