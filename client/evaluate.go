package client

import (
	"context"
	"encoding/json"
	"time"
)

// Evaluation functions (issues 21 and 24): a model run's boxes against human
// boxes, as named evaluations, and label disagreements.

// EvaluationRequest are evaluate_detections' parameters. PredRunID and Key
// are required; IoU 0 means the server's default (0.5).
type EvaluationRequest struct {
	PredRunID    string   `json:"pred_run_id"`
	Key          string   `json:"key"`
	GTOperations []string `json:"gt_operations,omitempty"` // annotation project ids; all human boxes when empty
	Query        string   `json:"query,omitempty"`
	CollectionID string   `json:"collection_id,omitempty"`
	VersionID    string   `json:"version_id,omitempty"` // a dataset version's files (its current build)
	Split        string   `json:"split,omitempty"`      // of VersionID: train, validation or test; all when empty
	IoU          float64  `json:"iou,omitempty"`
	Confidence   float64  `json:"confidence,omitempty"`  // predicted boxes under it get no outcome
	TieOrder     string   `json:"tie_order,omitempty"`   // "image_id" (default, pycocotools') or "file"
	AreaSource   string   `json:"area_source,omitempty"` // "annotation" (default, COCO's area) or "box" (w×h)
	VOCAP        string   `json:"voc_ap,omitempty"`      // "all_points" (default) or "voc07" (11 points)
	IoUType      string   `json:"iou_type,omitempty"`    // "bbox" (default), "segm" (masks), "keypoints" (OKS) or "class"
	// Sigmas are OKS sigmas by label and point name, for keypoints labels
	// that declare none and are not COCO's person (iou_type keypoints).
	Sigmas map[string]map[string]float64 `json:"sigmas,omitempty"`
}

// EvaluationParams are a stored evaluation's parameters.
type EvaluationParams struct {
	PredRunID    string   `json:"pred_run_id"`
	GTOperations []string `json:"gt_operations"`
	Query        string   `json:"query"`
	CollectionID string   `json:"collection_id"`
	VersionID    string   `json:"version_id"`
	Split        string   `json:"split"`
	IoU          float64  `json:"iou"`
	Confidence   float64  `json:"confidence"`
	TieOrder     string   `json:"tie_order"`
	AreaSource   string   `json:"area_source"`
	VOCAP        string   `json:"voc_ap"`
	IoUType      string   `json:"iou_type"`
	// Sigmas: the OKS sigmas the request gave, by label and point name.
	Sigmas map[string]map[string]float64 `json:"sigmas,omitempty"`
}

// EvaluationTruth is what an evaluation judged against.
type EvaluationTruth struct {
	Operations   []string `json:"operations"`
	Files        int      `json:"files"`
	Frames       int      `json:"frames"`
	EmptyFrames  int      `json:"emptyFrames"` // labelled with no box: predicted boxes there are false positives
	Scope        string   `json:"scope"`       // request, run or lake
	CollectionID string   `json:"collectionId,omitempty"`
	Query        string   `json:"query,omitempty"`
}

// Evaluation is get_evaluation's answer and the evaluation job's result.
// A figure with nothing to measure is -1.
type Evaluation struct {
	Key    string           `json:"key"`
	Params EvaluationParams `json:"params"`
	Truth  EvaluationTruth  `json:"truth"`
	// The choices the figures used (see EvaluationRequest) and how many
	// frames had a COCO image id, human boxes a COCO area.
	TieOrder        string  `json:"tieOrder"`
	TieImageIDs     int     `json:"tieImageIds"`
	AreaSource      string  `json:"areaSource"`
	AnnotationAreas int     `json:"annotationAreas"`
	VOCAP           string  `json:"vocAP"`
	IoUType         string  `json:"iouType"`
	MAP             float64 `json:"mAP"`
	AP50            float64 `json:"AP50"`
	AP75            float64 `json:"AP75"`
	MAPSmall        float64 `json:"mAP_small"`
	MAPMedium       float64 `json:"mAP_medium"`
	MAPLarge        float64 `json:"mAP_large"`
	VOCAP50         float64 `json:"VOC_AP50"`
	AR1             float64 `json:"AR1"`
	AR10            float64 `json:"AR10"`
	AR100           float64 `json:"AR100"`
	ARSmall         float64 `json:"AR_small"`
	ARMedium        float64 `json:"AR_medium"`
	ARLarge         float64 `json:"AR_large"`
	// AR20, AR50 and AR75: keypoints' recall at maxDets 20 (OKS .50:.95,
	// .50, .75); nil for other iou types.
	AR20 *float64 `json:"AR20,omitempty"`
	AR50 *float64 `json:"AR50,omitempty"`
	AR75 *float64 `json:"AR75,omitempty"`
	// Sigmas: the OKS sigmas each keypoints label was judged with.
	Sigmas map[string]LabelSigmas `json:"sigmas,omitempty"`
	// Classification is iou_type class's result (the box figures are -1).
	Classification *Classification         `json:"classification,omitempty"`
	Labels         map[string]LabelMetrics `json:"labels"`
	Confusion      ConfusionMatrix         `json:"confusion"`
	PR             map[string]PRCurve      `json:"pr"`
	Boxes          []BoxOutcome            `json:"boxes,omitempty"` // with GetEvaluationBoxes
}

// LabelSigmas are the OKS sigmas a keypoints label was judged with, by
// point, and where they came from: "declared", "coco" or "request".
type LabelSigmas struct {
	Source    string    `json:"source"`
	Keypoints []string  `json:"keypoints"`
	Sigmas    []float64 `json:"sigmas"`
}

// Classification is a class evaluation: top-1 accuracy, per-class figures
// and a confusion matrix whose last row and column are "none".
type Classification struct {
	Frames    int                     `json:"frames"`
	Truthful  int                     `json:"truthful"`
	Correct   int                     `json:"correct"`
	Accuracy  float64                 `json:"accuracy"`
	Labels    map[string]ClassMetrics `json:"labels"`
	Confusion ConfusionMatrix         `json:"confusion"`
}

// ClassMetrics are one class's figures in a classification.
type ClassMetrics struct {
	Precision float64 `json:"precision"`
	Recall    float64 `json:"recall"`
	F1        float64 `json:"f1"`
	TP        int     `json:"tp"`
	FP        int     `json:"fp"`
	FN        int     `json:"fn"`
	Support   int     `json:"support"`
}

// LabelMetrics are one label's figures.
type LabelMetrics struct {
	AP        float64 `json:"AP"`
	AP50      float64 `json:"AP50"`
	VOCAP50   float64 `json:"VOC_AP50"`
	Precision float64 `json:"precision"`
	Recall    float64 `json:"recall"`
	F1        float64 `json:"f1"`
	TP        int     `json:"tp"`
	FP        int     `json:"fp"`
	FN        int     `json:"fn"`
}

// ConfusionMatrix: rows are human labels, columns predicted, "background" last.
type ConfusionMatrix struct {
	Labels []string `json:"labels"`
	Matrix [][]int  `json:"matrix"`
}

// PRCurve is a label's precision at 101 recall points (COCO, IoU 0.50).
type PRCurve struct {
	Recall    []float64 `json:"recall"`
	Precision []float64 `json:"precision"`
}

// BoxOutcome is one box's outcome in an evaluation.
type BoxOutcome struct {
	ID       string   `json:"id"`
	Source   string   `json:"source"`
	Label    string   `json:"label"`
	Frame    int      `json:"frame"`
	Outcome  string   `json:"outcome"` // tp, fp, fn, ignored
	MatchID  string   `json:"matchId"`
	IoU      *float64 `json:"iou"`
	Mismatch bool     `json:"mismatch"` // the match has another label
}

// EvaluationInfo is a stored evaluation in list_evaluations.
type EvaluationInfo struct {
	Key       string           `json:"key"`
	Params    EvaluationParams `json:"params"`
	Status    string           `json:"status"` // running, completed, failed
	JobID     string           `json:"jobId"`
	Error     string           `json:"error"`
	CreatedBy string           `json:"createdBy"`
	CreatedAt time.Time        `json:"createdAt"`
}

// EvaluationComparison is compare_evaluations' answer.
type EvaluationComparison struct {
	KeyA   string            `json:"key_a"`
	KeyB   string            `json:"key_b"`
	A      EvaluationSummary `json:"a"`
	B      EvaluationSummary `json:"b"`
	Labels []struct {
		Label  string        `json:"label"`
		A      *LabelMetrics `json:"a"`
		B      *LabelMetrics `json:"b"`
		Better string        `json:"better"` // the key with the higher AP; "" on a tie or when undefined
	} `json:"labels"`
}

// EvaluationSummary are an evaluation's overall figures.
type EvaluationSummary struct {
	MAP     float64 `json:"mAP"`
	AP50    float64 `json:"AP50"`
	AP75    float64 `json:"AP75"`
	VOCAP50 float64 `json:"VOC_AP50"`
}

type jobStarted struct {
	JobID string `json:"jobId"`
}

// EvaluateDetections starts an evaluation and returns its job id; the job's
// result is the Evaluation.
func (c *Client) EvaluateDetections(ctx context.Context, r EvaluationRequest) (string, error) {
	var out jobStarted
	err := c.Call(ctx, "evaluate_detections", r, &out)
	return out.JobID, err
}

// GetEvaluation returns a finished evaluation's figures.
func (c *Client) GetEvaluation(ctx context.Context, key string) (Evaluation, error) {
	var out Evaluation
	err := c.Call(ctx, "get_evaluation", map[string]string{"key": key}, &out)
	return out, err
}

// GetEvaluationBoxes returns the figures and the outcome of each box of one file.
func (c *Client) GetEvaluationBoxes(ctx context.Context, key, uniqueName string) (Evaluation, error) {
	var out Evaluation
	err := c.Call(ctx, "get_evaluation", map[string]string{"key": key, "unique_name": uniqueName}, &out)
	return out, err
}

// CompareEvaluations sets two evaluations side by side per label.
func (c *Client) CompareEvaluations(ctx context.Context, keyA, keyB string) (EvaluationComparison, error) {
	var out EvaluationComparison
	err := c.Call(ctx, "compare_evaluations", map[string]string{"key_a": keyA, "key_b": keyB}, &out)
	return out, err
}

// DeleteEvaluation removes an evaluation with its outcomes and file counts.
func (c *Client) DeleteEvaluation(ctx context.Context, key string) error {
	return c.Call(ctx, "delete_evaluation", map[string]string{"key": key}, nil)
}

// ListEvaluations lists the stored evaluations, newest first.
func (c *Client) ListEvaluations(ctx context.Context) ([]EvaluationInfo, error) {
	var out struct {
		Evaluations []EvaluationInfo `json:"evaluations"`
	}
	err := c.Call(ctx, "list_evaluations", map[string]any{}, &out)
	return out.Evaluations, err
}

// FindLabelDisagreements starts the job that finds where run and people
// disagree (IoU 0: the server's default 0.5); decode its result with
// LabelDisagreementsOf.
func (c *Client) FindLabelDisagreements(ctx context.Context, runID, query string, iou float64) (string, error) {
	p := map[string]any{"run_id": runID, "query": query}
	if iou != 0 {
		p["iou"] = iou
	}
	var out jobStarted
	err := c.Call(ctx, "find_label_disagreements", p, &out)
	return out.JobID, err
}

// LabelDisagreements is a disagreement job's result.
type LabelDisagreements struct {
	RunID      string  `json:"runId"`
	Query      string  `json:"query"`
	IoU        float64 `json:"iou"`
	Checked    int     `json:"checkedFiles"`
	WithAny    int     `json:"filesWithDisagreements"`
	Missed     int     `json:"missed"`
	Extra      int     `json:"extra"`
	Mismatched int     `json:"mismatched"`
	Files      []struct {
		UniqueName string            `json:"uniqueName"`
		Count      int               `json:"count"`
		Missed     []DisagreementBox `json:"missed"`
		Extra      []DisagreementBox `json:"extra"`
		Mismatched []struct {
			Human     DisagreementBox `json:"human"`
			Predicted DisagreementBox `json:"predicted"`
			IoU       float64         `json:"iou"`
		} `json:"mismatched"`
	} `json:"files"`
	Truncated bool `json:"truncated"` // more files than listed: query disagreement.count > 0
}

// DisagreementBox is a box in a disagreement.
type DisagreementBox struct {
	ID         string   `json:"id"`
	Label      string   `json:"label"`
	Frame      int      `json:"frame"`
	X          float64  `json:"x"`
	Y          float64  `json:"y"`
	Width      float64  `json:"width"`
	Height     float64  `json:"height"`
	Confidence *float64 `json:"confidence"`
}

// LabelDisagreementsOf decodes a finished disagreement job's result.
func LabelDisagreementsOf(j Job) (LabelDisagreements, error) {
	var out LabelDisagreements
	err := json.Unmarshal(j.Result, &out)
	return out, err
}
