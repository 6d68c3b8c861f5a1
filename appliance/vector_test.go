package appliance_test

import (
	"context"
	"fmt"
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
	n, err := e.write.InsertImageEmbeddingsBatch(ctx, list, "histo", 8, "session-1")
	if err != nil || n != len(names) {
		t.Fatalf("insert batch: %d %v", n, err)
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
	// The batch was recorded as a completed lake job.
	status, _ := e.raw(t, "GET", "/api/v1/jobs?type=embedding_insert", "", nil)
	if status != 200 {
		t.Errorf("job list: %d", status)
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
	if n, err := e.write.InsertImageEmbeddingsBatch(context.Background(),
		[]client.Embedding{{UniqueName: u, Embeddings: []float32{1, 2, 3}}}, "m", 3, ""); err != nil || n != 1 {
		t.Errorf("after failures, a 3-d insert into m: %d %v", n, err)
	}
}
