package lake

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/framelake/framelake/internal/vips"
)

// probed is what ingest learned about a file's bytes.
type probed struct {
	Type       FileType
	Ext, MIME  string
	Format     string
	Width      int
	Height     int
	FrameCount int
	FrameRate  float64
	Duration   float64
	grey       *vips.Grey // the luminance the check decoded for the scorer; nil when none
	thumb      []byte     // the grid thumbnail the same decode made (see ingestThumbs); nil when none
}

var imageExts = map[string]bool{"jpg": true, "jpeg": true, "png": true, "gif": true, "webp": true,
	"tif": true, "tiff": true, "heic": true, "heif": true, "avif": true}

var videoExts = map[string]string{"mp4": "video/mp4", "m4v": "video/x-m4v", "mov": "video/quicktime",
	"mkv": "video/x-matroska", "webm": "video/webm", "avi": "video/x-msvideo", "mpg": "video/mpeg",
	"mpeg": "video/mpeg", "ts": "video/mp2t", "flv": "video/x-flv", "wmv": "video/x-ms-wmv"}

// formatExt is the stored extension and MIME type of each image format libvips names.
var formatExt = map[string][2]string{"jpeg": {"jpg", "image/jpeg"}, "png": {"png", "image/png"},
	"gif": {"gif", "image/gif"}, "webp": {"webp", "image/webp"}, "tiff": {"tif", "image/tiff"},
	"heif": {"heic", "image/heif"}}

// errUnreadable marks bytes that claim a media type but do not read as one.
var errUnreadable = errors.New("unreadable")

// errImageTooLarge marks an image of more bytes than an image check reads
// (vips.MaxCheckBytes).
var errImageTooLarge = fmt.Errorf("image is larger than the %d bytes (%d MiB) an image check reads",
	vips.MaxCheckBytes, vips.MaxCheckBytes>>20)

// errTooManyPixels marks an image whose header claims more pixels than
// Options.MaxPixels.
var errTooManyPixels = errors.New("too many pixels")

// probe classifies the bytes of name and reads their dimensions. A file
// that looks like an image or video by name or magic bytes must read as one;
// anything else is stored as "other".
func (l *Lake) probe(ctx context.Context, name string, pend *Pending) (probed, error) {
	head := pend.Data
	if head == nil {
		var err error
		if head, err = readHead(pend.TempPath(), 64); err != nil {
			return probed{}, err
		}
	}
	ext := strings.TrimPrefix(strings.ToLower(filepath.Ext(name)), ".")
	switch MediaType(name, head) {
	case Image:
		return l.probeImage(pend)
	case Video:
		return l.probeVideo(ctx, pend.TempPath(), ext)
	}
	p := probed{Type: Other, Ext: safeExt(ext), MIME: mime.TypeByExtension("." + ext)}
	if p.MIME == "" {
		p.MIME = "application/octet-stream"
	}
	return p, nil
}

// MediaType is what the lake will take a file named name whose first bytes
// are head (64 are enough; nil to judge by the name alone) for: Image or
// Video when its name or its magic bytes say so, and it must then read as
// one, or Other.
func MediaType(name string, head []byte) FileType {
	ext := strings.TrimPrefix(strings.ToLower(filepath.Ext(name)), ".")
	switch {
	case imageExts[ext] || sniffImage(head):
		return Image
	case videoExts[ext] != "" || sniffVideo(head):
		return Video
	}
	return Other
}

// MediaTypeOfFile is MediaType for a file on disk, reading its first bytes
// only when its name does not tell.
func MediaTypeOfFile(path string) (FileType, error) {
	if t := MediaType(path, nil); t != Other {
		return t, nil
	}
	head, err := readHead(path, 64)
	if err != nil {
		return "", err
	}
	return MediaType(path, head), nil
}

// probeImage reads an image's header, refuses one over the pixel limit
// before decoding it, and decodes the rest in full (a JPEG at 1/8 scale), so
// an image the lake takes is one a dataset build and a model can read: a
// file whose end marker is intact can still hold damaged pixel data.
func (l *Lake) probeImage(pend *Pending) (probed, error) {
	if pend.Size > vips.MaxCheckBytes { // never read whole, never handed to libvips
		return probed{}, errImageTooLarge
	}
	b := pend.Data
	if b == nil {
		var err error
		if b, err = os.ReadFile(pend.TempPath()); err != nil {
			return probed{}, err
		}
	}
	var info vips.Info
	var grey *vips.Grey
	var thumb []byte
	var err error
	if l.scorer != nil && l.scorer.Grey != nil {
		thumbSize := 0
		if l.opt.ThumbDir != "" {
			thumbSize = GridThumbSize
		}
		info, grey, thumb, err = vips.CheckGreyThumb(b, l.opt.MaxPixels, l.scorer.GreySize, thumbSize, thumbQuality)
	} else {
		info, err = vips.Check(b, l.opt.MaxPixels)
	}
	switch {
	case errors.Is(err, vips.ErrTooManyPixels):
		return probed{}, fmt.Errorf("%w: image of %dx%d pixels is over the limit of %d pixels", errTooManyPixels,
			info.Width, info.Height, l.opt.MaxPixels)
	case err != nil:
		return probed{}, fmt.Errorf("%w: not a decodable image (%v)", errUnreadable, strings.TrimPrefix(err.Error(), vips.ErrDecode.Error()+": "))
	}
	fe, ok := formatExt[info.Format]
	if !ok {
		return probed{}, fmt.Errorf("%w: image format %q is not supported", errUnreadable, info.Format)
	}
	if cap(thumb) > len(thumb)+len(thumb)/4 {
		// Held until the batch commits (ingestThumbs), a thousand at once
		// in an import: made in a 32 KB buffer, a 12-20 KB thumbnail kept
		// in it doubled the import's live heap, which the collector then
		// let grow five times over, the kernel faulting in every new page.
		thumb = bytes.Clone(thumb)
	}
	return probed{Type: Image, Ext: fe[0], MIME: fe[1], Format: info.Format,
		Width: info.Width, Height: info.Height, FrameCount: info.Pages, grey: grey, thumb: thumb}, nil
}

// ffprobeOut is the part of `ffprobe -print_format json` output we read.
type ffprobeOut struct {
	Streams []struct {
		Width        int    `json:"width"`
		Height       int    `json:"height"`
		NbFrames     string `json:"nb_frames"`
		AvgFrameRate string `json:"avg_frame_rate"`
		RFrameRate   string `json:"r_frame_rate"`
		Duration     string `json:"duration"`
	} `json:"streams"`
	Format struct {
		FormatName string `json:"format_name"`
		Duration   string `json:"duration"`
	} `json:"format"`
}

func (l *Lake) probeVideo(ctx context.Context, path, ext string) (probed, error) {
	if l.ffprobe == "" {
		return probed{}, fmt.Errorf("%w: videos need ffprobe, which is not installed on the server (install ffmpeg)", errUnreadable)
	}
	ctx, cancel := context.WithTimeout(ctx, l.opt.ProbeTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, l.ffprobe, "-v", "error", "-print_format", "json",
		"-select_streams", "v:0", "-show_streams", "-show_format", path)
	cmd.WaitDelay = time.Second // a killed ffprobe's children must not hold its pipes open
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if ctx.Err() == context.DeadlineExceeded {
		return probed{}, fmt.Errorf("%w: not a readable video (ffprobe took longer than %s)", errUnreadable, l.opt.ProbeTimeout)
	}
	var pr ffprobeOut
	if err == nil {
		err = json.Unmarshal(out, &pr)
	}
	if err != nil || len(pr.Streams) == 0 || pr.Streams[0].Width == 0 {
		msg := ffprobeReason(stderr.String(), path)
		if msg == "" {
			msg = "no video stream"
		}
		return probed{}, fmt.Errorf("%w: not a readable video (%s)", errUnreadable, msg)
	}
	s := pr.Streams[0]
	p := probed{Type: Video, Width: s.Width, Height: s.Height, Format: pr.Format.FormatName}
	p.FrameRate = parseRate(s.AvgFrameRate)
	if p.FrameRate == 0 {
		p.FrameRate = parseRate(s.RFrameRate)
	}
	p.Duration, _ = strconv.ParseFloat(s.Duration, 64)
	if p.Duration == 0 {
		p.Duration, _ = strconv.ParseFloat(pr.Format.Duration, 64)
	}
	p.FrameCount, _ = strconv.Atoi(s.NbFrames)
	if p.FrameCount == 0 && p.FrameRate > 0 { // Matroska and WebM carry no frame count
		p.FrameCount = int(p.Duration*p.FrameRate + 0.5)
	}
	p.Ext, p.MIME = ext, videoExts[ext]
	if p.MIME == "" {
		p.Ext, p.MIME = videoExtFor(p.Format)
	}
	return p, nil
}

// videoExtFor picks an extension for a video whose name had none we know.
func videoExtFor(format string) (string, string) {
	switch {
	case strings.Contains(format, "mp4"), strings.Contains(format, "mov"):
		return "mp4", "video/mp4"
	case strings.Contains(format, "matroska"), strings.Contains(format, "webm"):
		return "mkv", "video/x-matroska"
	case strings.Contains(format, "avi"):
		return "avi", "video/x-msvideo"
	}
	return "video", "application/octet-stream"
}

func parseRate(r string) float64 {
	num, den, ok := strings.Cut(r, "/")
	n, _ := strconv.ParseFloat(num, 64)
	if !ok {
		return n
	}
	d, _ := strconv.ParseFloat(den, 64)
	if d == 0 {
		return 0
	}
	return n / d
}

func readHead(path string, n int) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b := make([]byte, n)
	k, err := io.ReadFull(f, b)
	if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, io.EOF) {
		return nil, err
	}
	return b[:k], nil
}

func sniffImage(h []byte) bool {
	h = h[:min(len(h), 64)]
	return bytes.HasPrefix(h, []byte{0xFF, 0xD8, 0xFF}) || bytes.HasPrefix(h, []byte("\x89PNG")) ||
		bytes.HasPrefix(h, []byte("GIF8")) || bytes.HasPrefix(h, []byte("II*\x00")) ||
		bytes.HasPrefix(h, []byte("MM\x00*")) ||
		len(h) >= 12 && string(h[0:4]) == "RIFF" && string(h[8:12]) == "WEBP" ||
		len(h) >= 12 && string(h[4:8]) == "ftyp" && strings.Contains("heic heix mif1 msf1 avif", string(h[8:12]))
}

func sniffVideo(h []byte) bool {
	h = h[:min(len(h), 64)]
	return len(h) >= 12 && string(h[4:8]) == "ftyp" ||
		bytes.HasPrefix(h, []byte{0x1A, 0x45, 0xDF, 0xA3}) ||
		len(h) >= 12 && string(h[0:4]) == "RIFF" && string(h[8:12]) == "AVI "
}

// safeExt keeps an extension only if it is short and alphanumeric.
func safeExt(ext string) string {
	if ext == "" || len(ext) > 10 || strings.IndexFunc(ext, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9')
	}) >= 0 {
		return "bin"
	}
	return ext
}

// ffprobeReason is what ffprobe's stderr says is wrong with the file at
// path, without what only the server knows: the temp file's path that
// starts its lines and the "[mov,mp4,... @ 0x55a6...]" heap address of the
// demuxer that wrote them. Distinct reasons, at most three, are joined by "; ".
func ffprobeReason(stderr, path string) string {
	var reasons []string
	for line := range strings.Lines(stderr) {
		line = logContext.ReplaceAllString(strings.ReplaceAll(line, path, ""), "")
		line = strings.TrimSpace(strings.TrimLeft(strings.TrimSpace(line), ":"))
		if line != "" && !slices.Contains(reasons, line) && len(reasons) < 3 {
			reasons = append(reasons, line)
		}
	}
	return strings.Join(reasons, "; ")
}

// logContext is the "[name @ 0xaddress]" prefix of an FFmpeg log line.
var logContext = regexp.MustCompile(`\[[^\]]* @ 0x[0-9a-fA-F]+\]`)
