package lake

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os/exec"
	"strconv"
	"strings"

	"github.com/framelake/framelake/errs"
)

// framesPerSelect bounds the frames one ffmpeg run picks by list: each
// decoded frame is tested against every term of the run's expression.
const framesPerSelect = 100

// SampleFrames decodes the frames of video f listed in frames (ascending,
// each once) and hands each to each as a JPEG of the video's size at
// ffmpeg's quality q (2 best .. 31), in order; each's error stops it. Frame
// n is the one VideoFrame answers for n: ffmpeg seeks to the keyframe before
// the first frame wanted and counts frames from there, so a build's sampled
// frame shows what the workspace shows. Evenly spaced frames (every Nth)
// take one ffmpeg run over the span; other lists a run for each
// framesPerSelect of them, each seeking to its first. A frame the video
// does not deliver is an error naming it.
func (l *Lake) SampleFrames(ctx context.Context, f File, frames []int, q int, each func(frame int, jpeg []byte) error) error {
	switch {
	case f.Type != Video || f.FrameRate <= 0:
		return errs.Invalid("uniqueName", "%s is not a video with a frame rate: its frames cannot be told apart", f.UniqueName)
	case len(frames) == 0:
		return nil
	}
	for i, n := range frames {
		if n < 0 || (f.FrameCount > 0 && n >= f.FrameCount) || (i > 0 && n <= frames[i-1]) {
			return errs.Invalid("frames", "frame %d of %s: frames are listed once each, in order, within 0..%d",
				n, f.UniqueName, f.FrameCount-1)
		}
	}
	src, release, err := l.store.Local(ctx, f.Blob, f.Ext)
	if err != nil {
		return err
	}
	defer release()
	if step, ok := evenStep(frames); ok {
		return sampleRun(ctx, f, src, frames, fmt.Sprintf("not(mod(n,%d))", step), q, each)
	}
	for i := 0; i < len(frames); i += framesPerSelect {
		run := frames[i:min(i+framesPerSelect, len(frames))]
		if err := sampleRun(ctx, f, src, run, selectList(run), q, each); err != nil {
			return err
		}
	}
	return nil
}

// evenStep is the step of frames when they are evenly spaced.
func evenStep(frames []int) (int, bool) {
	if len(frames) == 1 {
		return 1, true
	}
	step := frames[1] - frames[0]
	for i := 2; i < len(frames); i++ {
		if frames[i]-frames[i-1] != step {
			return 0, false
		}
	}
	return step, true
}

// selectList is ffmpeg's select expression for run's frames, counted from
// run[0] (the frame the run's seek lands on is n 0): runs of consecutive
// frames as one between().
func selectList(run []int) string {
	var terms []string
	for i := 0; i < len(run); {
		j := i
		for j+1 < len(run) && run[j+1] == run[j]+1 {
			j++
		}
		a, b := run[i]-run[0], run[j]-run[0]
		if a == b {
			terms = append(terms, fmt.Sprintf("eq(n,%d)", a))
		} else {
			terms = append(terms, fmt.Sprintf("between(n,%d,%d)", a, b))
		}
		i = j + 1
	}
	return strings.Join(terms, "+")
}

// sampleRun is one ffmpeg run from frames[0], picking the frames expr
// selects (n counted from frames[0]) and stopping after len(frames).
func sampleRun(ctx context.Context, f File, src string, frames []int, expr string, q int, each func(int, []byte) error) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	// As decodeFrames: half a frame before the first, so the first frame
	// out is the one at frames[0]/rate whatever the rounding of either.
	at := max(0, (float64(frames[0])-0.5)/f.FrameRate)
	cmd := exec.CommandContext(ctx, "ffmpeg", "-v", "error", "-ss", strconv.FormatFloat(at, 'f', 6, 64), "-i", src,
		"-vf", "select='"+expr+"'", "-fps_mode", "passthrough", "-frames:v", strconv.Itoa(len(frames)),
		"-f", "image2pipe", "-c:v", "mjpeg", "-q:v", strconv.Itoa(min(31, max(2, q))), "pipe:1")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		return err
	}
	if err := cmd.Start(); err != nil {
		return err
	}
	got := 0
	var cbErr error
	for r := bufio.NewReaderSize(out, 1<<20); got < len(frames); got++ {
		jpeg, err := nextJPEG(r)
		if err != nil {
			break
		}
		if cbErr = each(frames[got], jpeg); cbErr != nil {
			break
		}
	}
	if cbErr != nil {
		cancel()
		_ = cmd.Wait()
		return cbErr
	}
	werr := cmd.Wait()
	if got < len(frames) {
		why := strings.TrimSpace(stderr.String())
		if werr != nil {
			why = fmt.Sprintf("%v %s", werr, why)
		}
		return errs.New(errs.UnsupportedMedia, "", "frame %d of %s did not decode (the video holds fewer frames than its %d?) %s",
			frames[got], f.UniqueName, f.FrameCount, why)
	}
	return nil
}
