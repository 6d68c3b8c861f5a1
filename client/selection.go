package client

import "context"

// SelectRequest asks select_samples for what to label next (docs/api.md,
// "Choosing what to label next").
type SelectRequest struct {
	Query    string `json:"query,omitempty"`
	Budget   int    `json:"budget"`
	Strategy string `json:"strategy"`             // uncertainty, diversity, uniqueness, hybrid
	RunID    string `json:"run_id,omitempty"`     // uncertainty and hybrid: the run whose box confidences count
	Model    string `json:"model_name,omitempty"` // the others: embeddings' model; "" the default embedding model
	Measure  string `json:"measure,omitempty"`    // least_confidence (default), margin, entropy
	Seed     int64  `json:"seed"`
	Tag      string `json:"tag,omitempty"` // "" tags the chosen files with the job's id
	// KeepDuplicates lets the selection choose copies (same bytes, or one
	// find_duplicates group) of a file it chose; by default it skips them.
	KeepDuplicates bool `json:"keep_duplicates,omitempty"`
}

// Selection is a select_samples job's result.
type Selection struct {
	UniqueNames []string  `json:"uniqueNames"` // in selection order
	Scores      []float64 `json:"scores"`
	Tag         string    `json:"tag"`
	Strategy    string    `json:"strategy"`
	Measure     string    `json:"measure"`
	Candidates  int       `json:"candidates"`
	// SkippedDuplicates counts candidates left out as copies of a chosen file.
	SkippedDuplicates int `json:"skippedDuplicates"`
}

// UniquenessResult is a compute_uniqueness job's result.
type UniquenessResult struct {
	Model  string `json:"model"`
	Files  int    `json:"files"`
	K      int    `json:"k"`
	Metric string `json:"metric"`
}

// SelectSamples queues a selection and returns its job's id; the job's
// result decodes into Selection.
func (c *Client) SelectSamples(ctx context.Context, req SelectRequest) (string, error) {
	var out struct {
		JobID string `json:"jobId"`
	}
	err := c.postJSON(ctx, "/api/v1/client/select_samples", req, &out)
	return out.JobID, err
}

// ComputeUniqueness queues the uniqueness scores of the images query selects
// (all when "") over modelName's embeddings ("" the default embedding
// model) and returns the job's id.
func (c *Client) ComputeUniqueness(ctx context.Context, modelName, query string) (string, error) {
	var out struct {
		JobID string `json:"jobId"`
	}
	err := c.postJSON(ctx, "/api/v1/client/compute_uniqueness",
		map[string]string{"model_name": modelName, "query": query}, &out)
	return out.JobID, err
}

// DiffSide is one version of a diff with its statistics.
type DiffSide struct {
	VersionID string       `json:"versionId"`
	VersionNo string       `json:"versionNo"`
	DatasetID string       `json:"datasetId"`
	Dataset   string       `json:"datasetName"`
	Labels    []string     `json:"labels"`
	SplitInfo SplitInfo    `json:"splitInfo"`
	Stats     DatasetStats `json:"stats"`
}

// BoxChanges counts one label's boxes in a diff.
type BoxChanges struct {
	Added     int `json:"added"`
	Removed   int `json:"removed"`
	Changed   int `json:"changed"`
	Unchanged int `json:"unchanged"`
}

// VersionDiff is what diff_dataset_versions answers.
type VersionDiff struct {
	From        DiffSide `json:"from"`
	To          DiffSide `json:"to"`
	SameDataset bool     `json:"sameDataset"`
	Frames      struct {
		Added        int `json:"added"`
		Removed      int `json:"removed"`
		Moved        int `json:"moved"`
		Kept         int `json:"kept"`
		BoxesChanged int `json:"boxesChanged"`
	} `json:"frames"`
	MovedBetween map[string]int        `json:"movedBetween"` // "train->test": frames
	Boxes        map[string]BoxChanges `json:"boxes"`
	AddedNames   []string              `json:"addedNames"`
	RemovedNames []string              `json:"removedNames"`
	Moves        []struct {
		UniqueName string `json:"uniqueName"`
		From       string `json:"from"`
		To         string `json:"to"`
	} `json:"moves"`
}

// DiffDatasetVersions compares two built versions: frames added, removed
// and moved between splits, boxes per label, statistics side by side.
func (c *Client) DiffDatasetVersions(ctx context.Context, fromVersionID, toVersionID string) (VersionDiff, error) {
	var out VersionDiff
	err := c.postJSON(ctx, "/api/v1/client/diff_dataset_versions",
		map[string]string{"from_version_id": fromVersionID, "to_version_id": toVersionID}, &out)
	return out, err
}
