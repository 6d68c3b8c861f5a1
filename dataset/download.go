package dataset

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/framelake/framelake/errs"
	"github.com/framelake/framelake/format"
)

// Download is a prepared export of a version's current build: everything a
// request can get wrong was checked, so a server can send its headers and
// stream the archive.
type Download struct {
	s       *Service
	vr      versionRow
	Version Version
	Format  format.ExportType
	// FileName is "<dataset>-<version>-<format>.zip" in slugs, like the
	// archive's root folder: "streets-1.0-yolo-darknet.zip".
	FileName string
	// OnlyWithBoxes leaves out the frames without a box of the version's
	// labels (what users training a detector ask for).
	OnlyWithBoxes bool
}

// PrepareDownload checks a download_dataset request. Without an export
// type it takes the first format the version advertises (export_types).
func (s *Service) PrepareDownload(ctx context.Context, versionID, exportType string) (*Download, error) {
	if versionID == "" {
		return nil, errs.Invalid("version_id", "version_id is required")
	}
	var f format.ExportType
	var err error
	if strings.TrimSpace(exportType) != "" {
		if f, err = format.ParseExportType(exportType); err != nil { // an invalid_argument naming export_type
			return nil, err
		}
	}
	vr, v, err := s.built(ctx, versionID, "version_id")
	if err != nil {
		return nil, err
	}
	if f == "" {
		if len(v.Export) == 0 {
			return nil, errs.Invalid("export_type", "export_type is required: version %s advertises no formats "+
				"(export_types); one of %s", v.ID, strings.Join(v.Formats, ", "))
		}
		f = format.ExportType(v.Export[0])
	}
	name := slug(v.Dataset)
	if name == "" {
		name = "dataset"
	}
	name += "-" + v.VersionNo + "-" + slug(string(f)) + ".zip"
	return &Download{s: s, vr: vr, Version: v, Format: f, FileName: name}, nil
}

// slug names the archive as export names its root folder: lower-case
// letters, digits and inner dots, every other run of characters one dash.
func slug(s string) string {
	var b strings.Builder
	dash := false
	for _, r := range strings.ToLower(s) {
		switch {
		case r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '.' && b.Len() > 0:
			b.WriteRune(r)
			dash = false
		case !dash && b.Len() > 0:
			b.WriteByte('-')
			dash = true
		}
	}
	return strings.Trim(b.String(), "-.")
}

// Write streams the archive to w: frames are read a page at a time and media
// is copied from the store as stored, so memory stays constant. Without
// media the archive holds annotations only; with OnlyWithBoxes, only the
// frames that have a box.
func (d *Download) Write(ctx context.Context, w io.Writer, includeMedia bool) error {
	labels := d.Version.Labels
	next := d.frames(ctx)
	if d.OnlyWithBoxes {
		all := next
		next = func() (format.Frame, error) {
			for {
				f, err := all()
				if err != nil || len(f.Boxes) > 0 {
					return f, err
				}
			}
		}
	}
	return format.Write(ctx, w, d.Format, format.Dataset{Name: d.Version.Dataset, Version: d.Version.VersionNo,
		Labels: labels, Skeletons: d.s.opt.Skeletons}, next, includeMedia)
}

// frames returns the iterator format.Write pulls frames from. It fails, rather
// than ending early, when the version was rebuilt under it.
func (d *Download) frames(ctx context.Context) func() (format.Frame, error) {
	s, vr := d.s, d.vr
	classes := map[string]int{}
	for i, l := range d.Version.Labels {
		classes[l] = i
	}
	var page []Frame
	after, sent, total := -1, 0, d.Version.Stats.TotalFrames
	return func() (format.Frame, error) {
		if len(page) == 0 {
			if sent >= total {
				return format.Frame{}, io.EOF
			}
			var err error
			if page, after, err = s.itemPage(ctx, vr.seq, vr.current, after, 500); err != nil {
				return format.Frame{}, err
			}
			if len(page) == 0 {
				return format.Frame{}, fmt.Errorf("version %s changed during the download after %d of %d frames; download again",
					vr.id, sent, total)
			}
		}
		f := page[0]
		page = page[1:]
		sent++
		return s.exportFrame(ctx, f, classes), nil
	}
}

// itemPage reads up to n frames of a build after position after.
func (s *Service) itemPage(ctx context.Context, versionSeq int64, build, after, n int) ([]Frame, int, error) {
	rows, err := s.db.R.QueryContext(ctx, `SELECT `+itemColumns+` FROM version_item
		WHERE version_seq = ? AND build = ? AND ord > ? ORDER BY ord LIMIT ?`, versionSeq, build, after, n)
	if err != nil {
		return nil, after, err
	}
	defer rows.Close()
	var out []Frame
	for rows.Next() {
		f, ord, err := scanItem(rows)
		if err != nil {
			return nil, after, err
		}
		out, after = append(out, f), ord
	}
	return out, after, rows.Err()
}

// exportFrame turns a frame into what the export writers take.
func (s *Service) exportFrame(ctx context.Context, f Frame, classes map[string]int) format.Frame {
	boxes := make([]format.ExportBox, len(f.Boxes))
	for i, b := range f.Boxes {
		boxes[i] = format.ExportBox{Label: b.Label, ClassID: classes[b.Label], X: b.X, Y: b.Y, W: b.W, H: b.H, Geometry: b.Geometry,
			Track: b.Track, Interpolated: b.Interpolated}
		if len(b.Attributes) > 0 {
			_ = json.Unmarshal(b.Attributes, &boxes[i].Attributes) // stored from a checked JSON object
		}
	}
	store, blob, ext := s.lake.Store(), f.blob, f.Ext
	out := format.Frame{UniqueName: f.UniqueName, Name: f.Name, Ext: f.Ext, Split: f.Split, Augmented: f.Augmented,
		DerivedFrom: f.DerivedFrom, DerivedFromExt: f.sourceExt, Width: f.Width, Height: f.Height, Boxes: boxes, Params: f.Params,
		Open: func() (io.ReadCloser, error) { return store.Open(ctx, blob, ext) }, Video: f.Video}
	if f.VideoFrame != nil {
		out.VideoFrame = *f.VideoFrame
	}
	return out
}

// ExportFrames converts a page's frames to what the export writers take, for
// callers that show boxes with format.YOLOBoxes, RCNNBoxes or TFBoxes.
func (s *Service) ExportFrames(ctx context.Context, p Page) []format.Frame {
	classes := map[string]int{}
	for i, l := range p.Version.Labels {
		classes[l] = i
	}
	out := make([]format.Frame, len(p.Frames))
	for i, f := range p.Frames {
		out[i] = s.exportFrame(ctx, f, classes)
	}
	return out
}
