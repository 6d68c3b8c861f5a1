package web_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/framelake/framelake/appliance"
	"github.com/framelake/framelake/internal/auth"
	"github.com/framelake/framelake/internal/testmedia"
	"github.com/framelake/framelake/lake"
)

// lakeServer is a real appliance served on loopback, with a read key, and
// files that have every kind of per-file figure the query language reads:
// boxes of both sources, tags, metadata, quality scores, a duplicate group,
// disagreements, uniqueness, and an evaluation "ev" that covers some files
// and not others (eval.ev.* is missing on those).
type lakeServer struct {
	base, key, secret string
	a                 *appliance.Appliance
	log               *syncBuffer
	files             []lake.File
}

// syncBuffer is a log the server writes while the test reads it.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// serveAppliance opens an appliance on cfg (a new data folder, a loopback
// port) and serves it until the test ends.
func serveAppliance(t testing.TB, cfg appliance.Config) (context.Context, *appliance.Appliance) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	cfg.DataDir, cfg.Addr = t.TempDir(), "127.0.0.1:0"
	a, err := appliance.Open(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	served := make(chan error, 1)
	go func() { served <- a.Serve(ctx) }()
	t.Cleanup(func() {
		cancel()
		<-served
		a.Close()
	})
	return ctx, a
}

func startLakeServer(t *testing.T) *lakeServer {
	t.Helper()
	logs := &syncBuffer{}
	ctx, a := serveAppliance(t, appliance.Config{JobWorkers: -1,
		Logger: slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))})
	k, secret, err := a.Keys.Create(ctx, "reader", auth.Read, 0)
	if err != nil {
		t.Fatal(err)
	}
	s := &lakeServer{base: "http://" + a.Addr(), key: k.Key, secret: secret, a: a, log: logs}
	s.fill(t, ctx)
	return s
}

// fill stores four images: f0 and f1 evaluated in "ev" (f1 with a false
// positive), f2 and f3 not; f0 and f3 byte-identical in a duplicate group.
func (s *lakeServer) fill(t *testing.T, ctx context.Context) {
	l := s.a.Lake
	var ups []lake.Upload
	for i := range 4 {
		b := testmedia.JPEG(64+16*i, 48, i%3+1)
		ups = append(ups, lake.Upload{Name: fmt.Sprintf("f%d.jpg", i),
			Open: func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(b)), nil }})
	}
	res, err := l.Add(ctx, lake.AddOptions{Collection: "voc", Metadata: json.RawMessage(`{"camera": "canon", "iso": 200}`)}, ups)
	if err != nil || len(res.Stored) != 4 {
		t.Fatalf("add: %+v %v", res, err)
	}
	s.files = res.Stored
	conf := 0.75
	if _, err := l.SetHumanBoxes(ctx, "import:truth", []lake.FileBoxes{
		{UniqueName: s.files[0].UniqueName, Boxes: []lake.Box{{Label: "dog", X: 1, Y: 2, W: 10, H: 12}}},
		{UniqueName: s.files[1].UniqueName, Boxes: []lake.Box{{Label: "cat", X: 3, Y: 4, W: 5, H: 6}}},
	}); err != nil {
		t.Fatal(err)
	}
	if _, err := l.TagSelection(ctx, lake.Selection{Query: "name = f0.jpg"}, []string{"t"}, nil); err != nil {
		t.Fatal(err)
	}
	seq := func(i int) int64 { return s.files[i].Seq() }
	db := l.DB().W
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	must := func(err error) {
		t.Helper()
		if err != nil {
			tx.Rollback()
			t.Fatal(err)
		}
	}
	must(lake.SetFileEvalsTx(ctx, tx, "ev", []lake.FileEvalCounts{{FileSeq: seq(0), TP: 1}, {FileSeq: seq(1), FP: 1, FN: 1}}))
	must(lake.SetDisagreementsTx(ctx, tx, "run_1", []lake.FileDisagreement{{FileSeq: seq(1), Count: 2}}))
	_, err = tx.ExecContext(ctx, `INSERT INTO file_uniqueness (file_seq, model_name, score) VALUES (?, 'm', 0.5), (?, 'm', 0.9)`, seq(0), seq(2))
	must(err)
	_, err = tx.ExecContext(ctx, `INSERT INTO annotation (id, file_seq, frame, label, x, y, w, h, confidence, source, operation,
		created_at, updated_at) VALUES ('a_m1', ?, 0, 'dog', 2, 2, 9, 9, ?, 'machine', 'run_1', 1, 1)`, seq(1), conf)
	must(err)
	must(tx.Commit())
	if err := l.ReplaceDuplicates(ctx, []int64{seq(0), seq(3)}, []lake.DuplicateGroup{{ID: "g1", Members: []int64{seq(0), seq(3)}}}); err != nil {
		t.Fatal(err)
	}
}

// get answers a GET with the read key: status, body.
func (s *lakeServer) get(t *testing.T, path string, q url.Values) (int, string) {
	t.Helper()
	if len(q) > 0 {
		path += "?" + q.Encode()
	}
	req, _ := http.NewRequest(http.MethodGet, s.base+path, nil)
	return s.do(t, req)
}

// call runs a client function with the read key.
func (s *lakeServer) call(t *testing.T, fn string, params any) (int, string) {
	t.Helper()
	b, _ := json.Marshal(params)
	req, _ := http.NewRequest(http.MethodPost, s.base+"/api/v1/client/"+fn, bytes.NewReader(b))
	req.Header.Set("Content-Type", "application/json")
	return s.do(t, req)
}

func (s *lakeServer) do(t *testing.T, req *http.Request) (int, string) {
	t.Helper()
	req.Header.Set("key", s.key)
	req.Header.Set("secret", s.secret)
	c := http.Client{Timeout: 30 * time.Second}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, strings.TrimSpace(string(b))
}
