package web

import (
	"bytes"
	"fmt"
	"image"
	"image/color"
	"image/jpeg"
	"math"
	"net/http"
	"strconv"
	"strings"
	"sync"

	"github.com/labstack/echo/v5"

	"github.com/framelake/framelake/errs"
	"github.com/framelake/framelake/lake"
)

// CropPath serves box crops for review grids: CropPath + "<size>/<uniqueName>"
// with the file's signature (as thumbnails) and box=x,y,w,h in the file's
// pixels. Crops are cut from the 512 px thumbnail of the cache, never from
// the full image, so a grid of thousands of patches costs thumbnails only.
const CropPath = "/crops/"

// cropSource is the thumbnail size crops are cut from.
const cropSource = 512

// lakePatchRoutes serve the review page: boxes of a label with crop links,
// and the crops.
func (s *server) lakePatchRoutes(e *echo.Echo, api *echo.Group) {
	e.GET(CropPath+":size/:name", s.crop)
	api.GET("/lake/patches", s.patches)
}

type patchView struct {
	lake.Patch
	CropURL    string `json:"cropUrl"`
	TaskID     string `json:"taskId,omitempty"` // when the file is a frame of a task
	FrameIndex *int   `json:"frameIndex,omitempty"`
}

// patches pages through the boxes of a label, in the whole lake or on a
// task's frames, each with its crop URL and, for frames, its task.
func (s *server) patches(c *echo.Context) error {
	ctx := c.Request().Context()
	q := c.Request().URL.Query()
	pq := lake.PatchQuery{Label: q.Get("label"), Source: lake.Source(q.Get("source"))}
	if pq.Source != "" && pq.Source != lake.Human && pq.Source != lake.Machine {
		return errs.Invalid("source", "source must be human or machine, got %q", pq.Source)
	}
	var err error
	if pq.PageIndex, err = intParam(q.Get("pageIndex"), "pageIndex", 0, 0, math.MaxInt32); err != nil {
		return err
	}
	if pq.PageSize, err = intParam(q.Get("pageSize"), "pageSize", 200, 1, 1000); err != nil {
		return err
	}
	size := 128
	if v := q.Get("cropSize"); v != "" {
		if size, err = validThumbSize(v); err != nil {
			return err
		}
	}
	taskID := q.Get("taskId")
	if taskID != "" {
		t, err := s.Annotate.Task(ctx, taskID)
		if err != nil {
			return err
		}
		if pq.FileSeqs, err = s.Annotate.TaskFileSeqs(ctx, taskID); err != nil {
			return err
		}
		pq.HumanOperation = t.ProjectID
	}
	list, total, err := s.Lake.Patches(ctx, pq)
	if err != nil {
		return err
	}
	names := make([]string, len(list))
	for i, p := range list {
		names[i] = p.UniqueName
	}
	places, err := s.Annotate.FramePlaces(ctx, names, taskID)
	if err != nil {
		return err
	}
	out := make([]patchView, len(list))
	for i, p := range list {
		out[i] = patchView{Patch: p, CropURL: s.cropURL(p, size)}
		if pl, ok := places[p.UniqueName]; ok {
			out[i].TaskID, out[i].FrameIndex = pl.TaskID, &pl.Index
		}
	}
	// The label's declared skeleton, when its patches are keypoints, joins their points on the page.
	skel, err := s.skeletonEdges(ctx, patchBoxes(list), map[string][][2]string{})
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, map[string]any{"patchCount": total, "patches": out, "skeleton": skel[pq.Label]})
}

func patchBoxes(list []lake.Patch) []lake.Box {
	out := make([]lake.Box, len(list))
	for i, p := range list {
		out[i] = p.Box
	}
	return out
}

func (s *server) cropURL(p lake.Patch, size int) string {
	u := s.thumbURL(lake.File{UniqueName: p.UniqueName}, size)
	return strings.Replace(u, ThumbPath, CropPath, 1) + fmt.Sprintf("&box=%g,%g,%g,%g", p.X, p.Y, p.W, p.H)
}

// crop answers a box's patch: the box and a margin of a fifth of its size
// around it, cut from the cached thumbnail and fitted in size x size.
func (s *server) crop(c *echo.Context) error {
	f, size, err := s.signedThumbFile(c)
	if err != nil {
		return err
	}
	q := c.Request().URL.Query()
	box, err := parseBox(q.Get("box"))
	if err != nil {
		return err
	}
	if f.Type != lake.Image || f.Width == 0 {
		return errs.New(errs.UnsupportedMedia, "", "crops are cut from images; %q is a %s", f.UniqueName, f.Type)
	}
	etag := fmt.Sprintf(`"%s-%d-%s"`, f.Blob, size, q.Get("box"))
	h := c.Response().Header()
	h.Set("ETag", etag)
	h.Set("Cache-Control", "private, max-age=31536000, immutable")
	if c.Request().Header.Get("If-None-Match") == etag {
		return c.NoContent(http.StatusNotModified)
	}
	src, err := s.cropSources.get(f.Blob, func() (image.Image, error) {
		thumb, err := s.Lake.Thumbnail(c.Request().Context(), f, cropSource)
		if err != nil {
			return nil, err
		}
		return jpeg.Decode(bytes.NewReader(thumb))
	})
	if err != nil {
		return err
	}
	k := float64(src.Bounds().Dx()) / float64(f.Width)
	m := 0.2 * math.Max(box[2], box[3])
	r := image.Rect(int((box[0]-m)*k), int((box[1]-m)*k), int(math.Ceil((box[0]+box[2]+m)*k)),
		int(math.Ceil((box[1]+box[3]+m)*k))).Intersect(src.Bounds())
	if r.Empty() {
		return errs.Invalid("box", "box %s is outside the image", q.Get("box"))
	}
	var out bytes.Buffer
	if err := jpeg.Encode(&out, fit(src, r, size), &jpeg.Options{Quality: 85}); err != nil {
		return err
	}
	return c.Blob(http.StatusOK, "image/jpeg", out.Bytes())
}

func parseBox(v string) ([4]float64, error) {
	var b [4]float64
	parts := strings.Split(v, ",")
	if len(parts) != 4 {
		return b, errs.Invalid("box", "box must be x,y,w,h in the image's pixels, got %q", v)
	}
	for i, p := range parts {
		f, err := strconv.ParseFloat(p, 64)
		if err != nil || math.IsNaN(f) || math.IsInf(f, 0) || (i >= 2 && f <= 0) {
			return b, errs.Invalid("box", "box must be x,y,w,h in the image's pixels, w and h positive, got %q", v)
		}
		b[i] = f
	}
	return b, nil
}

// fit scales the region r of src to fit in size x size (nearest pixel: a
// patch is small and looked at for its label, not its detail). A JPEG
// thumbnail decodes to YCbCr, read directly: At and Set cost an interface
// call and a colour conversion each per pixel.
func fit(src image.Image, r image.Rectangle, size int) image.Image {
	k := math.Min(float64(size)/float64(r.Dx()), float64(size)/float64(r.Dy()))
	w, h := max(1, int(float64(r.Dx())*k)), max(1, int(float64(r.Dy())*k))
	dst := image.NewRGBA(image.Rect(0, 0, w, h))
	yc, _ := src.(*image.YCbCr)
	for y := range h {
		sy := r.Min.Y + int(float64(y)/k)
		for x := range w {
			sx := r.Min.X + int(float64(x)/k)
			if yc == nil {
				dst.Set(x, y, src.At(sx, sy))
				continue
			}
			yi, ci := yc.YOffset(sx, sy), yc.COffset(sx, sy)
			o := dst.PixOffset(x, y)
			dst.Pix[o], dst.Pix[o+1], dst.Pix[o+2] = color.YCbCrToRGB(yc.Y[yi], yc.Cb[ci], yc.Cr[ci])
			dst.Pix[o+3] = 255
		}
	}
	return dst
}

// cropSourcesKept is how many decoded thumbnails crops are cut from are kept.
const cropSourcesKept = 32

// decodedThumbs keeps the last few decoded thumbnails crops were cut from:
// a label's boxes are listed file by file, so one page of patches cuts many
// crops from each thumbnail, decoded once. 32 of 512 px take about 8 MB.
type decodedThumbs struct {
	mu   sync.Mutex
	keys []string // oldest first
	imgs map[string]image.Image
}

// get answers the image kept under key, or loads and keeps it.
func (d *decodedThumbs) get(key string, load func() (image.Image, error)) (image.Image, error) {
	d.mu.Lock()
	im, ok := d.imgs[key]
	d.mu.Unlock()
	if ok {
		return im, nil
	}
	im, err := load()
	if err != nil {
		return nil, err
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.imgs == nil {
		d.imgs = map[string]image.Image{}
	}
	if _, ok := d.imgs[key]; !ok {
		if len(d.keys) == cropSourcesKept {
			delete(d.imgs, d.keys[0])
			d.keys = d.keys[1:]
		}
		d.keys = append(d.keys, key)
		d.imgs[key] = im
	}
	return im, nil
}
