package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"os"
	"sync"
	"time"

	"github.com/framelake/framelake/client"
)

// Operations of the team's load besides the annotators' saves.
const (
	opReviewTask    = "reviewer: task frames"
	opReviewFrame   = "reviewer: frame shapes"
	opReviewHistory = "reviewer: project history"
	opCurateCount   = "curator: count query"
	opCuratePage    = "curator: page of a query"
	opCurateStats   = "curator: people's stats"
)

// cmdTeam is a labelling team's load (issue 35's figure): annotators each
// saving an edit of their frames every interval as the workspace does (one
// in ten on a stale version, which must be a 409), while a reviewer pages
// the task, its frames and the project's history, and a curator queries the
// lake and reads the people's statistics. Every operation is checked; any
// unexpected answer is an error.
func cmdTeam(ctx context.Context, args []string, out io.Writer) error {
	fs := flag.NewFlagSet("team", flag.ContinueOnError)
	url := fs.String("url", os.Getenv("FRAMELAKE_URL"), "server (env FRAMELAKE_URL)")
	key := fs.String("key", os.Getenv("FRAMELAKE_KEY"), "write key (env FRAMELAKE_KEY)")
	secret := fs.String("secret", os.Getenv("FRAMELAKE_SECRET"), "its secret (env FRAMELAKE_SECRET)")
	var o teamOptions
	fs.IntVar(&o.annotators, "annotators", 20, "annotators saving at once")
	fs.DurationVar(&o.every, "every", 2*time.Second, "time between one annotator's edits")
	fs.DurationVar(&o.page, "page", 500*time.Millisecond, "time between the reviewer's and the curator's requests")
	fs.DurationVar(&o.duration, "duration", 60*time.Second, "length of the run")
	fs.IntVar(&o.boxes, "boxes", 20, "boxes on each frame")
	fs.BoolVar(&o.people, "people", false, "annotators are people (needs an admin key): an account each, a job each, "+
		"signed in with a session cookie as the web app is; otherwise every annotator saves with the key")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *url == "" || *key == "" || *secret == "" {
		return errors.New("team needs --url, --key and --secret")
	}
	res, err := runTeam(ctx, *url, *key, *secret, o)
	if err != nil {
		return err
	}
	who := "annotators"
	if o.people {
		who = "annotators signed in as people"
	}
	res.printRows(out, fmt.Sprintf("%s, %d %s (an edit each every %s), a reviewer and a curator (a request every %s), %s",
		*url, o.annotators, who, o.every, o.page, o.duration), teamOps)
	return nil
}

// teamOps are the team load's operations, in the order they print.
var teamOps = []string{opEdit, opConflict, opReviewTask, opReviewFrame, opReviewHistory, opCurateCount, opCuratePage,
	opCurateStats}

// teamOptions shape the team's load (cmdTeam's flags).
type teamOptions struct {
	annotators, boxes     int
	every, page, duration time.Duration
	people                bool
	started               func() // called as the load starts, after the setup (for a benchmark's counters)
}

// runTeam makes the task (and, with people, the annotators' accounts and
// jobs) and runs the team's load on it.
func runTeam(ctx context.Context, url, key, secret string, o teamOptions) (*results, error) {
	hc := &http.Client{Timeout: 60 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: 256}}
	c := client.New(url, key, secret, client.WithHTTPClient(hc))
	const per = 4 // frames an annotator edits in turn
	pid, frames, err := annotationTask(ctx, c, per*o.annotators)
	if err != nil {
		return nil, err
	}
	st, err := c.FrameAnnotations(ctx, pid, frames[0])
	if err != nil {
		return nil, err
	}
	clients, theirs := make([]*client.Client, o.annotators), make([][]string, o.annotators)
	for a := range o.annotators {
		clients[a], theirs[a] = c, frames[a*per:a*per+per]
	}
	if o.people {
		if clients, theirs, err = teamOfPeople(ctx, c, url, pid, st.TaskID, o.annotators, per); err != nil {
			return nil, err
		}
	}
	res := newResults()
	if o.started != nil {
		o.started()
	}
	ctx, cancel := context.WithTimeout(ctx, o.duration)
	defer cancel()
	start := time.Now()
	var wg sync.WaitGroup
	for a := range o.annotators {
		wg.Go(func() {
			mine := newResults()
			annotate(ctx, clients[a], pid, theirs[a], o.boxes, o.every, rand.New(rand.NewPCG(7, uint64(a))), mine)
			res.merge(mine)
		})
	}
	wg.Go(func() {
		mine := newResults()
		review(ctx, c, pid, st.TaskID, frames, o.page, mine)
		res.merge(mine)
	})
	wg.Go(func() {
		mine := newResults()
		curate(ctx, c, o.page, mine)
		res.merge(mine)
	})
	wg.Wait()
	res.elapsed = time.Since(start)
	return res, nil
}

// timed runs one request and records it unless the run ended during it.
func timed(ctx context.Context, res *results, name string, call func() error) bool {
	t := time.Now()
	err := call()
	if ctx.Err() != nil {
		return false
	}
	res.add(name, time.Since(t), err)
	return true
}

// pause waits d, false when the run ends first.
func pause(ctx context.Context, d time.Duration) bool {
	select {
	case <-time.After(d):
		return true
	case <-ctx.Done():
		return false
	}
}

// review is the reviewer: the task's frame strip, a frame's shapes, the
// project's latest changes, in turn.
func review(ctx context.Context, c *client.Client, pid, taskID string, frames []string, every time.Duration, res *results) {
	r := rand.New(rand.NewPCG(11, 1))
	for i := 0; ; i++ {
		var ok bool
		switch i % 3 {
		case 0:
			ok = timed(ctx, res, opReviewTask, func() error {
				w, err := c.TaskWorkspace(ctx, taskID)
				if err == nil && len(w.Frames) != len(frames) {
					err = fmt.Errorf("the task has %d frames, want %d", len(w.Frames), len(frames))
				}
				return err
			})
		case 1:
			ok = timed(ctx, res, opReviewFrame, func() error {
				_, err := c.FrameAnnotations(ctx, pid, frames[r.IntN(len(frames))])
				return err
			})
		default:
			ok = timed(ctx, res, opReviewHistory, func() error {
				_, err := c.History(ctx, client.HistoryQuery{ProjectID: pid, Limit: 50})
				return err
			})
		}
		if !ok || !pause(ctx, every) {
			return
		}
	}
}

// curate is the curator: counts and pages of lake queries, and the day's
// statistics of the people.
func curate(ctx context.Context, c *client.Client, every time.Duration, res *results) {
	queries := []string{"", "annotation.label=car", `createdAt >= "2026-01-01"`, "annotation.label=person"}
	for i := 0; ; i++ {
		q := queries[i%len(queries)]
		var ok bool
		switch i % 3 {
		case 0:
			ok = timed(ctx, res, opCurateCount, func() error {
				_, err := c.GetItemCountFromLake(ctx, "image", q, nil)
				return err
			})
		case 1:
			ok = timed(ctx, res, opCuratePage, func() error {
				_, err := c.GetItemListFromDatalake(ctx, client.ItemQuery{Query: q, PageIndex: i % 5, PageSize: 50})
				return err
			})
		default:
			ok = timed(ctx, res, opCurateStats, func() error {
				_, err := c.PeopleStats(ctx, "", "", "")
				return err
			})
		}
		if !ok || !pause(ctx, every) {
			return
		}
	}
}
