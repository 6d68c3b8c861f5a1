package analysis

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"

	"github.com/framelake/framelake/internal/vips"
	"github.com/framelake/framelake/lake"
)

const jpegQuality = 90

// imageInput reads a lake image and resizes it to w x h as JPEG, returning
// the source size too. Bucket media is read from the lake's stage cache, so
// the next run over the same files need not fetch them again.
func (s *Service) imageInput(ctx context.Context, f lake.File, w, h int) ([]byte, int, int, error) {
	path, release, err := s.lake.Store().Local(ctx, f.Blob, f.Ext)
	if err != nil {
		return nil, 0, 0, err
	}
	b, err := os.ReadFile(path)
	release()
	if err != nil {
		return nil, 0, 0, err
	}
	return vips.ThumbnailJPEG(b, w, h, jpegQuality)
}

// sampleStep is how many frames apart samples at fps are, at least 1. An
// unknown frame rate counts as 25.
func sampleStep(frameRate, fps float64) int {
	if frameRate <= 0 || math.IsNaN(frameRate) {
		frameRate = 25
	}
	return max(1, int(math.Round(frameRate/fps)))
}

// videoFrames samples every step-th frame of a lake video, resized to w x h,
// with ffmpeg, and calls fn with each frame's index and JPEG as ffmpeg
// streams them.
func (s *Service) videoFrames(ctx context.Context, f lake.File, w, h, step int, fn func(index int, jpeg []byte) error) error {
	if s.opt.FFmpeg == "" {
		return errors.New("ffmpeg is not installed; videos cannot be analysed (apt-get install ffmpeg)")
	}
	path, release, err := s.lake.Store().Local(ctx, f.Blob, f.Ext)
	if err != nil {
		return err
	}
	defer release()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	filter := fmt.Sprintf(`select=not(mod(n\,%d)),scale=%d:%d`, step, w, h)
	cmd := exec.CommandContext(ctx, s.opt.FFmpeg, "-nostdin", "-v", "error", "-i", path,
		"-an", "-sn", "-dn", "-vf", filter, "-fps_mode", "passthrough", "-f", "image2pipe", "-c:v", "mjpeg",
		"-q:v", "3", "pipe:1")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		return err
	}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("ffmpeg: %w", err)
	}
	r := bufio.NewReaderSize(out, 256<<10)
	var ferr error
	for k := 0; ; k++ {
		img, err := nextJPEG(r)
		if errors.Is(err, io.EOF) {
			break
		}
		if err == nil {
			err = fn(k*step, img)
		}
		if err != nil {
			ferr = err
			cancel()
			break
		}
	}
	io.Copy(io.Discard, r)
	werr := cmd.Wait()
	switch {
	case ferr != nil:
		return ferr
	case werr != nil && ctx.Err() == nil:
		return fmt.Errorf("ffmpeg could not read the video: %v: %s", werr, lastLines(stderr.String(), 3))
	}
	return nil
}

// nextJPEG reads one JPEG from a stream of concatenated JPEGs (ffmpeg's
// mjpeg image2pipe) by walking its markers: segment lengths up to the scan,
// then entropy-coded data, where 0xFF is followed by 0x00 (a stuffed byte),
// a restart marker or the next marker. A bare search for FFD9 would end early
// at a thumbnail's end marker.
func nextJPEG(r *bufio.Reader) ([]byte, error) {
	var buf bytes.Buffer
	soi := make([]byte, 2)
	if _, err := io.ReadFull(r, soi); err != nil {
		if errors.Is(err, io.ErrUnexpectedEOF) {
			return nil, errors.New("ffmpeg output ends inside a frame")
		}
		return nil, err
	}
	if soi[0] != 0xFF || soi[1] != 0xD8 {
		return nil, errors.New("ffmpeg output is not a JPEG stream")
	}
	buf.Write(soi)
	bad := func(err error) ([]byte, error) {
		if err == io.EOF {
			err = errors.New("ffmpeg output ends inside a frame")
		}
		return nil, err
	}
	marker, err := readMarker(r, &buf)
	for {
		if err != nil {
			return bad(err)
		}
		switch {
		case marker == 0xD9:
			return buf.Bytes(), nil
		case marker >= 0xD0 && marker <= 0xD7 || marker == 0x01:
			marker, err = readMarker(r, &buf)
			continue
		}
		var l [2]byte
		if _, err = io.ReadFull(r, l[:]); err != nil {
			return bad(err)
		}
		buf.Write(l[:])
		n := int(l[0])<<8 | int(l[1])
		if n < 2 {
			return bad(errors.New("ffmpeg output has a bad JPEG segment"))
		}
		if _, err = io.CopyN(&buf, r, int64(n-2)); err != nil {
			return bad(err)
		}
		if marker == 0xDA {
			marker, err = scanEntropy(r, &buf)
		} else {
			marker, err = readMarker(r, &buf)
		}
	}
}

// readMarker reads 0xFF (and fill bytes) and the marker code.
func readMarker(r *bufio.Reader, buf *bytes.Buffer) (byte, error) {
	b, err := r.ReadByte()
	if err != nil {
		return 0, err
	}
	if b != 0xFF {
		return 0, errors.New("ffmpeg output has a bad JPEG marker")
	}
	buf.WriteByte(b)
	for {
		if b, err = r.ReadByte(); err != nil {
			return 0, err
		}
		buf.WriteByte(b)
		if b != 0xFF {
			return b, nil
		}
	}
}

// scanEntropy copies entropy-coded data up to the next marker and returns it.
func scanEntropy(r *bufio.Reader, buf *bytes.Buffer) (byte, error) {
	for {
		chunk, err := r.ReadSlice(0xFF)
		buf.Write(chunk)
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		if err != nil {
			return 0, err
		}
		b, err := r.ReadByte()
		for err == nil && b == 0xFF {
			buf.WriteByte(b)
			b, err = r.ReadByte()
		}
		if err != nil {
			return 0, err
		}
		buf.WriteByte(b)
		if b != 0x00 && (b < 0xD0 || b > 0xD7) {
			return b, nil
		}
	}
}

// originalSize is the pixel size boxes map back to: the decoded size of an
// image, the probed size of a video.
func originalSize(u unit) (int, int) {
	switch {
	case u.srcW > 0 && u.srcH > 0:
		return u.srcW, u.srcH
	case u.file.Width > 0 && u.file.Height > 0:
		return u.file.Width, u.file.Height
	}
	return 0, 0
}

// isMedia reports whether a file can be analysed.
func isMedia(f lake.File) bool { return f.Type == lake.Image || f.Type == lake.Video }
