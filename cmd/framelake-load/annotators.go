package main

import (
	"bytes"
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
	"github.com/framelake/framelake/lake/benchlake"
)

// Operations of the annotators' load.
const (
	opEdit     = "box edit (PUT, If-Match)"
	opConflict = "stale edit (409)"
)

// cmdAnnotators is the web app's annotation load: a project and a task of
// fresh lake images, then annotators each saving one box edit of their own
// frames every interval on the frame's version, as the workspace does, and
// now and then one made on a stale version that must come back a 409.
func cmdAnnotators(ctx context.Context, args []string, out io.Writer) error {
	fs := flag.NewFlagSet("annotators", flag.ContinueOnError)
	url := fs.String("url", os.Getenv("FRAMELAKE_URL"), "server (env FRAMELAKE_URL)")
	key := fs.String("key", os.Getenv("FRAMELAKE_KEY"), "write key (env FRAMELAKE_KEY)")
	secret := fs.String("secret", os.Getenv("FRAMELAKE_SECRET"), "its secret (env FRAMELAKE_SECRET)")
	n := fs.Int("annotators", 8, "annotators saving at once")
	every := fs.Duration("every", time.Second, "time between one annotator's edits")
	duration := fs.Duration("duration", 60*time.Second, "length of the run")
	boxes := fs.Int("boxes", 20, "boxes on each frame")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *url == "" || *key == "" || *secret == "" {
		return errors.New("annotators needs --url, --key and --secret")
	}
	hc := &http.Client{Timeout: 60 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: 256}}
	c := client.New(*url, *key, *secret, client.WithHTTPClient(hc))
	pid, frames, err := annotationTask(ctx, c, 4**n)
	if err != nil {
		return err
	}
	res := newResults()
	ctx, cancel := context.WithTimeout(ctx, *duration)
	defer cancel()
	start := time.Now()
	var wg sync.WaitGroup
	for a := range *n {
		wg.Go(func() {
			mine := newResults()
			annotate(ctx, c, pid, frames[a*4:a*4+4], *boxes, *every, rand.New(rand.NewPCG(7, uint64(a))), mine)
			res.merge(mine)
		})
	}
	wg.Wait()
	res.elapsed = time.Since(start)
	res.printRows(out, fmt.Sprintf("%s, %d annotators, an edit each every %s, %s", *url, *n, *every, *duration),
		[]string{opEdit, opConflict})
	return nil
}

// annotationTask stores n small images in a new collection and makes a
// task of them in a new project; it returns the project and the frames.
func annotationTask(ctx context.Context, c *client.Client, n int) (string, []string, error) {
	stamp := time.Now().UTC().Format("20060102-150405.000")
	var files []client.UploadFile
	for i := range n {
		b, err := benchlake.JPEG(5000 + i)
		if err != nil {
			return "", nil, err
		}
		files = append(files, client.UploadFile{Name: fmt.Sprintf("frame-%04d.jpg", i),
			Open: func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(b)), nil }})
	}
	up, err := c.UploadFiles(ctx, client.UploadOptions{Collection: "annotators-" + stamp}, files...)
	if err != nil {
		return "", nil, err
	}
	pid, err := c.CreateProject(ctx, client.Project{Name: "annotators " + stamp, ContentType: client.ContentImage,
		Labels: []client.Label{{Name: "car"}, {Name: "person"}}})
	if err != nil {
		return "", nil, err
	}
	var names []string
	for _, f := range up.Stored {
		names = append(names, f.UniqueName)
	}
	if _, err := c.CreateTask(ctx, pid, client.NewTask{TaskName: "annotators task " + stamp, UniqueNames: names}); err != nil {
		return "", nil, err
	}
	return pid, names, nil
}

// annotate is one annotator: every interval it moves a box of one of its
// frames and saves the frame on the version its last save answered; one
// edit in ten is sent on the version before, which must be refused.
func annotate(ctx context.Context, c *client.Client, pid string, frames []string, nBoxes int, every time.Duration, r *rand.Rand, res *results) {
	version := map[string]int{}
	boxes := map[string][]client.Box{}
	for _, f := range frames {
		version[f] = 1
		for range nBoxes {
			boxes[f] = append(boxes[f], client.Box{Label: "car", X: float64(r.IntN(40)), Y: float64(r.IntN(30)), Width: 8, Height: 6})
		}
	}
	tick := time.NewTicker(every)
	defer tick.Stop()
	select { // annotators do not save in step
	case <-time.After(time.Duration(r.Int64N(int64(every)))):
	case <-ctx.Done():
		return
	}
	for i := 0; ; i++ {
		f := frames[i%len(frames)]
		j := r.IntN(nBoxes)
		boxes[f][j].X, boxes[f][j].Y = float64(r.IntN(40)), float64(r.IntN(30))
		stale := i%10 == 9 && version[f] > 1
		v := version[f]
		if stale {
			v--
		}
		t := time.Now()
		edit, err := c.ReplaceFrameAnnotationsAt(ctx, pid, f, v, boxes[f])
		if ctx.Err() != nil {
			return
		}
		took := time.Since(t)
		var conflict *client.ConflictError
		switch {
		case stale && errors.As(err, &conflict) && conflict.Current.Version == version[f]:
			res.add(opConflict, took, nil)
		case stale:
			res.add(opConflict, took, fmt.Errorf("a stale edit answered %v, want a 409 at version %d", err, version[f]))
		case err == nil:
			version[f] = edit.Version
			res.add(opEdit, took, nil)
		default:
			res.add(opEdit, took, err)
		}
		select {
		case <-tick.C:
		case <-ctx.Done():
			return
		}
	}
}
