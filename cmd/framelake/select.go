package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"sort"
	"text/tabwriter"

	"github.com/framelake/framelake/client"
)

func cmdSelect(ctx context.Context, args []string) error {
	const use = "usage: framelake select --strategy uncertainty|diversity|uniqueness|hybrid --budget N [--query Q] " +
		"[--run RUN_ID] [--model NAME] [--measure least_confidence|margin|entropy] [--seed N] [--tag T] " +
		"[--keep-duplicates] --url URL [--key K --secret S] [--json]"
	fs := flag.NewFlagSet("select", flag.ContinueOnError)
	srv := addServerFlags(fs)
	var req client.SelectRequest
	fs.StringVar(&req.Strategy, "strategy", "", "uncertainty, diversity, uniqueness or hybrid")
	fs.IntVar(&req.Budget, "budget", 0, "how many files to choose")
	fs.StringVar(&req.Query, "query", "", "the pool: a lake query over images (default: every image)")
	fs.StringVar(&req.RunID, "run", "", "uncertainty and hybrid: the model run whose box confidences count")
	fs.StringVar(&req.Model, "model", "", "diversity, uniqueness and hybrid: the embeddings' model (default: the default embedding model)")
	fs.StringVar(&req.Measure, "measure", "", "uncertainty measure: least_confidence (default), margin or entropy")
	fs.Int64Var(&req.Seed, "seed", 0, "same seed, same selection")
	fs.StringVar(&req.Tag, "tag", "", "tag for the chosen files (default: the selection job's id)")
	fs.BoolVar(&req.KeepDuplicates, "keep-duplicates", false,
		"also choose copies of a chosen file (same bytes or one find_duplicates group); by default they are skipped")
	asJSON := fs.Bool("json", false, "print the job's result as JSON")
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), use)
		fs.PrintDefaults()
	}
	if err := parse(fs, args, 0); err != nil {
		return err
	}
	c, err := srv.client()
	if err != nil {
		return err
	}
	jobID, err := c.SelectSamples(ctx, req)
	if err != nil {
		return err
	}
	j, err := waitDone(ctx, c, jobID)
	if err != nil {
		return err
	}
	if *asJSON {
		_, err := fmt.Printf("%s\n", j.Result)
		return err
	}
	var res client.Selection
	if err := json.Unmarshal(j.Result, &res); err != nil {
		return err
	}
	tw := tabwriter.NewWriter(os.Stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "#\tUNIQUE NAME\tSCORE")
	for i, n := range res.UniqueNames {
		fmt.Fprintf(tw, "%d\t%s\t%.4f\n", i+1, n, res.Scores[i])
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Printf("%d of %d candidates chosen by %s, tagged %q (job %s)\n", len(res.UniqueNames), res.Candidates,
		res.Strategy, res.Tag, jobID)
	return nil
}

// waitDone waits for a job and turns a job that did not complete into an error.
func waitDone(ctx context.Context, c *client.Client, jobID string) (client.Job, error) {
	j, err := c.WaitJob(ctx, jobID)
	if err != nil {
		return j, err
	}
	if j.Status != "completed" {
		return j, fmt.Errorf("job %s %s: %s", jobID, j.Status, j.Error)
	}
	return j, nil
}

func cmdDataset(ctx context.Context, args []string) error {
	const use = "usage: framelake dataset diff FROM_VERSION_ID TO_VERSION_ID --url URL [--key K --secret S] [--json]"
	if len(args) == 0 || args[0] != "diff" {
		if len(args) > 0 && (args[0] == "-h" || args[0] == "--help") {
			fmt.Fprintln(os.Stderr, use)
			return flag.ErrHelp
		}
		return errors.New(use)
	}
	fs := flag.NewFlagSet("dataset diff", flag.ContinueOnError)
	srv := addServerFlags(fs)
	asJSON := fs.Bool("json", false, "print the server's answer as JSON")
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), use)
		fs.PrintDefaults()
	}
	if err := parse(fs, args[1:], 2); err != nil {
		return err
	}
	c, err := srv.client()
	if err != nil {
		return err
	}
	d, err := c.DiffDatasetVersions(ctx, fs.Arg(0), fs.Arg(1))
	if err != nil {
		return err
	}
	if *asJSON {
		return json.NewEncoder(os.Stdout).Encode(d)
	}
	printDiff(d)
	return nil
}

// printDiff shows a diff as a summary and two tables: boxes per label and
// the statistics of each version side by side.
func printDiff(d client.VersionDiff) {
	fmt.Printf("%s %s -> %s %s\n", d.From.Dataset, d.From.VersionNo, d.To.Dataset, d.To.VersionNo)
	f := d.Frames
	fmt.Printf("frames: %d added, %d removed, %d moved between splits, %d kept (%d with other boxes)\n",
		f.Added, f.Removed, f.Moved, f.Kept, f.BoxesChanged)
	pairs := make([]string, 0, len(d.MovedBetween))
	for p := range d.MovedBetween {
		pairs = append(pairs, p)
	}
	sort.Strings(pairs)
	for _, p := range pairs {
		fmt.Printf("  moved %s: %d\n", p, d.MovedBetween[p])
	}
	tw := tabwriter.NewWriter(os.Stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "LABEL\tADDED\tREMOVED\tCHANGED\tUNCHANGED")
	for _, l := range sortedKeys(d.Boxes) {
		b := d.Boxes[l]
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%d\n", l, b.Added, b.Removed, b.Changed, b.Unchanged)
	}
	fmt.Fprintln(tw, "\nSTATISTIC\tFROM\tTO")
	fmt.Fprintf(tw, "frames\t%d\t%d\n", d.From.Stats.TotalFrames, d.To.Stats.TotalFrames)
	fmt.Fprintf(tw, "boxes\t%d\t%d\n", d.From.Stats.TotalBoxes, d.To.Stats.TotalBoxes)
	fmt.Fprintf(tw, "augmented frames\t%d\t%d\n", d.From.Stats.AugmentedFrames, d.To.Stats.AugmentedFrames)
	for _, s := range []string{"train", "validation", "test"} {
		fmt.Fprintf(tw, "%s frames\t%d\t%d\n", s, d.From.Stats.Splits[s].Frames, d.To.Stats.Splits[s].Frames)
	}
	labels := map[string]bool{}
	for l := range d.From.Stats.Labels {
		labels[l] = true
	}
	for l := range d.To.Stats.Labels {
		labels[l] = true
	}
	for _, l := range sortedKeys(labels) {
		fmt.Fprintf(tw, "%s boxes\t%d\t%d\n", l, d.From.Stats.Labels[l].Boxes, d.To.Stats.Labels[l].Boxes)
	}
	tw.Flush()
}
