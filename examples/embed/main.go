// Command embed shows framelake used as a Go library, with no HTTP, from a
// module of its own (this folder's go.mod, as README "Embedding framelake in
// Go" tells a user to write one): it opens a data folder, adds the images
// named on the command line to a collection, prints what the lake stored,
// and flips the first stored JPEG with package augment.
//
//	cd examples/embed && go run . ./my-data photo1.jpg photo2.png
package main

import (
	"context"
	"fmt"
	"io"
	"log"
	"os"
	"path/filepath"

	"github.com/framelake/framelake/appliance"
	"github.com/framelake/framelake/augment"
	"github.com/framelake/framelake/lake"
)

func main() {
	if len(os.Args) < 3 {
		log.Fatal("usage: embed DATA_DIR FILE...")
	}
	ctx := context.Background()
	a, err := appliance.Open(ctx, appliance.Config{DataDir: os.Args[1]}) // no Addr: no HTTP server
	if err != nil {
		log.Fatal(err)
	}
	defer a.Close()

	var ups []lake.Upload
	for _, p := range os.Args[2:] {
		ups = append(ups, lake.Upload{Name: filepath.Base(p), Open: func() (io.ReadCloser, error) { return os.Open(p) }})
	}
	res, err := a.Lake.Add(ctx, lake.AddOptions{Collection: "embedded", SkipExisting: true}, ups)
	if err != nil {
		log.Fatal(err)
	}
	for _, f := range res.Stored {
		fmt.Printf("stored  %s  %s %dx%d  %d bytes\n", f.UniqueName, f.Type, f.Width, f.Height, f.Size)
	}
	for _, f := range res.Skipped {
		fmt.Printf("skipped %s (already in the collection)\n", f.UniqueName)
	}
	for _, r := range res.Rejected {
		fmt.Printf("refused %s: %s\n", r.Name, r.Reason)
	}
	for _, p := range os.Args[2:] {
		if ext := filepath.Ext(p); ext == ".jpg" || ext == ".jpeg" {
			if err := flip(ctx, p); err != nil {
				log.Fatal(err)
			}
			break
		}
	}
}

// flip augments one JPEG without an appliance: a horizontal flip moves its
// box with the pixels.
func flip(ctx context.Context, path string) error {
	jpegBytes, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	cfg, err := augment.Parse([]byte(`{"IMAGE_LEVEL": [{"id": "FLIP_IMAGE",
		"properties": [{"id": "FLIP_HORIZONTAL", "values": [true]}]}]}`))
	if err != nil {
		return err
	}
	boxes := []augment.Box{{Label: "thing", X: 0, Y: 0, W: 10, H: 10}}
	var seed uint64 = 7 // draws the steps; the same seed, the same output
	out, err := augment.Apply(ctx, jpegBytes, boxes, cfg, seed, augment.Options{})
	if err != nil {
		return err
	}
	fmt.Printf("flipped %s: %dx%d %s, box at x=%g\n", filepath.Base(path), out.Width, out.Height, out.Format, out.Boxes[0].X)
	return nil
}
