package lake

import (
	"bufio"
	"bytes"
	"container/list"
	"context"
	"fmt"
	"io"
	"os/exec"
	"strconv"
	"strings"
	"sync"

	"github.com/framelake/framelake/errs"
)

// Frames a decode run makes past the one asked for, so stepping forward
// with "." is a read (issue 34): half a second at 30 fps.
const framesAhead = 15

// DefaultFrameCacheBytes bounds the decoded frames kept for the workspace.
const DefaultFrameCacheBytes = 128 << 20

// MaxFrameSize is the largest side a frame is asked at; 0 asks for the
// video's own size.
const MaxFrameSize = 4096

type frameKey struct {
	blob        string
	frame, size int
}

// frameEntry is a decoded frame, or one a running decode will deliver.
type frameEntry struct {
	ready chan struct{} // closed when jpeg or err is set
	jpeg  []byte
	err   error
	elem  *list.Element // in the LRU once ready
}

// frameCache holds decoded frames, the least recently used dropped first
// past limit bytes; frames a decode run is making are there as pending
// entries, so a request for one waits for it instead of starting ffmpeg.
type frameCache struct {
	mu    sync.Mutex
	m     map[frameKey]*frameEntry
	lru   *list.List // of frameKey, most recent at the front
	bytes int64
	limit int64
}

func newFrameCache(limit int64) *frameCache {
	if limit <= 0 {
		limit = DefaultFrameCacheBytes
	}
	return &frameCache{m: map[frameKey]*frameEntry{}, lru: list.New(), limit: limit}
}

// VideoFrame is frame n of video f (0 first) as a JPEG whose longer side is
// at most size pixels (0: the video's size). The frame is the one at
// n/frameRate: ffmpeg seeks to the keyframe before it and decodes on to it,
// then keeps decoding the next frames into the cache.
func (l *Lake) VideoFrame(ctx context.Context, f File, n, size int) ([]byte, error) {
	switch {
	case f.Type != Video:
		return nil, errs.Invalid("uniqueName", "%s is a %s, not a video", f.UniqueName, f.Type)
	case n < 0 || (f.FrameCount > 0 && n >= f.FrameCount):
		return nil, errs.Invalid("frame", "frame %d is outside the video's frames 0..%d", n, f.FrameCount-1)
	case size < 0 || size > MaxFrameSize:
		return nil, errs.Invalid("size", "size must be 0 (the video's) to %d, got %d", MaxFrameSize, size)
	case f.FrameRate <= 0:
		return nil, errs.New(errs.FailedPrecondition, "", "%s has no frame rate: its frames cannot be told apart", f.UniqueName)
	}
	c := l.frames
	k := frameKey{blob: f.Blob, frame: n, size: size}
	c.mu.Lock()
	e, ok := c.m[k]
	if !ok {
		e = c.pending(k, f.FrameCount)
	}
	c.mu.Unlock()
	if !ok {
		go l.decodeRun(f, k)
	}
	select {
	case <-e.ready:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	if e.err != nil {
		return nil, e.err
	}
	c.mu.Lock()
	if e.elem != nil {
		c.lru.MoveToFront(e.elem)
	}
	c.mu.Unlock()
	return e.jpeg, nil
}

// pending registers frame k and the frames after it that one run decodes
// and nobody holds yet; c.mu is held. It returns k's entry.
func (c *frameCache) pending(k frameKey, count int) *frameEntry {
	var first *frameEntry
	for i := range framesAhead + 1 {
		kk := k
		kk.frame += i
		if count > 0 && kk.frame >= count {
			break
		}
		if _, ok := c.m[kk]; ok {
			if i == 0 {
				continue
			}
			break // a run (or the cache) has the rest
		}
		e := &frameEntry{ready: make(chan struct{})}
		c.m[kk] = e
		if i == 0 {
			first = e
		}
	}
	return first
}

// decodeRun runs ffmpeg from frame k on, filling the pending entries in
// order; what it does not deliver fails, so no request waits forever.
// It runs apart from the request that started it (whose context may end)
// because other requests wait on the same frames.
func (l *Lake) decodeRun(f File, k frameKey) {
	ctx := context.Background()
	c := l.frames
	deliver := func(frame int, jpeg []byte, err error) bool {
		kk := k
		kk.frame = frame
		c.mu.Lock()
		defer c.mu.Unlock()
		e, ok := c.m[kk]
		if !ok || isClosed(e.ready) {
			return false // not ours: another run or the cache holds it
		}
		e.jpeg, e.err = jpeg, err
		if err == nil {
			e.elem = c.lru.PushFront(kk)
			c.bytes += int64(len(jpeg))
			c.evict()
		} else {
			delete(c.m, kk) // the next request tries again
		}
		close(e.ready)
		return true
	}
	next := k.frame
	err := l.decodeFrames(ctx, f, k.frame, k.size, func(jpeg []byte) bool {
		if !deliver(next, jpeg, nil) {
			return false
		}
		next++
		return next <= k.frame+framesAhead
	})
	if err == nil {
		err = errs.New(errs.UnsupportedMedia, "", "frame %d of %s did not decode", next, f.UniqueName)
	}
	for fr := next; fr <= k.frame+framesAhead; fr++ {
		deliver(fr, nil, err)
	}
}

// evict drops the least recently used ready frames past the limit; c.mu is held.
func (c *frameCache) evict() {
	for c.bytes > c.limit && c.lru.Len() > 1 {
		back := c.lru.Back()
		kk := back.Value.(frameKey)
		c.lru.Remove(back)
		if e := c.m[kk]; e != nil {
			c.bytes -= int64(len(e.jpeg))
			delete(c.m, kk)
		}
	}
}

// decodeFrames decodes video f from frame first on, handing each frame as
// a JPEG to each until it returns false or the video ends.
func (l *Lake) decodeFrames(ctx context.Context, f File, first, size int, each func([]byte) bool) error {
	src, release, err := l.store.Local(ctx, f.Blob, f.Ext)
	if err != nil {
		return err
	}
	defer release()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	// Seek half a frame before the frame: ffmpeg decodes from the keyframe
	// before that and drops what is earlier, so the first frame out is the
	// one at first/rate, whatever the rounding of either.
	at := max(0, (float64(first)-0.5)/f.FrameRate)
	args := []string{"-v", "error", "-ss", strconv.FormatFloat(at, 'f', 6, 64), "-i", src,
		"-frames:v", strconv.Itoa(framesAhead + 1)}
	if size > 0 {
		args = append(args, "-vf", fmt.Sprintf("scale=w='min(%d,iw)':h='min(%d,ih)':force_original_aspect_ratio=decrease", size, size))
	}
	args = append(args, "-f", "image2pipe", "-c:v", "mjpeg", "-q:v", "3", "pipe:1")
	cmd := exec.CommandContext(ctx, "ffmpeg", args...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		return err
	}
	if err := cmd.Start(); err != nil {
		return err
	}
	more, rerr := true, error(nil)
	for r := bufio.NewReaderSize(out, 1<<20); more; {
		var jpeg []byte
		if jpeg, rerr = nextJPEG(r); rerr != nil {
			break
		}
		more = each(jpeg)
	}
	cancel()
	werr := cmd.Wait()
	if rerr != nil && rerr != io.EOF {
		return rerr
	}
	if werr != nil && more && rerr == nil {
		return errs.Wrap(errs.UnsupportedMedia, fmt.Errorf("ffmpeg: %v %s", werr, strings.TrimSpace(stderr.String())),
			"frame %d of %s does not decode", first, f.UniqueName)
	}
	return nil
}

// nextJPEG reads one JPEG of ffmpeg's MJPEG stream: from its start marker
// to its end marker (entropy-coded data never holds FF D9: an FF there is
// followed by 00).
func nextJPEG(r *bufio.Reader) ([]byte, error) {
	var b []byte
	for {
		chunk, err := r.ReadSlice(0xFF)
		b = append(b, chunk...)
		if err == bufio.ErrBufferFull {
			continue
		}
		if err != nil {
			if len(b) == 0 {
				return nil, io.EOF
			}
			return nil, fmt.Errorf("a frame ends early: %w", err)
		}
		m, err := r.ReadByte()
		if err != nil {
			return nil, fmt.Errorf("a frame ends early: %w", err)
		}
		b = append(b, m)
		if m == 0xD9 && len(b) >= 4 && b[0] == 0xFF && b[1] == 0xD8 {
			return b, nil
		}
	}
}

// GrayFrames decodes video f from frame first on as 8-bit luma no wider
// than maxWidth (the video's width when smaller), handing each frame's
// number, pixels (row by row) and size to each until it returns false,
// count frames are given, or the video ends. What a tracker reads: one
// ffmpeg pass, no images encoded.
func (l *Lake) GrayFrames(ctx context.Context, f File, first, count, maxWidth int,
	each func(frame int, pix []byte, w, h int) bool) error {
	if f.Type != Video || f.FrameRate <= 0 || f.Width <= 0 || f.Height <= 0 {
		return errs.Invalid("uniqueName", "%s is not a video with a frame rate and size", f.UniqueName)
	}
	w, h := f.Width, f.Height
	if w > maxWidth {
		w, h = maxWidth, max(2, int(float64(f.Height)*float64(maxWidth)/float64(f.Width)+0.5)&^1)
	}
	src, release, err := l.store.Local(ctx, f.Blob, f.Ext)
	if err != nil {
		return err
	}
	defer release()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	at := max(0, (float64(first)-0.5)/f.FrameRate) // as decodeFrames: the first frame out is first
	cmd := exec.CommandContext(ctx, "ffmpeg", "-v", "error", "-ss", strconv.FormatFloat(at, 'f', 6, 64), "-i", src,
		"-frames:v", strconv.Itoa(count), "-vf", fmt.Sprintf("scale=%d:%d,format=gray", w, h), "-f", "rawvideo", "pipe:1")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		return err
	}
	if err := cmd.Start(); err != nil {
		return err
	}
	pix := make([]byte, w*h)
	frame, more := first, true
	for r := bufio.NewReaderSize(out, 1<<20); more; frame++ {
		if _, err := io.ReadFull(r, pix); err != nil {
			break
		}
		more = each(frame, pix, w, h)
	}
	if !more {
		cancel() // stopped by each: ffmpeg's error from the kill is not one
	}
	if err := cmd.Wait(); err != nil && more {
		return errs.Wrap(errs.UnsupportedMedia, fmt.Errorf("ffmpeg: %v %s", err, strings.TrimSpace(stderr.String())),
			"%s does not decode from frame %d", f.UniqueName, first)
	}
	return nil
}
