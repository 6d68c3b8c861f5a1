package main_test

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// BenchmarkAssistUI times issue 33's brush and box-to-mask figures in
// headless Chromium against the real binary (web/ui/test/assistbench.mjs):
// a brush stroke painted across a 3840x2160 frame, 120 pointer moves, with
// the time between animation frames while painting (p50, p99), the editor's
// own redraw time per frame, the renderer's CPU for the stroke, and the
// stroke's save (mouse-up to the PUT answered, of which the read-back and
// RLE encoding is encode-ms); the intelligent scissors on the same 4K frame,
// 120 cursor moves after an anchor: the pointermove's own main-thread work
// per move (p99), the redraw's, the time between animation frames (p99),
// the renderer's task time per move and the main thread's tasks over 50 ms
// (with REF_DIST, a build of the app timed first as a reference:
// scissors-ref-*); and box to mask on a 1920x1080 frame with the shipped default
// model, mouse-up to the mask drawn, median of 5 boxes. Run it with
// -benchtime=1x.
func BenchmarkAssistUI(b *testing.B) {
	node, ui := needBrowser(b)
	b.Setenv("FRAMELAKE_MODELS_DIR", builtModelsDirB(b))
	s := startUIServer(b)
	expect, _ := json.Marshal(map[string]any{"brush": s.assistTask(b, 3840, 2160), "segment": s.assistTask(b, 1920, 1080)})
	for b.Loop() {
		cmd := exec.Command(node, "test/assistbench.mjs")
		cmd.Dir = ui
		cmd.Env = append(os.Environ(), "BASE="+s.base, "KEY="+s.admin["key"], "SECRET="+s.admin["secret"], "EXPECT="+string(expect))
		var stderr strings.Builder
		cmd.Stderr = &stderr
		res, err := cmd.Output()
		if err != nil {
			b.Fatalf("assistbench.mjs: %v\n%s%s", err, res, stderr.String())
		}
		var fig struct {
			Brush struct {
				FrameP50, FrameP99, DrawP50, DrawP99, DrawMax, CPUMs, SaveMs, EncodeMs float64
				Frames                                                                 int
			}
			Scissors, ScissorsRef *scissorsFig
			Segment               struct{ ShownMs, ServerMs []float64 }
		}
		if err := json.Unmarshal(res, &fig); err != nil {
			b.Fatalf("assistbench.mjs printed %q: %v", res, err)
		}
		b.Logf("%s", res)
		b.ReportMetric(fig.Brush.FrameP50, "paint-frame-p50-ms")
		b.ReportMetric(fig.Brush.FrameP99, "paint-frame-p99-ms")
		b.ReportMetric(fig.Brush.DrawP99, "paint-redraw-p99-ms")
		b.ReportMetric(fig.Brush.CPUMs/float64(max(1, fig.Brush.Frames)), "paint-renderer-cpu-ms/frame")
		b.ReportMetric(fig.Brush.SaveMs, "stroke-save-ms")
		b.ReportMetric(fig.Brush.EncodeMs, "stroke-encode-ms")
		fig.Scissors.report(b, "scissors-")
		fig.ScissorsRef.report(b, "scissors-ref-")
		if len(fig.Segment.ShownMs) > 0 { // ROUNDS=0 times no box
			b.ReportMetric(midMs(fig.Segment.ShownMs), "box-to-mask-shown-ms")
			b.ReportMetric(midMs(fig.Segment.ServerMs), "box-to-mask-server-ms")
		}
	}
}

// scissorsFig is the scissors' figures over 120 cursor moves (assistbench.mjs).
type scissorsFig struct {
	WireP99, DrawP99, FrameP99, TaskMsPerMove, LongTaskMsPerMove, FirstMapMs float64
	LongTasks                                                                int
}

func (f *scissorsFig) report(b *testing.B, prefix string) {
	if f == nil {
		return
	}
	b.ReportMetric(f.WireP99, prefix+"move-p99-ms")
	b.ReportMetric(f.DrawP99, prefix+"redraw-p99-ms")
	b.ReportMetric(f.FrameP99, prefix+"frame-p99-ms")
	b.ReportMetric(f.TaskMsPerMove, prefix+"renderer-task-ms/move")
	b.ReportMetric(float64(f.LongTasks), prefix+"long-tasks")
	b.ReportMetric(f.LongTaskMsPerMove, prefix+"long-task-ms/move")
	b.ReportMetric(f.FirstMapMs, prefix+"map-ms")
}

// builtModelsDirB is builtModelsDir for a benchmark: the built default
// models, the segmentation one among them.
func builtModelsDirB(b *testing.B) string {
	dir := os.Getenv("FRAMELAKE_MODELS_DIR")
	if dir == "" {
		dir, _ = filepath.Abs(filepath.Join("..", "..", "build", "models"))
	}
	if _, err := os.Stat(filepath.Join(dir, "segmentation")); err != nil {
		b.Fatalf("the system default models are not built in %s: run make models", dir)
	}
	return dir
}
