package client

import "context"

// ComputeQuality starts a job that scores the images query selects ("" for
// every image) that have no quality scores yet; follow the job id with
// WaitJob. New uploads are scored at ingest.
func (c *Client) ComputeQuality(ctx context.Context, query string) (string, error) {
	var out struct {
		JobID string `json:"jobId"`
	}
	err := c.postJSON(ctx, "/api/v1/client/compute_quality", map[string]any{"query": query}, &out)
	return out.JobID, err
}

// DuplicatesQuery asks for near-duplicate groups.
type DuplicatesQuery struct {
	Query     string   `json:"query,omitempty"`
	Method    string   `json:"method,omitempty"`     // "phash" (default) or "embedding"
	ModelName string   `json:"model_name,omitempty"` // embedding: the model whose vectors to compare
	Threshold *float64 `json:"threshold,omitempty"`  // phash: Hamming distance (default 10); embedding: cosine distance (default 0.05)
	// TagDuplicates tags every member but the keeper "near-duplicate".
	TagDuplicates bool `json:"tag_duplicates,omitempty"`
	// RemoveFromCollection takes every member but the keeper out of this collection (id).
	RemoveFromCollection string `json:"remove_from_collection,omitempty"`
}

// FindDuplicates starts a job that records the near-duplicate groups among
// the images q selects; its result is a DuplicatesResult (decode Job.Result).
func (c *Client) FindDuplicates(ctx context.Context, q DuplicatesQuery) (string, error) {
	var out struct {
		JobID string `json:"jobId"`
	}
	err := c.postJSON(ctx, "/api/v1/client/find_duplicates", q, &out)
	return out.JobID, err
}

// DuplicateMember is a file of a near-duplicate group.
type DuplicateMember struct {
	UniqueName string  `json:"uniqueName"`
	Pixels     int64   `json:"pixels"`
	FileSize   int64   `json:"fileSize"`
	Sharpness  float64 `json:"sharpness"`
}

// DuplicateGroup is a group: its id (the keeper's uniqueName), the
// suggested keeper (most pixels, then most bytes, then sharpest) and its members, keeper first.
type DuplicateGroup struct {
	Group   string            `json:"group"`
	Keeper  string            `json:"keeper"`
	Members []DuplicateMember `json:"members"`
}

// DuplicatesResult is a find_duplicates job's result.
type DuplicatesResult struct {
	Method     string           `json:"method"`
	Threshold  float64          `json:"threshold"`
	Files      int              `json:"files"`
	Pairs      int64            `json:"pairs"`
	Groups     int              `json:"groups"`
	Duplicates int              `json:"duplicates"` // members that are not keepers
	Tagged     int              `json:"tagged"`
	Removed    int              `json:"removedFromCollection"`
	GroupList  []DuplicateGroup `json:"groupList"`
	Truncated  bool             `json:"truncated"` // more groups than listed
}

// DatasetLeakage is the near-duplicate pairs of a dataset version that
// cross its splits (SplitPairs keys: train/test, train/validation, test/validation).
type DatasetLeakage struct {
	Method     string         `json:"method"`
	Threshold  int            `json:"threshold"`
	Frames     int            `json:"frames"`
	Unscored   int            `json:"unscored"`
	Pairs      int            `json:"pairs"`
	Crossing   int            `json:"crossing"`
	SplitPairs map[string]int `json:"splitPairs"`
	Examples   []struct {
		A        string `json:"a"`
		SplitA   string `json:"splitA"`
		B        string `json:"b"`
		SplitB   string `json:"splitB"`
		Distance int    `json:"distance"`
		// VideoA and FrameA name the video and frame A was sampled from
		// (none for an image); so VideoB and FrameB.
		VideoA string `json:"videoA,omitempty"`
		FrameA *int   `json:"frameA,omitempty"`
		VideoB string `json:"videoB,omitempty"`
		FrameB *int   `json:"frameB,omitempty"`
	} `json:"examples"`
	// Videos are the pairs of videos whose sampled frames the splits
	// separate, with how many near-duplicate frame pairs each has.
	Videos []struct {
		A      string `json:"a"`
		SplitA string `json:"splitA"`
		B      string `json:"b"`
		SplitB string `json:"splitB"`
		Pairs  int    `json:"pairs"`
	} `json:"videos,omitempty"`
}

// GetDatasetLeakage reports the near-duplicate pairs (perceptual hash within
// threshold; nil for the default 10) that a version splits between train,
// validation and test.
func (c *Client) GetDatasetLeakage(ctx context.Context, versionID string, threshold *int) (DatasetLeakage, error) {
	var out DatasetLeakage
	p := map[string]any{"version_id": versionID}
	if threshold != nil {
		p["threshold"] = *threshold
	}
	err := c.postJSON(ctx, "/api/v1/client/get_dataset_leakage", p, &out)
	return out, err
}
