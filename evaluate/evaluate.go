// Package evaluate measures a model run's boxes against people's: named
// evaluations with COCO and VOC figures, per-box outcomes and per-file
// counts, and label disagreements.
//
// Protocol. Each frame (an image, or a frame of a video) that has human
// boxes, or that the truth labelled empty (lake.BoxPair.Labelled: a COCO
// image with no annotation, an empty label file), is evaluated: its human
// boxes against the run's predicted boxes on it; on a frame labelled empty
// every predicted box is a false positive, as in pycocotools. A predicted
// box on a frame nobody labelled is not judged. With no truth and no files
// named, the files are those the run covered (RunScopes). The COCO
// figures follow pycocotools' COCOeval for boxes: per label and frame,
// predicted boxes best score first (ties across frames by TieImageID, the
// COCO image id, or TieFile; never by the order files were stored),
// at most 100 per frame and label; each takes the free human box of its
// label with the highest IoU at or above the threshold (ties to the later
// box), one predicted box per human box; human boxes attributed iscrowd are
// crowd regions (IoU over the predicted box's area, matched any number of
// times, neither counted nor counting). Thresholds .50:.05:.95; precision
// made monotone and read at 101 recall points; area ranges small (< 32²
// pixels), medium, large (> 96²) by the human box's area (AreaAnnotation:
// COCO's area where the import kept it, else w×h; AreaBox: w×h), an
// unmatched predicted box (area w×h) outside the range ignored; maxDets 1,
// 10, 100 for recall (AR1, AR10, AR100; AR_small|medium|large at 100). mAP averages
// over thresholds, recall points and labels with human boxes; a figure with
// nothing to average is -1, as there. VOC_AP50 is the VOC devkit's: each
// predicted box goes to the human box it overlaps most, a true positive at
// IoU >= 0.5 if that box is still free, AP the area under the precision
// curve made monotone (all-point interpolation; VOC07: 11 points).
//
// Outcomes. At the evaluation's own IoU (default 0.5) the same greedy
// matching gives every box an outcome (tp, fp, fn; ignored for crowd boxes)
// with the box it matched and the IoU; then leftover predicted boxes take
// leftover human boxes of another label (label mismatches: still an fp and
// an fn, but off the confusion matrix's diagonal instead of in its
// background row and column). Predicted boxes under the evaluation's
// confidence (default 0: all) count for AP only and get no outcome.
// precision, recall, F1 and tp, fp, fn per label come from the outcomes.
// Each evaluated file gets its counts in the lake (eval.<key>.tp|fp|fn).
//
// Other shapes. iou_type segm compares masks (segm.go); keypoints compares
// keypoints by OKS with pycocotools' keypoints protocol (maxDets 20, areas
// all, medium, large; keypoints.go); class judges whole-frame class labels
// by their top prediction (classify.go). docs/shapes.md names where each
// differs from pycocotools.
//
// An evaluation runs as a job that reads boxes file by file in pages, so
// memory holds a few bytes per predicted box, not the boxes.
package evaluate

import (
	"context"
	"embed"
	"encoding/json"
	"io/fs"
	"log/slog"
	"time"

	"github.com/framelake/framelake/internal/job"
	"github.com/framelake/framelake/internal/sqlitedb"
	"github.com/framelake/framelake/lake"
	"github.com/framelake/framelake/lake/shape"
)

//go:embed migrations/*.sql
var migrations embed.FS

// Migrations are the package's numbered schema files, applied after the
// lake's with db.Migrate(ctx, "evaluate", evaluate.Migrations).
var Migrations, _ = fs.Sub(migrations, "migrations")

// Job types.
const (
	JobType             = "evaluation"
	DisagreementJobType = "label_disagreements"
)

// Defaults of a request.
const (
	DefaultIoU = 0.5
	// MaxListedFiles bounds the files a disagreement job's result lists; the
	// rest are found with the query disagreement.count > 0.
	MaxListedFiles = 1000
)

// Request asks for an evaluation.
type Request struct {
	Key          string
	PredRunID    string   // the model run whose machine boxes are judged
	GTOperations []string // annotation projects whose human boxes are the truth; all human boxes when empty
	Query        string   // narrows the files (the lake's query language)
	CollectionID string   // the files of this collection; all images when empty
	VersionID    string   // the files of this dataset version (its current build)
	Split        string   // of the version: train, validation or test; "" for all
	IoU          float64  // outcome threshold; 0 means DefaultIoU
	Confidence   float64  // predicted boxes under it get no outcome
	TieOrder     string   // how tied scores are ordered: TieImageID (default) or TieFile
	AreaSource   string   // what places a human box in an area range: AreaAnnotation (default) or AreaBox
	VOCAP        string   // VOC_AP50's interpolation: VOCAllPoints (default) or VOC07
	IoUType      string   // what is compared: IoUBox (default), IoUSegm, IoUKeypoints or IoUClass
	// Sigmas are OKS sigmas by label and point name, for keypoints labels
	// that declare none and are not COCO's person (iou_type keypoints).
	Sigmas    map[string]map[string]float64
	CreatedBy string
}

// Named choices of an evaluation; the first of each is pycocotools' (or, for
// VOC, the devkit's since 2010) and the default.
const (
	// TieImageID orders predicted boxes of equal score by their frame's
	// COCO image id, as pycocotools does, where the truth's import had one
	// (frames without follow, in TieFile's order), then by rank in the frame.
	TieImageID = "image_id"
	// TieFile orders them by file name, the bytes' SHA-256, frame number,
	// then rank in the frame, whatever the ids.
	TieFile = "file"
	// AreaAnnotation: a human box's area is COCO's area of the annotation
	// where its import kept one, else width × height; predicted boxes use
	// width × height (pycocotools' loadRes sets area so for boxes).
	AreaAnnotation = "annotation"
	// AreaBox: width × height for every box.
	AreaBox = "box"
	// VOCAllPoints: the area under the monotone precision curve (VOC 2010 on).
	VOCAllPoints = "all_points"
	// VOC07: VOC 2007's mean of the precision at recall 0, 0.1, ..., 1.
	VOC07 = "voc07"
	// IoUBox compares boxes, as pycocotools' iouType "bbox".
	IoUBox = "bbox"
	// IoUSegm compares masks, as pycocotools' iouType "segm": polygons and
	// masks as their pixels (segm.go), and areas are the masks' for
	// predictions and COCO's (else the mask's) for the truth.
	IoUSegm = "segm"
	// IoUKeypoints compares keypoints by OKS, as pycocotools' iouType
	// "keypoints" (keypoints.go): maxDets 20, area ranges all, medium, large.
	IoUKeypoints = "keypoints"
	// IoUClass judges class labels of whole frames: accuracy of the top
	// prediction, per-class precision, recall, F1 and a confusion matrix
	// (classify.go). No IoU is involved; the name keeps one request field.
	IoUClass = "class"
)

// Params are a stored evaluation's parameters, as the wire names them.
type Params struct {
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
	// Sigmas: OKS sigmas the request gave, by label and point name.
	Sigmas map[string]map[string]float64 `json:"sigmas,omitempty"`
}

// withDefaults fills the named choices an older stored evaluation lacks.
func (p Params) withDefaults() Params {
	p.TieOrder = cmpOr(p.TieOrder, TieImageID)
	p.AreaSource = cmpOr(p.AreaSource, AreaAnnotation)
	p.VOCAP = cmpOr(p.VOCAP, VOCAllPoints)
	p.IoUType = cmpOr(p.IoUType, IoUBox)
	return p
}

func cmpOr(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// Metrics are an evaluation's figures (see the package comment).
type Metrics struct {
	MAP       float64 `json:"mAP"`
	AP50      float64 `json:"AP50"`
	AP75      float64 `json:"AP75"`
	MAPSmall  float64 `json:"mAP_small"`
	MAPMedium float64 `json:"mAP_medium"`
	MAPLarge  float64 `json:"mAP_large"`
	VOCAP50   float64 `json:"VOC_AP50"`
	AR1       float64 `json:"AR1"`
	AR10      float64 `json:"AR10"`
	AR100     float64 `json:"AR100"`
	// ARSmall, ARMedium and ARLarge are AR100 over human boxes of each
	// area range: pycocotools' last three figures.
	ARSmall  float64 `json:"AR_small"`
	ARMedium float64 `json:"AR_medium"`
	ARLarge  float64 `json:"AR_large"`
	// AR20, AR50 and AR75 are keypoints' recall figures at maxDets 20
	// (over OKS .50:.95, at .50, at .75); absent for other iou types.
	AR20      *float64               `json:"AR20,omitempty"`
	AR50      *float64               `json:"AR50,omitempty"`
	AR75      *float64               `json:"AR75,omitempty"`
	Labels    map[string]LabelResult `json:"labels"`
	Confusion Confusion              `json:"confusion"`
	// PR is each label's COCO precision at IoU 0.50 at the 101 recall points.
	PR map[string]Curve `json:"pr"`
}

// Result is a finished evaluation: get_evaluation's answer and its job's result.
type Result struct {
	Key    string `json:"key"`
	Params Params `json:"params"`
	// Truth says what the run was judged against.
	Truth Truth `json:"truth"`
	// TieOrder, AreaSource and VOCAP are the choices the figures used.
	TieOrder string `json:"tieOrder"`
	// TieImageIDs counts the frames whose COCO image id ordered ties.
	TieImageIDs int    `json:"tieImageIds"`
	AreaSource  string `json:"areaSource"`
	// AnnotationAreas counts the human boxes whose COCO area placed them in
	// an area range (with areaSource "annotation"); the rest used w × h.
	AnnotationAreas int    `json:"annotationAreas"`
	VOCAP           string `json:"vocAP"`
	// IoUType is what was compared: "bbox", "segm", "keypoints" or "class".
	IoUType string `json:"iouType"`
	// Sigmas are the OKS sigmas each keypoints label was judged with, by
	// point name, and where they came from (iou_type keypoints).
	Sigmas map[string]LabelSigmas `json:"sigmas,omitempty"`
	// Classification is iou_type class's result; the box figures are then
	// Undefined and empty.
	Classification *Classification `json:"classification,omitempty"`
	Metrics
}

// Truth is what an evaluation judged against.
type Truth struct {
	// Operations are the annotation projects and imports whose human boxes
	// or labelled frames the judged files have (gt_operations when given).
	Operations []string `json:"operations"`
	Files      int      `json:"files"`  // files judged
	Frames     int      `json:"frames"` // frames judged
	// EmptyFrames are judged frames labelled with no box: every predicted
	// box there is a false positive.
	EmptyFrames int `json:"emptyFrames"`
	// Scope says which files were judged: "request" (its collection_id,
	// query or version_id), "run" (with none of those and no gt_operations:
	// the files of the run's collection and query), or "lake" (the lake's
	// images, the run having covered them all).
	Scope        string `json:"scope"`
	CollectionID string `json:"collectionId,omitempty"` // the run's, with scope "run"
	Query        string `json:"query,omitempty"`
}

// LabelResult is one label's figures.
type LabelResult struct {
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

// Confusion counts human labels (rows) against predicted labels (columns),
// Background last: a missed human box is in its label's background column,
// a spurious predicted box in the background row.
type Confusion struct {
	Labels []string `json:"labels"`
	Matrix [][]int  `json:"matrix"`
}

// Curve is a precision-recall curve.
type Curve struct {
	Recall    []float64 `json:"recall"`
	Precision []float64 `json:"precision"`
}

// Status of a stored evaluation.
type Status string

const (
	Running   Status = "running"
	Completed Status = "completed"
	Failed    Status = "failed"
)

// Evaluation is a stored evaluation as list_evaluations shows it.
type Evaluation struct {
	Key       string    `json:"key"`
	Params    Params    `json:"params"`
	Status    Status    `json:"status"`
	JobID     string    `json:"jobId"`
	Error     string    `json:"error,omitempty"`
	CreatedBy string    `json:"createdBy,omitempty"`
	CreatedAt time.Time `json:"createdAt"`
	// Result is kept out of listings; Get returns it.
	result json.RawMessage
}

// BoxOutcome is one box's outcome in an evaluation.
type BoxOutcome struct {
	ID      string   `json:"id"`
	Source  string   `json:"source"` // human or machine
	Label   string   `json:"label"`
	Frame   int      `json:"frame"`
	Outcome string   `json:"outcome"`           // tp, fp, fn, ignored
	MatchID string   `json:"matchId,omitempty"` // the box it was paired with
	IoU     *float64 `json:"iou,omitempty"`
	// Mismatch is set when the match has another label.
	Mismatch bool `json:"mismatch,omitempty"`

	seq int64
}

// Comparison sets two evaluations side by side, per label.
type Comparison struct {
	KeyA   string            `json:"key_a"`
	KeyB   string            `json:"key_b"`
	A      Summary           `json:"a"`
	B      Summary           `json:"b"`
	Labels []LabelComparison `json:"labels"`
}

// Summary is an evaluation's overall figures.
type Summary struct {
	MAP     float64 `json:"mAP"`
	AP50    float64 `json:"AP50"`
	AP75    float64 `json:"AP75"`
	VOCAP50 float64 `json:"VOC_AP50"`
}

// LabelComparison is one label in both evaluations; a side is null when the
// label is not in it. Better names the key with the higher AP ("" on a tie
// or when either is undefined).
type LabelComparison struct {
	Label  string       `json:"label"`
	A      *LabelResult `json:"a"`
	B      *LabelResult `json:"b"`
	Better string       `json:"better"`
}

// OperationSource says whether an id is one of its operations (analysis
// runs, annotation projects), so an id with no boxes yet is still known.
type OperationSource interface {
	HasOperation(ctx context.Context, operation string) (bool, error)
}

// RunScopes knows which files a model run covered: the collection and query
// it was started with ("" for the lake's images, no query). An
// OperationSource that is one scopes evaluations that name no files and no
// truth to the files their run saw.
type RunScopes interface {
	RunScope(ctx context.Context, runID string) (collectionID, query string, err error)
}

// VersionFiles knows the files of a dataset version's splits.
type VersionFiles interface {
	// SplitFiles returns the lake keys of a built version's files in split
	// ("" for all); errors name the field (version_id, split) at fault.
	SplitFiles(ctx context.Context, versionID, split string) ([]int64, error)
}

// Options tune the service.
type Options struct {
	Logger *slog.Logger
	// Versions resolves version_id and split; without it they are refused.
	Versions VersionFiles
	// PageFiles is how many files are read per page of boxes; default 1000.
	PageFiles int
	// Skeletons finds a keypoints label's declaration: its point names and
	// OKS sigmas (nil: no label declares one).
	Skeletons shape.SkeletonOf
}

// Service runs and keeps evaluations. It is safe for concurrent use.
type Service struct {
	db   *sqlitedb.DB
	lake *lake.Lake
	jobs *job.Queue
	runs OperationSource
	opt  Options
}

// New returns the service and registers its job handlers on jobs. runs
// knows model run ids (nil: only ids that have boxes are known).
func New(db *sqlitedb.DB, l *lake.Lake, jobs *job.Queue, runs OperationSource, opt Options) *Service {
	if opt.Logger == nil {
		opt.Logger = slog.Default()
	}
	if opt.PageFiles <= 0 {
		opt.PageFiles = 1000
	}
	s := &Service{db: db, lake: l, jobs: jobs, runs: runs, opt: opt}
	jobs.Handle(JobType, s.runJob)
	jobs.Handle(DisagreementJobType, s.disagreementJob)
	return s
}
