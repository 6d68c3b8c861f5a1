package lake

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/framelake/framelake/errs"
	"github.com/framelake/framelake/internal/vips"
)

// GridThumbSize is the thumbnail size the web app's grid asks for, the one
// ingest makes ahead (ingestThumbs); thumbQuality is every thumbnail's JPEG
// quality.
const (
	GridThumbSize = 256
	thumbQuality  = 80
)

// Thumbnail returns f's display thumbnail, fitting in size x size with its
// aspect ratio kept, from the cache under Options.ThumbDir
// (<size>/<hash[:2]>/<hash>.jpg), making and storing it on a miss. Entries
// are named by content, so they never go stale.
func (l *Lake) Thumbnail(ctx context.Context, f File, size int) ([]byte, error) {
	path := l.thumbPath(f.Blob, size)
	if path != "" {
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
	if err := writeThumb(path, b); err != nil {
		return nil, err
	}
	return b, nil
}

// thumbPath is where the cache keeps the thumbnail of blob hash at size;
// "" when there is no cache.
func (l *Lake) thumbPath(hash string, size int) string {
	if l.opt.ThumbDir == "" {
		return ""
	}
	return filepath.Join(l.opt.ThumbDir, strconv.Itoa(size), hash[:2], hash+".jpg")
}

// writeThumb puts a cache entry in place: written whole then linked
// (linkThumb) or renamed into place, so a reader never sees half an entry,
// and two writers of the same entry at once both leave a complete file.
func writeThumb(path string, b []byte) error {
	if done, err := linkThumb(path, b); done {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".thumb-*")
	if errors.Is(err, os.ErrNotExist) { // the first entry of its folder
		if err = os.MkdirAll(filepath.Dir(path), 0o755); err == nil {
			tmp, err = os.CreateTemp(filepath.Dir(path), ".thumb-*")
		}
	}
	if err != nil {
		return err
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
	}
	return werr
}

// ingestThumbs puts in the cache the grid thumbnails that the ingest check's
// decode made (vips.CheckGreyThumb) of files now stored, so the grid's first
// view of them is a cache hit and not a second decode of the file: a cold
// 256 px thumbnail of a 1400x1050 JPEG cost about as much CPU again as its
// whole import. It runs after the rows are committed, so a file that was
// refused or rolled back leaves no entry. A failed write only leaves the
// entry to be made on the first view, as before.
func (l *Lake) ingestThumbs(files []staged) {
	var todo []*staged
	for i := range files {
		if files[i].p.thumb != nil {
			todo = append(todo, &files[i])
		}
	}
	l.parallel(len(todo), func(i int) {
		s := todo[i]
		if err := writeThumb(l.thumbPath(s.pend.Hash, GridThumbSize), s.p.thumb); err != nil {
			l.log.Warn("thumbnail at ingest", "file", s.up.Name, "err", err)
		}
		s.p.thumb = nil
	})
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
		b, err := vips.FitJPEG(path, size, thumbQuality)
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
