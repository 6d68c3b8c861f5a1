package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"

	"github.com/framelake/framelake/client"
)

// waitResult waits for a job and decodes its result into out.
func waitResult(ctx context.Context, c *client.Client, jobID string, out any) error {
	j, err := c.WaitJob(ctx, jobID)
	if err != nil {
		return err
	}
	if j.Status != "completed" {
		return fmt.Errorf("job %s %s: %s", jobID, j.Status, j.Error)
	}
	return json.Unmarshal(j.Result, out)
}

func cmdQuality(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("quality", flag.ContinueOnError)
	srv := addServerFlags(fs)
	query := fs.String("query", "", "score the images this query selects (default: every image)")
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "usage: framelake quality [--query Q] --url URL [--key K --secret S]\n\n"+
			"Scores the images that have no quality scores yet (uploads are scored at ingest) and waits.")
		fs.PrintDefaults()
	}
	if err := parse(fs, args, 0); err != nil {
		return err
	}
	c, err := srv.client()
	if err != nil {
		return err
	}
	jobID, err := c.ComputeQuality(ctx, *query)
	if err != nil {
		return err
	}
	var res struct{ Scored, Skipped int }
	if err := waitResult(ctx, c, jobID, &res); err != nil {
		return err
	}
	fmt.Printf("scored %d images (%d did not decode); job %s\n", res.Scored, res.Skipped, jobID)
	return nil
}

func cmdDuplicates(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("duplicates", flag.ContinueOnError)
	srv := addServerFlags(fs)
	var q client.DuplicatesQuery
	fs.StringVar(&q.Query, "query", "", "compare the images this query selects (default: every image)")
	fs.StringVar(&q.Method, "method", "phash", "phash (perceptual hash) or embedding")
	fs.StringVar(&q.ModelName, "model", "", "embedding: the model whose vectors to compare")
	threshold := fs.Float64("threshold", -1, "phash: Hamming distance (default 10); embedding: cosine distance (default 0.05)")
	fs.BoolVar(&q.TagDuplicates, "tag", false, `tag every member but the keeper "near-duplicate"`)
	fs.StringVar(&q.RemoveFromCollection, "remove-from", "", "take every member but the keeper out of this collection (id)")
	asJSON := fs.Bool("json", false, "print the job's result as JSON")
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "usage: framelake duplicates [--query Q] [--method phash|embedding] [--model M] [--threshold T]\n"+
			"                           [--tag] [--remove-from COLLECTION_ID] --url URL [--key K --secret S] [--json]\n\n"+
			"Finds and records near-duplicate groups, waits, and prints each group's keeper and members.")
		fs.PrintDefaults()
	}
	if err := parse(fs, args, 0); err != nil {
		return err
	}
	if *threshold >= 0 {
		q.Threshold = threshold
	}
	c, err := srv.client()
	if err != nil {
		return err
	}
	jobID, err := c.FindDuplicates(ctx, q)
	if err != nil {
		return err
	}
	var res client.DuplicatesResult
	if err := waitResult(ctx, c, jobID, &res); err != nil {
		return err
	}
	if *asJSON {
		return json.NewEncoder(os.Stdout).Encode(res)
	}
	fmt.Printf("%d files compared by %s (threshold %g): %d pairs, %d groups, %d duplicates", res.Files, res.Method,
		res.Threshold, res.Pairs, res.Groups, res.Duplicates)
	if res.Tagged > 0 {
		fmt.Printf(", %d tagged", res.Tagged)
	}
	if res.Removed > 0 {
		fmt.Printf(", %d removed from the collection", res.Removed)
	}
	fmt.Println()
	for _, g := range res.GroupList {
		fmt.Printf("keep %s\n", g.Keeper)
		for _, m := range g.Members[1:] {
			fmt.Printf("  dup %s\n", m.UniqueName)
		}
	}
	if res.Truncated {
		fmt.Printf("(%d more groups: query duplicates.count > 1)\n", res.Groups-len(res.GroupList))
	}
	return nil
}
