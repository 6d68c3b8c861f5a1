package client

import "context"

// Embedding is a file's vector under a model (docs/spec/interface.md 2.7).
type Embedding struct {
	UniqueName string    `json:"uniqueName"`
	Embeddings []float32 `json:"embeddings"`
}

// MaxEmbeddingBatch is the most records InsertImageEmbeddingsBatch takes (the interface says below 100).
const MaxEmbeddingBatch = 99

// EmbeddingInsert is what an embedding insert returns.
type EmbeddingInsert struct {
	Success     bool   `json:"success"`
	UpsertCount int    `json:"upsertCount"`     // vectors written (a re-inserted file's vector is replaced)
	JobID       string `json:"jobId,omitempty"` // a batch with a session id: the completed lake job recording it
}

// InsertImageEmbeddingsBatch stores fewer than 100 vectors in one transaction;
// a non-empty sessionID records the batch as a lake job (type
// embedding_insert) in the same transaction, whose id comes back as JobID.
func (c *Client) InsertImageEmbeddingsBatch(ctx context.Context, list []Embedding, modelName string, dim int, sessionID string) (EmbeddingInsert, error) {
	var out EmbeddingInsert
	err := c.postJSON(ctx, "/api/v1/client/insert_image_embeddings_batch", map[string]any{"embedding_list": list,
		"model_name": modelName, "vector_dimension": []int{dim}, "session_id": sessionID}, &out)
	return out, err
}

// EmbeddingNumbersPerRequest is the most numbers (vectors x dimensions) one
// insert_image_embeddings request of InsertImageEmbeddings carries: 1 MiB of
// float32s, a few MiB of JSON, well under the server's 16 MiB body limit.
const EmbeddingNumbersPerRequest = 262144

// InsertImageEmbeddings stores any number of vectors: it sends them in
// requests of at most EmbeddingNumbersPerRequest numbers (and at least one
// vector) each and returns the summed count, as one request would. Each
// request commits on its own: on an error, UpsertCount says what the requests
// before the failing one stored.
func (c *Client) InsertImageEmbeddings(ctx context.Context, list []Embedding, modelName string, dim int) (EmbeddingInsert, error) {
	total := EmbeddingInsert{Success: true}
	for _, batch := range numberBatches(list, EmbeddingNumbersPerRequest) {
		var out EmbeddingInsert
		err := c.postJSON(ctx, "/api/v1/client/insert_image_embeddings", map[string]any{"embedding_list": batch,
			"model_name": modelName, "vector_dimension": []int{dim}}, &out)
		if err != nil {
			total.Success = false
			return total, err
		}
		total.UpsertCount += out.UpsertCount
	}
	return total, nil
}

// numberBatches splits list into runs of at most limit numbers, each at
// least one record; an empty list is one empty run, so the server still
// answers it (with its error).
func numberBatches(list []Embedding, limit int) [][]Embedding {
	var out [][]Embedding
	start, numbers := 0, 0
	for i, e := range list {
		if i > start && numbers+len(e.Embeddings) > limit {
			out = append(out, list[start:i])
			start, numbers = i, 0
		}
		numbers += len(e.Embeddings)
	}
	return append(out, list[start:])
}

// GetEmbeddingVector returns the vectors of the named files under a model and
// the names that have none.
func (c *Client) GetEmbeddingVector(ctx context.Context, uniqueNames []string, modelName string) ([]Embedding, []string, error) {
	var out struct {
		Embeddings []Embedding `json:"embeddings"`
		Missing    []string    `json:"missing"`
	}
	err := c.postJSON(ctx, "/api/v1/client/get_embedding_vector",
		map[string]any{"unique_names": uniqueNames, "model_name": modelName}, &out)
	return out.Embeddings, out.Missing, err
}

// SimilarQuery asks for the files nearest to a file's vector or to a vector.
type SimilarQuery struct {
	ModelName  string    `json:"model_name"`
	UniqueName string    `json:"unique_name,omitempty"`
	Vector     []float32 `json:"vector,omitempty"`
	K          int       `json:"k,omitempty"` // default 10, at most 1000
	ItemType   string    `json:"item_type,omitempty"`
	Query      string    `json:"query,omitempty"` // pre-filter: only files the lake query selects
	Filter     *Filter   `json:"filter,omitempty"`
}

// Similar is one neighbour: cosine distance, 0 for the same direction.
type Similar struct {
	UniqueName string  `json:"uniqueName"`
	Distance   float64 `json:"distance"`
}

// FindSimilar returns the k nearest neighbours, nearest first (exact search).
func (c *Client) FindSimilar(ctx context.Context, q SimilarQuery) ([]Similar, error) {
	var out struct {
		Results []Similar `json:"results"`
	}
	err := c.postJSON(ctx, "/api/v1/client/find_similar", q, &out)
	return out.Results, err
}
