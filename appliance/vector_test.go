package appliance_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/framelake/framelake/appliance"
	"github.com/framelake/framelake/client"
)

func TestEmbeddingsEndToEnd(t *testing.T) {
	e := start(t, appliance.Config{})
	files := lakeFixture(t, e)
	ctx := context.Background()
	// Each north/south image gets a unit vector along its own axis; n1 and n2 lean towards n0.
	names := []string{"n0.jpg", "n1.jpg", "n2.jpg", "n3.jpg", "s0.jpg", "s1.jpg"}
	var list []client.Embedding
	for i, n := range names {
		v := make([]float32, 8)
		v[i] = 1
		if n == "n1.jpg" || n == "n2.jpg" {
			v[0] = 0.5 + float32(i)/10
		}
		list = append(list, client.Embedding{UniqueName: files[n].UniqueName, Embeddings: v})
	}
	ins, err := e.write.InsertImageEmbeddingsBatch(ctx, list, "histo", 8, "session-1")
	if err != nil || ins.UpsertCount != len(names) || !ins.Success || ins.JobID == "" {
		t.Fatalf("insert batch: %+v %v", ins, err)
	}
	got, missing, err := e.read.GetEmbeddingVector(ctx, []string{files["n0.jpg"].UniqueName, files["s2.jpg"].UniqueName}, "histo")
	if err != nil || len(got) != 1 || got[0].Embeddings[0] != 1 || len(missing) != 1 || missing[0] != files["s2.jpg"].UniqueName {
		t.Fatalf("get: %+v %v %v", got, missing, err)
	}
	sim, err := e.read.FindSimilar(ctx, client.SimilarQuery{ModelName: "histo", UniqueName: files["n0.jpg"].UniqueName, K: 2})
	if err != nil || len(sim) != 2 || sim[0].UniqueName != files["n2.jpg"].UniqueName || sim[1].UniqueName != files["n1.jpg"].UniqueName {
		t.Fatalf("similar: %+v %v", sim, err)
	}
	// Pre-filter by the lake query: only south files may answer.
	sim, err = e.read.FindSimilar(ctx, client.SimilarQuery{ModelName: "histo", UniqueName: files["n0.jpg"].UniqueName, K: 5,
		Query: "collection = south"})
	if err != nil || len(sim) != 2 || !strings.HasPrefix(sim[0].UniqueName, "south-") {
		t.Fatalf("filtered similar: %+v %v", sim, err)
	}
	// The batch was recorded as a completed lake job under its session, and
	// a batch without a session was not.
	if _, err := e.write.InsertImageEmbeddingsBatch(ctx, list[:1], "histo", 8, ""); err != nil {
		t.Fatal(err)
	}
	var jobs struct {
		JobList []client.Job `json:"jobList"`
	}
	if err := e.getJSON(t, "/api/v1/jobs?type=embedding_insert", &jobs); err != nil || len(jobs.JobList) != 1 {
		t.Fatalf("embedding_insert jobs %+v %v; want the session's one", jobs, err)
	}
	j := jobs.JobList[0]
	var res struct {
		SessionID   string `json:"sessionId"`
		ModelName   string `json:"modelName"`
		UpsertCount int    `json:"upsertCount"`
	}
	if err := json.Unmarshal(j.Result, &res); err != nil {
		t.Fatal(err)
	}
	if j.ID != ins.JobID || j.Status != "completed" || j.Done != int64(len(names)) || j.Total != int64(len(names)) ||
		res.SessionID != "session-1" || res.ModelName != "histo" || res.UpsertCount != len(names) {
		t.Errorf("session job %+v result %s; want job %s, session-1, histo, %d vectors", j, j.Result, ins.JobID, len(names))
	}
}

func TestEmbeddingsBadInput(t *testing.T) {
	e := start(t, appliance.Config{})
	files := lakeFixture(t, e)
	u := files["n0.jpg"].UniqueName
	big := make([]string, 100)
	for i := range big {
		big[i] = fmt.Sprintf(`{"uniqueName": %q, "embeddings": [1, 0]}`, u)
	}
	cases := []struct {
		fn, body    string
		status      int
		field, want string
	}{
		{"insert_image_embeddings_batch", `{"embedding_list": [` + strings.Join(big, ",") + `], "model_name": "m", "vector_dimension": [2]}`, 400, "embedding_list", "100"},
		{"insert_image_embeddings_batch", `{"embedding_list": [{"uniqueName": "` + u + `", "embeddings": []}], "model_name": "m", "vector_dimension": [2]}`, 400, "embedding_list[0].embeddings", ""},
		{"insert_image_embeddings_batch", `{"embedding_list": [{"uniqueName": "` + u + `", "embeddings": [1, 2, 3]}], "model_name": "m", "vector_dimension": [2]}`, 400, "embedding_list[0].embeddings", ""},
		{"insert_image_embeddings_batch", `{"embedding_list": [{"uniqueName": "nobody", "embeddings": [1, 2]}], "model_name": "m", "vector_dimension": [2]}`, 404, "embedding_list[0].uniqueName", ""},
		{"insert_image_embeddings_batch", `{"embedding_list": [{"uniqueName": "` + u + `", "embeddings": [1e39, 2]}], "model_name": "m", "vector_dimension": [2]}`, 400, "embedding_list[0].embeddings[0]", ""},
		{"insert_image_embeddings", `{"embedding_list": [], "model_name": "m", "vector_dimension": [2, 3]}`, 400, "vector_dimension", "one positive integer"},
		{"get_embedding_vector", `{"unique_names": ["` + u + `"], "model_name": "unknown-model"}`, 404, "model_name", ""},
		{"find_similar", `{"model_name": "m"}`, 400, "unique_name", "exactly one"},
	}
	for _, c := range cases {
		status, eb := e.raw(t, "POST", "/api/v1/client/"+c.fn, "application/json", strings.NewReader(c.body))
		if status != c.status || eb["field"] != c.field || !strings.Contains(eb["message"], c.want) {
			t.Errorf("%s %.80s: %d %v; want %d field %q", c.fn, c.body, status, eb, c.status, c.field)
		}
	}
	// The dimension of "m" was never fixed: nothing was written by the failures.
	if ins, err := e.write.InsertImageEmbeddingsBatch(context.Background(),
		[]client.Embedding{{UniqueName: u, Embeddings: []float32{1, 2, 3}}}, "m", 3, ""); err != nil || ins.UpsertCount != 1 {
		t.Errorf("after failures, a 3-d insert into m: %+v %v", ins, err)
	}
}

// getJSON gets path with the read key and decodes a 200 answer.
func (e *env) getJSON(t *testing.T, path string, out any) error {
	t.Helper()
	req, _ := http.NewRequest("GET", e.base+path, nil)
	req.SetBasicAuth(e.wkey, e.wsecret)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s: %s", path, resp.Status)
	}
	return json.NewDecoder(resp.Body).Decode(out)
}

// TestInsertManyEmbeddingsOverHTTP: insert_image_embeddings takes any number
// of vectors through the Go client, far past what one 16 MiB request holds,
// and each can then be found as its own nearest neighbour.
func TestInsertManyEmbeddingsOverHTTP(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: 5,000 files and vectors over HTTP")
	}
	const n, dim = 5000, 512
	e := start(t, appliance.Config{})
	ctx := context.Background()
	var names []string
	for start := 0; start < n; start += 1000 {
		var ups []client.UploadFile
		for i := start; i < start+1000; i++ {
			ups = append(ups, memFile(fmt.Sprintf("v%04d.txt", i), []byte(fmt.Sprintf("vector file %d", i))))
		}
		res, err := e.write.UploadFiles(ctx, client.UploadOptions{Collection: "vectors"}, ups...)
		if err != nil || len(res.Stored) != len(ups) {
			t.Fatalf("upload: %d stored, %v", len(res.Stored), err)
		}
		for _, f := range res.Stored {
			names = append(names, f.UniqueName)
		}
	}
	r := rand.New(rand.NewPCG(6, 6))
	list := make([]client.Embedding, n)
	for i := range list {
		v := make([]float32, dim)
		for j := range v {
			v[j] = float32(r.NormFloat64())
		}
		list[i] = client.Embedding{UniqueName: names[i], Embeddings: v}
	}
	// One request of all of them is over the body limit, and says what to do.
	body, err := json.Marshal(map[string]any{"embedding_list": list, "model_name": "big", "vector_dimension": []int{dim}})
	if err != nil {
		t.Fatal(err)
	}
	status, eb := e.raw(t, "POST", "/api/v1/client/insert_image_embeddings", "application/json", bytes.NewReader(body))
	if status != 413 || !strings.Contains(eb["message"], "several requests") {
		t.Fatalf("%d MiB in one request: %d %v; want a 413 saying to send batches", len(body)>>20, status, eb)
	}
	ins, err := e.write.InsertImageEmbeddings(ctx, list, "big", dim)
	if err != nil || ins.UpsertCount != n || !ins.Success {
		t.Fatalf("InsertImageEmbeddings of %d: %+v %v", n, ins, err)
	}
	for _, i := range []int{0, 2999, n - 1} {
		near, err := e.read.FindSimilar(ctx, client.SimilarQuery{ModelName: "big", Vector: list[i].Embeddings, K: 2})
		if err != nil || len(near) != 2 || near[0].UniqueName != names[i] || near[0].Distance > 1e-5 {
			t.Errorf("nearest to vector %d: %+v %v; want %s at distance 0", i, near, err, names[i])
		}
	}
	got, missing, err := e.read.GetEmbeddingVector(ctx, []string{names[n-1]}, "big")
	if err != nil || len(missing) != 0 || len(got) != 1 || !slices.Equal(got[0].Embeddings, list[n-1].Embeddings) {
		t.Errorf("last vector read back: %d found, missing %v, %v", len(got), missing, err)
	}
}
