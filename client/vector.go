package client

import "context"

// Embedding is a file's vector under a model (INTERFACE.md 2.7).
type Embedding struct {
	UniqueName string    `json:"uniqueName"`
	Embeddings []float32 `json:"embeddings"`
}

// MaxEmbeddingBatch is the most records InsertImageEmbeddingsBatch takes (the interface says below 100).
const MaxEmbeddingBatch = 99

// InsertImageEmbeddingsBatch stores fewer than 100 vectors in one transaction;
// a non-empty sessionID records the batch as a lake job. It returns how many
// vectors were written (a re-inserted file's vector is replaced).
func (c *Client) InsertImageEmbeddingsBatch(ctx context.Context, list []Embedding, modelName string, dim int, sessionID string) (int, error) {
	var out struct {
		UpsertCount int `json:"upsertCount"`
	}
	err := c.postJSON(ctx, "/api/v1/client/insert_image_embeddings_batch", map[string]any{"embedding_list": list,
		"model_name": modelName, "vector_dimension": []int{dim}, "session_id": sessionID}, &out)
	return out.UpsertCount, err
}

// InsertImageEmbeddings stores any number of vectors; the server commits them in batches.
func (c *Client) InsertImageEmbeddings(ctx context.Context, list []Embedding, modelName string, dim int) (int, error) {
	var out struct {
		UpsertCount int `json:"upsertCount"`
	}
	err := c.postJSON(ctx, "/api/v1/client/insert_image_embeddings", map[string]any{"embedding_list": list,
		"model_name": modelName, "vector_dimension": []int{dim}}, &out)
	return out.UpsertCount, err
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
