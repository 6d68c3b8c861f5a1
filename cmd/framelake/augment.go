package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/framelake/framelake/augment"
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
	config := fs.String("config", "", "augmentation configuration (JSON, INTERFACE.md 2.9)")
	seed := fs.Uint64("seed", 0, "seed; equal seeds give equal outputs")
	n := fs.Int("n", 1, "number of outputs")
	boxesPath := fs.String("boxes", "", `boxes of the image: JSON array of {"label","x","y","w","h"} in pixels`)
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
		b, err := os.ReadFile(*boxesPath)
		if err != nil {
			return err
		}
		if err := json.Unmarshal(b, &boxes); err != nil {
			return fmt.Errorf("%s: %w", *boxesPath, err)
		}
	}
	img, err := os.ReadFile(images[0])
	if err != nil {
		return err
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
		fmt.Printf("%s.%s  %dx%d  %d/%d boxes  %s\n", name, ext(o.Format), o.Width, o.Height, len(o.Boxes), len(boxes), describe(o.Steps))
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
