package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
	"text/tabwriter"

	"github.com/framelake/framelake/client"
)

const evalUse = `usage: framelake eval run KEY --run RUN_ID [--gt PROJECT,...] [--query Q] [--collection ID]
                         [--version VERSION_ID [--split train|validation|test]] [--iou 0.5] [--confidence 0] [--no-wait]
       framelake eval show KEY
       framelake eval compare KEY_A KEY_B
       framelake eval list
each with --url URL [--key K --secret S] [--json]`

// cmdEval runs, shows and compares named evaluations on a server.
func cmdEval(ctx context.Context, args []string) error {
	if len(args) == 0 {
		return errors.New(evalUse)
	}
	if args[0] == "-h" || args[0] == "--help" {
		fmt.Fprintln(os.Stderr, evalUse)
		return flag.ErrHelp
	}
	sub := map[string]func(context.Context, []string) error{"run": evalRun, "show": evalShow, "compare": evalCompare,
		"list": evalList}[args[0]]
	if sub == nil {
		return fmt.Errorf("unknown eval command %q\n%s", args[0], evalUse)
	}
	return sub(ctx, args[1:])
}

// evalFlags are the flags every eval command has.
func evalFlags(name string) (*flag.FlagSet, serverFlags, *bool) {
	fs := flag.NewFlagSet("eval "+name, flag.ContinueOnError)
	srv := addServerFlags(fs)
	asJSON := fs.Bool("json", false, "print the server's answer as JSON")
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), evalUse)
		fs.PrintDefaults()
	}
	return fs, srv, asJSON
}

func evalRun(ctx context.Context, args []string) error {
	fs, srv, asJSON := evalFlags("run")
	var r client.EvaluationRequest
	fs.StringVar(&r.PredRunID, "run", "", "the model run whose boxes are evaluated (required)")
	gt := fs.String("gt", "", "annotation project ids (comma-separated) whose human boxes are the truth; default all human boxes")
	fs.StringVar(&r.Query, "query", "", "only the files this query selects")
	fs.StringVar(&r.CollectionID, "collection", "", "only the files of this collection (default: the lake's images)")
	fs.StringVar(&r.VersionID, "version", "", "only the files of this dataset version (its current build)")
	fs.StringVar(&r.Split, "split", "", "with --version: only its train, validation or test split")
	fs.Float64Var(&r.IoU, "iou", 0.5, "IoU at which boxes match for the per-box outcomes and precision/recall")
	fs.Float64Var(&r.Confidence, "confidence", 0, "predicted boxes under this score get no outcome (they still rank for AP)")
	fs.StringVar(&r.IoUType, "iou-type", "bbox", "what is compared: bbox, segm (masks), keypoints (OKS) or class (whole-frame labels)")
	noWait := fs.Bool("no-wait", false, "print the job id and return instead of waiting for the figures")
	if err := parse(fs, args, 1); err != nil {
		return err
	}
	r.Key = fs.Arg(0)
	if *gt != "" {
		r.GTOperations = strings.Split(*gt, ",")
	}
	c, err := srv.client()
	if err != nil {
		return err
	}
	jobID, err := c.EvaluateDetections(ctx, r)
	if err != nil {
		return err
	}
	if *noWait {
		return printJSONOr(*asJSON, map[string]string{"jobId": jobID}, func(w io.Writer) { fmt.Fprintln(w, jobID) })
	}
	j, err := c.WaitJob(ctx, jobID)
	if err != nil {
		return err
	}
	if j.Status != "completed" {
		return fmt.Errorf("evaluation job %s %s: %s", jobID, j.Status, j.Error)
	}
	var ev client.Evaluation
	if err := json.Unmarshal(j.Result, &ev); err != nil {
		return err
	}
	return printJSONOr(*asJSON, ev, func(w io.Writer) { printEvaluation(w, ev) })
}

func evalShow(ctx context.Context, args []string) error {
	fs, srv, asJSON := evalFlags("show")
	if err := parse(fs, args, 1); err != nil {
		return err
	}
	c, err := srv.client()
	if err != nil {
		return err
	}
	ev, err := c.GetEvaluation(ctx, fs.Arg(0))
	if err != nil {
		return err
	}
	return printJSONOr(*asJSON, ev, func(w io.Writer) { printEvaluation(w, ev) })
}

func evalCompare(ctx context.Context, args []string) error {
	fs, srv, asJSON := evalFlags("compare")
	if err := parse(fs, args, 2); err != nil {
		return err
	}
	c, err := srv.client()
	if err != nil {
		return err
	}
	cmp, err := c.CompareEvaluations(ctx, fs.Arg(0), fs.Arg(1))
	if err != nil {
		return err
	}
	return printJSONOr(*asJSON, cmp, func(w io.Writer) { printComparison(w, cmp) })
}

func evalList(ctx context.Context, args []string) error {
	fs, srv, asJSON := evalFlags("list")
	if err := parse(fs, args, 0); err != nil {
		return err
	}
	c, err := srv.client()
	if err != nil {
		return err
	}
	list, err := c.ListEvaluations(ctx)
	if err != nil {
		return err
	}
	return printJSONOr(*asJSON, list, func(w io.Writer) {
		tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "KEY\tSTATUS\tRUN\tIOU\tCREATED")
		for _, e := range list {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%g\t%s\n", e.Key, e.Status, e.Params.PredRunID, e.Params.IoU,
				e.CreatedAt.Format("2006-01-02 15:04"))
		}
		tw.Flush()
	})
}

// printJSONOr prints v as JSON, or as text by text.
func printJSONOr(asJSON bool, v any, text func(io.Writer)) error {
	if asJSON {
		return json.NewEncoder(os.Stdout).Encode(v)
	}
	text(os.Stdout)
	return nil
}

// fig prints a figure, "-" where nothing was measured (-1).
func fig(v float64) string {
	if v < 0 {
		return "-"
	}
	return fmt.Sprintf("%.3f", v)
}

func printEvaluation(w io.Writer, ev client.Evaluation) {
	over := ""
	if p := ev.Params; p.VersionID != "" {
		over = " over version " + p.VersionID
		if p.Split != "" {
			over += " (" + p.Split + ")"
		}
	}
	if ev.IoUType != "" && ev.IoUType != "bbox" {
		over += ", comparing " + ev.IoUType
	}
	fmt.Fprintf(w, "evaluation %s: run %s at IoU %g%s\n", ev.Key, ev.Params.PredRunID, ev.Params.IoU, over)
	if c := ev.Classification; c != nil {
		printClassification(w, *c)
		return
	}
	if ev.AR20 != nil && ev.AR50 != nil && ev.AR75 != nil { // keypoints: COCO's ten keypoint figures
		fmt.Fprintf(w, "AP %s  AP50 %s  AP75 %s  APm %s  APl %s\n", fig(ev.MAP), fig(ev.AP50), fig(ev.AP75),
			fig(ev.MAPMedium), fig(ev.MAPLarge))
		fmt.Fprintf(w, "AR %s  AR50 %s  AR75 %s  ARm %s  ARl %s\n", fig(*ev.AR20), fig(*ev.AR50), fig(*ev.AR75),
			fig(ev.ARMedium), fig(ev.ARLarge))
	} else { // pycocotools' twelve figures in its order, then VOC's.
		fmt.Fprintf(w, "AP %s  AP50 %s  AP75 %s  APs %s  APm %s  APl %s\n", fig(ev.MAP), fig(ev.AP50), fig(ev.AP75),
			fig(ev.MAPSmall), fig(ev.MAPMedium), fig(ev.MAPLarge))
		fmt.Fprintf(w, "AR1 %s  AR10 %s  AR100 %s  ARs %s  ARm %s  ARl %s\n", fig(ev.AR1), fig(ev.AR10), fig(ev.AR100),
			fig(ev.ARSmall), fig(ev.ARMedium), fig(ev.ARLarge))
	}
	fmt.Fprintf(w, "VOC AP50 %s (%s)  areas %s  ties by %s\n", fig(ev.VOCAP50), ev.VOCAP, ev.AreaSource, ev.TieOrder)
	t := ev.Truth
	fmt.Fprintf(w, "truth: %s over %d files (%d frames, %d labelled empty), scope %s\n",
		strings.Join(t.Operations, ", "), t.Files, t.Frames, t.EmptyFrames, t.Scope)
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "LABEL\tAP\tAP50\tVOC_AP50\tPRECISION\tRECALL\tF1\tTP\tFP\tFN")
	for _, l := range sortedKeys(ev.Labels) {
		m := ev.Labels[l]
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%.3f\t%.3f\t%.3f\t%d\t%d\t%d\n", l, fig(m.AP), fig(m.AP50), fig(m.VOCAP50),
			m.Precision, m.Recall, m.F1, m.TP, m.FP, m.FN)
	}
	tw.Flush()
}

func printComparison(w io.Writer, c client.EvaluationComparison) {
	fmt.Fprintf(w, "mAP %s %s vs %s %s\n", c.KeyA, fig(c.A.MAP), c.KeyB, fig(c.B.MAP))
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintf(tw, "LABEL\tAP %s\tAP %s\tF1 %s\tF1 %s\tBETTER\n", c.KeyA, c.KeyB, c.KeyA, c.KeyB)
	side := func(m *client.LabelMetrics) (string, string) {
		if m == nil {
			return "-", "-"
		}
		return fig(m.AP), fmt.Sprintf("%.3f", m.F1)
	}
	for _, l := range c.Labels {
		apA, f1A := side(l.A)
		apB, f1B := side(l.B)
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", l.Label, apA, apB, f1A, f1B, l.Better)
	}
	tw.Flush()
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// printClassification prints a class evaluation: accuracy and each class.
func printClassification(w io.Writer, c client.Classification) {
	fmt.Fprintf(w, "accuracy %s (%d of %d frames with a true class; %d judged)\n", fig(c.Accuracy), c.Correct, c.Truthful, c.Frames)
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "CLASS\tPRECISION\tRECALL\tF1\tTP\tFP\tFN\tSUPPORT")
	for _, l := range sortedKeys(c.Labels) {
		m := c.Labels[l]
		fmt.Fprintf(tw, "%s\t%.3f\t%.3f\t%.3f\t%d\t%d\t%d\t%d\n", l, m.Precision, m.Recall, m.F1, m.TP, m.FP, m.FN, m.Support)
	}
	tw.Flush()
}
