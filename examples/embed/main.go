// Command embed shows framelake used as a Go library, with no HTTP: it opens
// a data folder, adds the images named on the command line to a collection,
// and prints what the lake stored.
//
//	go run ./examples/embed ./my-data photo1.jpg photo2.png
package main

import (
	"context"
	"fmt"
	"io"
	"log"
	"os"
	"path/filepath"

	"github.com/framelake/framelake/appliance"
	"github.com/framelake/framelake/lake"
)

func main() {
	if len(os.Args) < 3 {
		log.Fatal("usage: embed DATA_DIR FILE...")
	}
	ctx := context.Background()
	a, err := appliance.Open(ctx, appliance.Config{DataDir: os.Args[1]})
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
}
