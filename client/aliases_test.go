package client_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"log/slog"
	"strings"
	"testing"

	"github.com/framelake/framelake/appliance"
	"github.com/framelake/framelake/client"
	"github.com/framelake/framelake/internal/auth"
	"github.com/framelake/framelake/internal/testmedia"
)

// serve starts a real appliance and returns a client with a write key.
func serve(t *testing.T) *client.Client {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	a, err := appliance.Open(ctx, appliance.Config{DataDir: t.TempDir(), Addr: "127.0.0.1:0",
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- a.Serve(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("serve: %v", err)
		}
		a.Close()
	})
	k, secret, err := a.Keys.Create(ctx, "w", auth.Write, 0)
	if err != nil {
		t.Fatal(err)
	}
	return client.New(a.BaseURL(), k.Key, secret)
}

// TestInterfaceAliases sends the parameter table's other names, model_id and
// dataset_id, and checks that the server saw them.
func TestInterfaceAliases(t *testing.T) {
	c, ctx := serve(t), context.Background()
	jpeg := func(name string, seed int) client.UploadFile {
		return client.UploadFile{Name: name, Open: func() (io.ReadCloser, error) {
			return io.NopCloser(bytes.NewReader(testmedia.JPEG(64, 48, seed))), nil
		}}
	}
	if _, err := c.UploadFiles(ctx, client.UploadOptions{Collection: "c"}, jpeg("a.jpg", 1), jpeg("b.jpg", 2)); err != nil {
		t.Fatal(err)
	}
	colls, err := c.GetItemListFromDatalake(ctx, client.ItemQuery{ItemType: "image_collection"})
	if err != nil || len(colls) != 1 {
		t.Fatalf("collections %+v %v", colls, err)
	}
	coll := colls[0].ID

	_, err = c.AutoTagCollection(ctx, coll, client.AnalysisOptions{ModelName: "one", ModelID: "other"})
	if e := (*client.Error)(nil); !errors.As(err, &e) || e.Status != 400 || e.Field != "model_name" {
		t.Errorf("model_name and a different model_id: %v, want a 400 on model_name", err)
	}
	_, err = c.GenerateEmbeddingsToLake(ctx, "image", client.AnalysisOptions{ModelID: "no-such-model"})
	if err == nil || !strings.Contains(err.Error(), "no-such-model") {
		t.Errorf("model_id of an unknown model: %v, want an error naming it", err)
	}

	spec := client.DatasetSpec{SplitInfo: client.SplitInfo{Train: 50, Test: 50}, Labels: []string{"car"}}
	b, err := c.CreateDatasetFromCollection(ctx, "cars", coll, spec)
	if err != nil {
		t.Fatal(err)
	}
	if j, err := c.WaitJob(ctx, b.JobID); err != nil || j.Status != "completed" {
		t.Fatalf("build %+v %v", j, err)
	}
	spec.DatasetID = "dsg_someone_else"
	_, err = c.UpdateDatasetVersionFromCollection(ctx, b.VersionID, coll, true, spec)
	if e := (*client.Error)(nil); !errors.As(err, &e) || e.Status != 400 || e.Field != "dataset_id" {
		t.Errorf("update with another dataset's id: %v, want a 400 on dataset_id", err)
	}
	spec.DatasetID = b.DatasetID
	next, err := c.UpdateDatasetVersionFromDatalake(ctx, b.VersionID, "", true, spec)
	if err != nil || next.DatasetID != b.DatasetID || next.VersionNo != "2.0" {
		t.Errorf("update naming its dataset: %+v %v", next, err)
	}
	if _, err := c.CreateDatasetFromCollection(ctx, "more", coll, spec); client.CodeOf(err) != "invalid_argument" {
		t.Errorf("create with dataset_id: %v, want invalid_argument", err)
	}
}
