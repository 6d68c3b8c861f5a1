// Command framelake is the appliance: one binary that serves the REST API,
// imports media, manages API keys and previews augmentations.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"sort"
	"syscall"
)

// command is one subcommand: it parses its own flags from args.
type command struct {
	run     func(ctx context.Context, args []string) error
	summary string
}

var commands = map[string]command{
	"serve":   {cmdServe, "serve the REST API on a data folder"},
	"import":  {cmdImport, "import a folder of media into the lake"},
	"keys":    {cmdKeys, "create, list and revoke API keys; rotate the media-link signing key"},
	"users":   {cmdUsers, "create, list, disable and change the people who sign in with a password"},
	"augment": {cmdAugment, "preview an augmentation configuration on an image"},
	"model":   {cmdModel, "serve a registered model package over the SageMaker protocol, list models"},
	"version": {cmdVersion, "print the version"},
	"check":   {cmdCheck, "check a data folder's integrity; --repair fixes what is safe"},
	"backup":  {cmdBackup, "copy a data folder consistently, also while a server runs; restore brings it back"},
	"restore": {cmdRestore, "restore a backup into a new data folder"},
	"media":   {cmdMedia, "media migrate --to URL: move the media to a bucket or back, verified, resumable"},

	"delete":     {cmdDelete, "delete a file, collection, dataset, version or project on a server"},
	"duplicates": {cmdDuplicates, "find and record near-duplicate images on a server"},
	"quality":    {cmdQuality, "score the images of a server that have no quality scores"},
	"projects":   {cmdProjects, "list the annotation projects of a server"},
	"select":     {cmdSelect, "choose what to label next on a server and tag it"},
	"dataset":    {cmdDataset, "compare two dataset versions on a server (diff)"},
	"eval":       {cmdEval, "run, show, compare and list evaluations of a model run on a server"},
}

func usage() {
	fmt.Fprintln(os.Stderr, "usage: framelake <command> [flags]\n\ncommands:")
	names := make([]string, 0, len(commands))
	for n := range commands {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Fprintf(os.Stderr, "  %-10s %s\n", n, commands[n].summary)
	}
	fmt.Fprintln(os.Stderr, "\nRun 'framelake <command> -h' for a command's flags.")
}

func main() {
	if len(os.Args) < 2 {
		usage()
		os.Exit(2)
	}
	cmd, ok := commands[os.Args[1]]
	if !ok {
		if os.Args[1] != "-h" && os.Args[1] != "--help" && os.Args[1] != "help" {
			fmt.Fprintf(os.Stderr, "framelake: unknown command %q\n\n", os.Args[1])
		}
		usage()
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := cmd.run(ctx, os.Args[2:]); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			os.Exit(0)
		}
		fmt.Fprintf(os.Stderr, "framelake %s: %v\n", os.Args[1], err)
		os.Exit(1)
	}
}

// envOr returns the environment variable name, or def when it is unset.
func envOr(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}
