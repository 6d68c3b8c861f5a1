package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"image"
	_ "image/jpeg"
	"io"
	"math/rand/v2"
	"net/http"
	"sync"
	"text/tabwriter"
	"time"

	"github.com/framelake/framelake/client"
)

// The operations beyond the lake's own: thumbnails as the web grid loads
// them, frame annotation edits in a project, and find_similar over vectors
// of a sample of files. Their set-up is idempotent, so a lake can be loaded
// again and again.

const (
	simModel     = "load-similar"
	simDim       = 64
	loadProject  = "load-frames"
	loadFrames   = 64
	thumbPerPage = 1000
)

// extras is what the extra operations need.
type extras struct {
	base, key, secret string
	thumbs            []string // signed thumbnail links
	simNames          []string // files with a vector of simModel
	projectID         string
	frames            []string // frames of loadProject
	frameW, frameH    int
	labels            []string
}

func (l *load) setupExtras(ctx context.Context, base, key, secret string, sample []string) error {
	l.x = extras{base: base, key: key, secret: secret, labels: []string{"car", "person", "bike"}}
	var page struct {
		Items []struct {
			ThumbURL string `json:"thumbUrl"`
		} `json:"items"`
	}
	if err := l.getJSON(ctx, fmt.Sprintf("/api/v1/lake/items?pageSize=%d&thumbSize=256", thumbPerPage), &page); err != nil {
		return fmt.Errorf("thumbnail links: %w", err)
	}
	for _, it := range page.Items {
		l.x.thumbs = append(l.x.thumbs, it.ThumbURL)
	}
	if err := l.setupVectors(ctx, sample); err != nil {
		return fmt.Errorf("vectors for find_similar: %w", err)
	}
	if err := l.setupFrames(ctx); err != nil {
		return fmt.Errorf("frames to edit: %w", err)
	}
	return nil
}

// setupVectors gives every file of sample a random unit-free vector.
func (l *load) setupVectors(ctx context.Context, sample []string) error {
	r := rand.New(rand.NewPCG(7, 7))
	for i := 0; i < len(sample); i += client.MaxEmbeddingBatch {
		var batch []client.Embedding
		for _, n := range sample[i:min(i+client.MaxEmbeddingBatch, len(sample))] {
			v := make([]float32, simDim)
			for j := range v {
				v[j] = r.Float32()*2 - 1
			}
			batch = append(batch, client.Embedding{UniqueName: n, Embeddings: v})
		}
		if _, err := l.c.InsertImageEmbeddings(ctx, batch, simModel, simDim); err != nil {
			return err
		}
	}
	l.x.simNames = sample
	return nil
}

// setupFrames makes (or finds) a project of loadFrames frames to edit.
func (l *load) setupFrames(ctx context.Context) error {
	var labels []client.Label
	for _, n := range l.x.labels {
		labels = append(labels, client.Label{Name: n})
	}
	list, err := l.c.ListProjects(ctx, client.ProjectListOptions{PageSize: 1000})
	if err != nil {
		return err
	}
	for _, p := range list.ProjectList {
		if p.ProjectName == loadProject {
			l.x.projectID = p.ProjectID
		}
	}
	if l.x.projectID == "" {
		if l.x.projectID, err = l.c.CreateProject(ctx, client.Project{Name: loadProject, ContentType: client.ContentImage,
			Labels: labels}); err != nil {
			return err
		}
	}
	cfg, _, err := image.DecodeConfig(bytes.NewReader(l.jpegs[0]))
	if err != nil {
		return err
	}
	l.x.frameW, l.x.frameH = cfg.Width, cfg.Height
	up, err := l.c.InitializeUpload(ctx, l.x.projectID, loadProject, loadFrames)
	if err != nil {
		return err
	}
	for i := range loadFrames {
		seq := i
		b := l.jpegs[0] // every frame the size of the boxes' image
		res, err := l.c.UploadFrame(ctx, up.UploadID, client.Frame{SequenceNo: &seq,
			File: client.UploadFile{Name: fmt.Sprintf("frame-%03d.jpg", i), Open: func() (io.ReadCloser, error) {
				return io.NopCloser(bytes.NewReader(b)), nil
			}}})
		if err != nil {
			return err
		}
		l.x.frames = append(l.x.frames, res.UniqueName)
	}
	return nil
}

func (l *load) getJSON(ctx context.Context, path string, out any) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, l.x.base+path, nil)
	if err != nil {
		return err
	}
	req.Header.Set("key", l.x.key)
	req.Header.Set("secret", l.x.secret)
	resp, err := l.http.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		return fmt.Errorf("GET %s: %s %s", path, resp.Status, b)
	}
	return json.NewDecoder(resp.Body).Decode(out)
}

var extraOps = []op{
	{"thumbnail", 4, func(ctx context.Context, l *load, r *rand.Rand) error {
		return l.media(ctx, l.x.thumbs[r.IntN(len(l.x.thumbs))])
	}},
	{"frame edit", 4, func(ctx context.Context, l *load, r *rand.Rand) error {
		boxes := make([]client.Box, 1+r.IntN(5))
		for i := range boxes {
			x, y := r.IntN(l.x.frameW/2), r.IntN(l.x.frameH/2)
			boxes[i] = client.Box{Label: l.x.labels[r.IntN(len(l.x.labels))], X: float64(x), Y: float64(y),
				Width: float64(1 + r.IntN(l.x.frameW-x)), Height: float64(1 + r.IntN(l.x.frameH-y))}
		}
		_, err := l.c.ReplaceFrameAnnotations(ctx, l.x.projectID, l.x.frames[r.IntN(len(l.x.frames))], boxes)
		return err
	}},
	{"find similar", 4, func(ctx context.Context, l *load, r *rand.Rand) error {
		got, err := l.c.FindSimilar(ctx, client.SimilarQuery{ModelName: simModel, UniqueName: l.x.simNames[r.IntN(len(l.x.simNames))], K: 20})
		if err == nil && len(got) != 20 {
			err = fmt.Errorf("find_similar answered %d neighbours, want 20", len(got))
		}
		return err
	}},
}

// sample is the server's runtime figures at one moment (GET /api/v1/runtime).
type sample struct {
	At         time.Duration
	Goroutines int   `json:"goroutines"`
	Heap       int64 `json:"heapAllocBytes"`
	RSS        int64 `json:"rssBytes"`
	OpenFiles  int   `json:"openFiles"`
	// Writer is the server's write transactions since it started: how long
	// they waited for the one writer and held it.
	Writer struct {
		N         int64   `json:"transactions"`
		WaitTotal float64 `json:"waitTotalMs"`
		WaitMax   float64 `json:"waitMaxMs"`
		WaitP99   float64 `json:"waitP99Ms"`
		HoldTotal float64 `json:"holdTotalMs"`
		HoldMax   float64 `json:"holdMaxMs"`
		HoldP99   float64 `json:"holdP99Ms"`
	} `json:"writer"`
}

// sampler reads the server's runtime figures every interval until stopped.
type sampler struct {
	mu      sync.Mutex
	samples []sample
	stop    func()
	done    chan struct{}
}

func (l *load) startSampler(ctx context.Context, every time.Duration) *sampler {
	ctx, cancel := context.WithCancel(ctx)
	s := &sampler{stop: cancel, done: make(chan struct{})}
	start := time.Now()
	go func() {
		defer close(s.done)
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			var x sample
			if err := l.getJSON(ctx, "/api/v1/runtime", &x); err == nil {
				x.At = time.Since(start)
				s.mu.Lock()
				s.samples = append(s.samples, x)
				s.mu.Unlock()
			}
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
		}
	}()
	return s
}

// print stops the sampler and writes its samples.
func (s *sampler) print(w io.Writer) {
	s.stop()
	<-s.done
	fmt.Fprintln(w, "\nserver runtime, sampled during the run (GET /api/v1/runtime)")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	// The write columns are the transactions since the sample before, and
	// their mean wait for the writer and mean hold of it.
	fmt.Fprintln(tw, "at s\tgoroutines\theap MB\tRSS MB\topen files\twrites\twait ms\thold ms\t")
	for i, x := range s.samples {
		var n int64
		var wait, hold float64
		if i > 0 {
			p := s.samples[i-1].Writer
			if n = x.Writer.N - p.N; n > 0 {
				wait, hold = (x.Writer.WaitTotal-p.WaitTotal)/float64(n), (x.Writer.HoldTotal-p.HoldTotal)/float64(n)
			}
		}
		fmt.Fprintf(tw, "%.0f\t%d\t%.1f\t%.1f\t%d\t%d\t%.1f\t%.1f\t\n", x.At.Seconds(), x.Goroutines, float64(x.Heap)/1e6,
			float64(x.RSS)/1e6, x.OpenFiles, n, wait, hold)
	}
	tw.Flush()
	if n := len(s.samples); n > 0 {
		w0 := s.samples[n-1].Writer
		fmt.Fprintf(w, "writer since the server started: %d write transactions, wait p99 %.1f ms (max %.1f), hold p99 %.1f ms (max %.1f)\n",
			w0.N, w0.WaitP99, w0.WaitMax, w0.HoldP99, w0.HoldMax)
	}
}
