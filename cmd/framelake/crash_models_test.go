package main_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/framelake/framelake/client"
	"github.com/framelake/framelake/internal/sqlitedb"
)

// adminKey reads the admin key the first start wrote into data.
func adminKey(t *testing.T, data string) (key, secret string) {
	t.Helper()
	var k map[string]string
	b, err := os.ReadFile(filepath.Join(data, "admin-key.json"))
	if err != nil || json.Unmarshal(b, &k) != nil {
		t.Fatalf("admin key: %v", err)
	}
	return k["key"], k["secret"]
}

var colourTagger = filepath.Join("..", "..", "examples", "models", "colour-tagger")

// TestKillModelRegistration kills the server while it registers a model
// package (unpacking, checking, making its venv). After the restart a model
// answered 2xx is listed and tags; one in flight is either whole or absent,
// with no package folder left behind, and registering it again succeeds.
func TestKillModelRegistration(t *testing.T) {
	data := t.TempDir()
	s := startServer(t, data)
	key, secret := adminKey(t, data)
	ctx := context.Background()
	// One registration unkilled, to know how long one takes.
	start := time.Now()
	if _, err := client.New(s.base, key, secret).RegisterModel(ctx, colourTagger, "colours-ref", "auto_tagging"); err != nil {
		t.Fatal(err)
	}
	took := time.Since(start)
	var k tally
	orphans := 0
	for point := range killPoints() {
		name := fmt.Sprintf("colours-%d", point)
		c := client.New(s.base, key, secret)
		answered := make(chan error, 1)
		go func() {
			_, err := c.RegisterModel(ctx, colourTagger, name, "auto_tagging")
			answered <- err
		}()
		killAt(s, time.Millisecond, took+took/4)
		ok := <-answered == nil
		k.tried++
		// Before the restart, check sees what the kill left.
		out, _ := run(t, "check", "--data", data, "--json")
		var r struct{ Problems []struct{ Kind string } }
		if err := json.NewDecoder(strings.NewReader(out)).Decode(&r); err != nil {
			t.Fatalf("check --json: %v\n%s", err, out)
		}
		for _, p := range r.Problems {
			if p.Kind == "orphan_model" {
				orphans++
			} else if p.Kind != "job_interrupted" {
				t.Fatalf("after a kill during registration, check found %s:\n%s", p.Kind, out)
			}
		}
		s = startServer(t, data)
		c = client.New(s.base, key, secret)
		models, err := c.Models(ctx)
		if err != nil {
			t.Fatal(err)
		}
		listed := slices.ContainsFunc(models, func(m client.Model) bool { return m.Name == name })
		if ok && !listed {
			t.Fatalf("model %s answered 2xx before the kill is not listed", name)
		}
		if !listed {
			if _, err := c.RegisterModel(ctx, colourTagger, name, "auto_tagging"); err != nil {
				t.Fatalf("registering %s again after the kill: %v\n%s", name, err, s.log.String())
			}
		}
		s.stop(t)
		mustCheck(t, data)
		s = startServer(t, data)
		k.survived++
	}
	t.Logf("%d kills left a package folder no model names, which check reported and the restart removed", orphans)
	k.report(t, "model registration")
	// The models registered work: tag three images with the last one.
	c := client.New(s.base, key, secret)
	files, collID := uploadColours(t, c, data, "after-registrations", 3, 0)
	verifyColourRun(t, c, startColourRun(t, c, collID, fmt.Sprintf("colours-%d", killPoints()-1)), files)
}

// colourImage is a PNG of one colour the colour tagger names; n varies one
// pixel so that every image is a distinct file.
func colourImage(rgba color.RGBA, n int) []byte {
	img := image.NewRGBA(image.Rect(0, 0, 96, 64))
	for y := range 64 {
		for x := range 96 {
			img.Set(x, y, rgba)
		}
	}
	img.Set(0, 0, color.RGBA{uint8(n), uint8(n >> 8), rgba.B, 255})
	var b bytes.Buffer
	png.Encode(&b, img)
	return b.Bytes()
}

var tagColours = []struct {
	name string
	rgba color.RGBA
}{
	{"red", color.RGBA{220, 20, 20, 255}},
	{"blue", color.RGBA{20, 60, 220, 255}},
	{"yellow", color.RGBA{240, 220, 40, 255}},
}

// uploadColours uploads n single-colour images (red, blue, yellow in turn)
// into collection coll and returns them with the collection's id.
func uploadColours(t *testing.T, c *client.Client, data, coll string, n, seed int) ([]client.StoredFile, string) {
	t.Helper()
	var ups []client.UploadFile
	for i := range n {
		ups = append(ups, bytesFile(fmt.Sprintf("%s-%d.png", coll, i), colourImage(tagColours[i%3].rgba, seed*1000+i)))
	}
	res, err := c.UploadFiles(context.Background(), client.UploadOptions{Collection: coll}, ups...)
	if err != nil || len(res.Stored) != n {
		t.Fatalf("upload: %+v %v", res, err)
	}
	db, err := sqlitedb.Open(context.Background(), filepath.Join(data, "framelake.db"), sqlitedb.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var id string
	if err := db.R.QueryRow("SELECT id FROM collection WHERE name = ?", coll).Scan(&id); err != nil {
		t.Fatal(err)
	}
	return res.Stored, id
}

func startColourRun(t *testing.T, c *client.Client, collID, model string) client.RunStarted {
	t.Helper()
	conf := 0.3
	started, err := c.AutoTagCollection(context.Background(), collID, client.AnalysisOptions{ModelName: model, ConfidenceThreshold: &conf})
	if err != nil {
		t.Fatal(err)
	}
	return started
}

// verifyColourRun waits for the run's job: every file must carry its
// colour's tag, and the run must count each file once.
func verifyColourRun(t *testing.T, c *client.Client, started client.RunStarted, files []client.StoredFile) {
	t.Helper()
	ctx := context.Background()
	j, err := c.WaitJob(ctx, started.JobID)
	if err != nil || j.Status != "completed" {
		t.Fatalf("auto-tag job: %+v %v", j, err)
	}
	for i, f := range files {
		d, err := c.GetFileDetails(ctx, f.UniqueName, map[string]bool{"Tags": true})
		want := tagColours[i%3].name
		b, _ := json.Marshal(d["Tags"])
		if err != nil || !strings.Contains(string(b), `"`+want+`"`) {
			t.Fatalf("%s: tags %s %v, want %s", f.Name, b, err, want)
		}
	}
	r, err := c.Run(ctx, started.RunID)
	if err != nil || r.Status != "completed" || r.Counts.Items != int64(len(files)) {
		t.Fatalf("run after the job: %+v %v (want %d items, each once)", r, err, len(files))
	}
}

// TestKillAutoTag kills the server during an auto-tag run over a
// collection; at the restart the run resumes and ends with every file
// tagged and counted once.
func TestKillAutoTag(t *testing.T) {
	data := t.TempDir()
	s := startServer(t, data)
	key, secret := adminKey(t, data)
	ctx := context.Background()
	if _, err := client.New(s.base, key, secret).RegisterModel(ctx, colourTagger, "colours", "auto_tagging"); err != nil {
		t.Fatal(err)
	}
	const n = 24
	var k tally
	resumed := 0
	for point := range killPoints() {
		c := client.New(s.base, key, secret)
		coll := fmt.Sprintf("tag-%d", point)
		files, collID := uploadColours(t, c, data, coll, n, point)
		started := startColourRun(t, c, collID, "colours")
		killAt(s, 5*time.Millisecond, 1500*time.Millisecond)
		k.tried++
		s = startServer(t, data)
		c = client.New(s.base, key, secret)
		verifyColourRun(t, c, started, files)
		if j, _ := c.Job(ctx, started.JobID); j.Attempts > 1 {
			resumed++
		}
		s.stop(t)
		mustCheck(t, data)
		s = startServer(t, data)
		k.survived++
	}
	t.Logf("%d of %d runs were killed running and resumed", resumed, k.tried)
	k.report(t, fmt.Sprintf("auto-tag run of %d files", n))
}
