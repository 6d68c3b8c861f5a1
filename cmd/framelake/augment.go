package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/framelake/framelake/augment"
	"github.com/framelake/framelake/internal/vips"
	"github.com/framelake/framelake/lake"
	"github.com/framelake/framelake/lake/shape"
)

// cmdAugment previews an augmentation configuration: it writes the outputs a
// dataset build would make from one image, each with a JSON file holding its
// boxes and the drawn parameters, so a user can look before building.
func cmdAugment(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("augment", flag.ContinueOnError)
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "usage: framelake augment --config aug.json [--seed N] [--n N] [--boxes boxes.json] --out DIR IMAGE")
		fs.PrintDefaults()
	}
	config := fs.String("config", "", "augmentation configuration (JSON, docs/spec/interface.md 2.9)")
	seed := fs.Uint64("seed", 0, "seed; equal seeds give equal outputs")
	n := fs.Int("n", 1, "number of outputs")
	boxesPath := fs.String("boxes", "", `shapes of the image: JSON array of {"label","x","y","width","height"} boxes in pixels (the REST upload's), or other shapes by "type" and geometry (docs/shapes.md)`)
	out := fs.String("out", "", "folder to write outputs into (created if missing)")
	key := fs.String("key", "", "image key mixed into the seed (default: the image's file name)")
	format := fs.String("format", "", "output format: jpeg, png, webp (default: the input's)")
	quality := fs.Int("quality", augment.DefaultQuality, "JPEG and WebP quality")
	minVisible := fs.Float64("min-visible", augment.DefaultMinVisible, "drop a box when less than this fraction of it stays in the image")
	images, err := parseInterleaved(fs, args)
	if err != nil {
		return err
	}
	if *config == "" || *out == "" || len(images) != 1 || *n < 1 {
		fs.Usage()
		return errors.New("need --config, --out, --n of at least 1 and exactly one image")
	}
	raw, err := os.ReadFile(*config)
	if err != nil {
		return err
	}
	cfg, err := augment.Parse(raw)
	if err != nil {
		return fmt.Errorf("%s: %w", *config, err)
	}
	var boxes []augment.Box
	if *boxesPath != "" {
		if boxes, err = readBoxes(*boxesPath); err != nil {
			return err
		}
	}
	img, err := os.ReadFile(images[0])
	if err != nil {
		return err
	}
	if err := wholeImage(img, boxes); err != nil {
		return fmt.Errorf("%s: %w", images[0], err)
	}
	base := strings.TrimSuffix(filepath.Base(images[0]), filepath.Ext(images[0]))
	if *key == "" {
		*key = filepath.Base(images[0])
	}
	opt := augment.Options{Key: *key, Format: *format, Quality: *quality, MinVisible: *minVisible}
	outs, err := augment.ApplyN(ctx, img, boxes, cfg, *seed, *n, opt)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(*out, 0o755); err != nil {
		return err
	}
	for i, o := range outs {
		name := filepath.Join(*out, fmt.Sprintf("%s_aug%d", base, i))
		if err := writeOutput(name, images[0], o); err != nil {
			return err
		}
		fmt.Printf("%s.%s  %dx%d  %d/%d shapes  %s\n", name, ext(o.Format), o.Width, o.Height, len(o.Boxes), len(boxes), describe(o.Steps))
	}
	return nil
}

// readBoxes reads a shapes file in the shape of the REST API's labels: boxes
// (label, x, y, width, height) and the other shapes by their type and
// geometry field (polygon, mask, keypoints, points, or a class), as
// docs/shapes.md writes them; attributes are allowed and ignored. Anything
// else is an error naming the shape and the field: a file in another shape
// must not turn into a preview without its shapes.
func readBoxes(path string) ([]augment.Box, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var raw []json.RawMessage
	if err := json.Unmarshal(b, &raw); err != nil || raw == nil {
		return nil, fmt.Errorf("%s: want a JSON array of boxes {\"label\", \"x\", \"y\", \"width\", \"height\"} or other shapes", path)
	}
	boxes := make([]augment.Box, len(raw))
	for i, r := range raw {
		if boxes[i], err = readShape(r, i); err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
	}
	return boxes, nil
}

// readShape reads shape i of a shapes file: a box needs its four numbers;
// another shape's box is derived from its geometry, as the lake derives it.
func readShape(r json.RawMessage, i int) (augment.Box, error) {
	var in struct {
		Label      string          `json:"label"`
		X          *float64        `json:"x"`
		Y          *float64        `json:"y"`
		Width      *float64        `json:"width"`
		Height     *float64        `json:"height"`
		Attributes json.RawMessage `json:"attributes"`
		shape.Geometry
	}
	d := json.NewDecoder(bytes.NewReader(r))
	d.DisallowUnknownFields()
	if err := d.Decode(&in); err != nil {
		msg := strings.TrimPrefix(err.Error(), "json: ")
		if strings.HasPrefix(msg, "unknown field") {
			msg += ` (a box has "label", "x", "y", "width", "height" and optional "attributes"; other shapes "type" and their geometry)`
		}
		return augment.Box{}, fmt.Errorf("box %d: %s", i, msg)
	}
	field := fmt.Sprintf("box %d", i)
	l := lake.Box{Label: in.Label, Geometry: in.Geometry}
	if in.Type == "" || in.Type == shape.Box {
		for _, f := range []struct {
			name string
			v    *float64
		}{{"x", in.X}, {"y", in.Y}, {"width", in.Width}, {"height", in.Height}} {
			if f.v == nil {
				return augment.Box{}, fmt.Errorf("%s: %q is missing", field, f.name)
			}
		}
		l.X, l.Y, l.W, l.H = *in.X, *in.Y, *in.Width, *in.Height
	}
	if err := lake.CheckBox(field, l, 0, 0); err != nil {
		return augment.Box{}, err
	}
	out := augment.Box{Label: l.Label, X: l.X, Y: l.Y, W: l.W, H: l.H, Geometry: l.Geometry}
	if in.Type != "" && in.Type != shape.Box && in.Type != shape.Class {
		r := in.Geometry.Bounds()
		out.X, out.Y, out.W, out.H = r.X, r.Y, r.W, r.H
	}
	return out, nil
}

// wholeImage gives class shapes the image's box, as the lake stores them,
// so augmentation keeps them as it keeps a box over the whole frame.
func wholeImage(img []byte, boxes []augment.Box) error {
	info, err := vips.Probe(img)
	if err != nil {
		return err
	}
	for i := range boxes {
		if boxes[i].Type == shape.Class {
			boxes[i].X, boxes[i].Y, boxes[i].W, boxes[i].H = 0, 0, float64(info.Width), float64(info.Height)
		}
	}
	return nil
}

// parseInterleaved lets flags follow the image, as in
// "augment --config a.json IMAGE --out DIR"; flag.Parse alone stops at IMAGE.
func parseInterleaved(fs *flag.FlagSet, args []string) ([]string, error) {
	var rest []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		args = fs.Args()
		if len(args) == 0 {
			return rest, nil
		}
		rest = append(rest, args[0])
		args = args[1:]
	}
}

func ext(format string) string {
	if format == "jpeg" {
		return "jpg"
	}
	return format
}

// writeOutput writes name.<ext> and name.json (source, size, boxes, steps).
func writeOutput(name, source string, o augment.Output) error {
	if err := os.WriteFile(name+"."+ext(o.Format), o.Image, 0o644); err != nil {
		return err
	}
	meta := struct {
		Source string `json:"source"`
		augment.Output
	}{source, o}
	if meta.Boxes == nil {
		meta.Boxes = []augment.Box{}
	}
	b, err := json.MarshalIndent(meta, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(name+".json", append(b, '\n'), 0o644)
}

// describe renders steps as "IMAGE_ROTATION 12.5, FLIP_HORIZONTAL".
func describe(steps []augment.Step) string {
	if len(steps) == 0 {
		return "(no steps)"
	}
	parts := make([]string, len(steps))
	for i, s := range steps {
		switch {
		case s.Type == augment.FlipImage || s.Type == augment.NinetyRotation:
			parts[i] = s.Property
		case s.Type == augment.Shear:
			parts[i] = fmt.Sprintf("%s %g", s.Property, s.Value)
		default:
			parts[i] = fmt.Sprintf("%s %g", s.Type, s.Value)
		}
	}
	return strings.Join(parts, ", ")
}
