package lake

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/framelake/framelake/errs"
	"github.com/framelake/framelake/internal/vips"
)

// Thumbnail returns f's display thumbnail, fitting in size x size with its
// aspect ratio kept, from the cache under Options.ThumbDir
// (<size>/<hash[:2]>/<hash>.jpg), making and storing it on a miss. Entries
// are named by content, so they never go stale.
func (l *Lake) Thumbnail(ctx context.Context, f File, size int) ([]byte, error) {
	var path string
	if l.opt.ThumbDir != "" {
		path = filepath.Join(l.opt.ThumbDir, strconv.Itoa(size), f.Blob[:2], f.Blob+".jpg")
		if b, err := os.ReadFile(path); err == nil {
			return b, nil
		}
	}
	select {
	case l.thumbSlots <- struct{}{}:
		defer func() { <-l.thumbSlots }()
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	src, release, err := l.store.Local(ctx, f.Blob, f.Ext)
	if err != nil {
		return nil, err
	}
	b, err := makeThumb(ctx, src, f.Type, size)
	release()
	if err != nil || path == "" {
		return b, err
	}
	// Written whole then renamed: a reader never sees half an entry, and two
	// requests making the same entry at once both leave a complete file.
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, err
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".thumb-*")
	if err != nil {
		return nil, err
	}
	_, werr := tmp.Write(b)
	if cerr := tmp.Close(); werr == nil {
		werr = cerr
	}
	if werr == nil {
		werr = os.Rename(tmp.Name(), path)
	}
	if werr != nil {
		os.Remove(tmp.Name())
		return nil, werr
	}
	return b, nil
}

// dropThumbs removes the cached thumbnails of a blob that left the store,
// in every size, so the cache does not outgrow the lake. A failure only
// leaves an entry behind, which nothing serves (links name live files).
func (l *Lake) dropThumbs(hash string) {
	if l.opt.ThumbDir == "" {
		return
	}
	sizes, err := os.ReadDir(l.opt.ThumbDir)
	if err != nil {
		return
	}
	for _, s := range sizes {
		if _, err := strconv.Atoi(s.Name()); err == nil && s.IsDir() {
			p := filepath.Join(l.opt.ThumbDir, s.Name(), hash[:2], hash+".jpg")
			if err := os.Remove(p); err != nil && !os.IsNotExist(err) {
				l.log.Warn("remove cached thumbnail", "thumb", filepath.Join(s.Name(), hash[:2], hash+".jpg"), "err", err)
			}
		}
	}
}

// makeThumb shrinks an image with libvips (shrink-on-load) or takes a
// video's first frame, the frame its boxes of frame 0 belong to, with ffmpeg.
func makeThumb(ctx context.Context, path string, t FileType, size int) ([]byte, error) {
	switch t {
	case Image:
		b, err := vips.FitJPEG(path, size, 80)
		if err != nil { // libvips names the file: kept as the cause, not in the answer
			return nil, errs.Wrap(errs.UnsupportedMedia, err, "no thumbnail: the image does not decode")
		}
		return b, nil
	case Video:
		scale := fmt.Sprintf("scale=w='min(%d,iw)':h='min(%d,ih)':force_original_aspect_ratio=decrease", size, size)
		var out, stderr bytes.Buffer
		cmd := exec.CommandContext(ctx, "ffmpeg", "-v", "error", "-i", path, "-frames:v", "1", "-vf", scale,
			"-f", "image2pipe", "-c:v", "mjpeg", "-q:v", "4", "pipe:1")
		cmd.Stdout, cmd.Stderr = &out, &stderr
		if err := cmd.Run(); err != nil || out.Len() == 0 {
			// ffmpeg names the file: kept as the cause, not in the answer.
			return nil, errs.Wrap(errs.UnsupportedMedia, fmt.Errorf("ffmpeg: %v %s", err, strings.TrimSpace(stderr.String())),
				"no poster frame: the video does not decode")
		}
		return out.Bytes(), nil
	}
	return nil, errs.New(errs.UnsupportedMedia, "", "no thumbnail for %s files", t)
}
