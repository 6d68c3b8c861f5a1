package labelimport

import (
	"context"
	"database/sql"
	"io"
	"os"
	"path/filepath"
	"sync"

	"golang.org/x/sys/unix"

	"github.com/framelake/framelake/annotate"
	"github.com/framelake/framelake/lake"
)

// LakeSink writes batches into l. A new file's boxes are written in the
// transaction that stores it, so a kill never leaves a labelled file
// without its boxes; files already there get theirs in a transaction after.
// With a session the files go to its collection and become its frames, in
// that same transaction, their boxes the project's; a file that is a frame
// already keeps the boxes reviewers may have changed.
func LakeSink(l *lake.Lake, ann *annotate.Service, coll string) Sink {
	return func(ctx context.Context, b Batch) (Outcome, error) {
		ups := make([]lake.Upload, len(b.Paths))
		for i, p := range b.Paths {
			ups[i] = lake.Upload{Name: filepath.Base(p), Open: func() (io.ReadCloser, error) { return openPlain(p) }}
		}
		target := coll
		if b.Session != nil {
			target = b.Session.CollectionName
		}
		fitted := map[string][]lake.Box{}
		type ready struct {
			boxes *lake.ImportBoxes
			err   error // fails the transaction, as a bad box did in it
		}
		prepared := map[string]ready{}
		var inTx lake.SetBoxesResult
		opt := lake.AddOptions{Collection: target, Metadata: b.Metadata, SkipExisting: true}
		if b.Boxes != nil {
			// Check sees each new file once, measured: its boxes are placed,
			// checked and encoded there, not in the transaction, which holds
			// the lake's one writer.
			var mu sync.Mutex
			opt.Check = func(i int, f lake.File) error {
				boxes := b.Boxes(ups[i].Name, f.Width, f.Height)
				var r ready
				if b.Session == nil {
					r.boxes, r.err = lake.PrepareImportBoxes(i, f, boxes)
				}
				mu.Lock()
				fitted[ups[i].Name] = boxes
				prepared[ups[i].Name] = r
				mu.Unlock()
				return nil
			}
		}
		opt.InTx = func(ctx context.Context, tx *sql.Tx, stored []lake.File) (err error) {
			if b.CollectionMeta != nil {
				if err := lake.PatchCollectionMetadataTx(ctx, tx, target, b.CollectionMeta); err != nil {
					return err
				}
			}
			if b.Session != nil {
				inTx.Changed = len(stored)
				for name, bs := range fitted { // the project's frames keep boxes as given
					fitted[name] = lake.WithoutImportFacts(bs)
				}
				return ann.ImportFramesTx(ctx, tx, *b.Session, stored, fitted)
			}
			if b.Boxes == nil {
				return nil
			}
			if inTx, err = lake.InsertImportBoxesTx(ctx, tx, b.Operation, stored, func(f lake.File) (*lake.ImportBoxes, error) {
				r := prepared[f.Name]
				return r.boxes, r.err
			}); err != nil {
				return err
			}
			ids := map[int64]int64{}
			for _, f := range stored {
				if id, ok := b.ImageIDs[f.Name]; ok {
					ids[f.Seq()] = id
				}
			}
			return lake.SetImageIDsTx(ctx, tx, b.Operation, ids)
		}
		res, err := l.Add(ctx, opt, ups)
		out := Outcome{Stored: lakeRefs(res.Stored), Skipped: lakeRefs(res.Skipped), Rejected: res.Rejected, Boxes: inTx}
		if err != nil || b.Boxes == nil || len(res.Skipped) == 0 {
			return out, err
		}
		if b.Session != nil {
			out.Boxes.Unchanged += len(res.Skipped)
			return out, nil
		}
		after, err := l.SetHumanBoxes(ctx, b.Operation, FileBoxes(out.Skipped, b.Boxes))
		out.Boxes.Changed += after.Changed
		out.Boxes.Unchanged += after.Unchanged
		if err != nil || b.ImageIDs == nil {
			return out, err
		}
		ids := map[string]int64{}
		for _, f := range out.Skipped {
			if id, ok := b.ImageIDs[f.Name]; ok {
				ids[f.UniqueName] = id
			}
		}
		return out, l.SetImageIDs(ctx, b.Operation, ids)
	}
}

// openPlain opens a file to read with two system calls where os.Open makes
// six: os.Open learns that a regular file cannot be polled by trying it
// (four fcntl and an epoll_ctl), for every image an import reads; os.NewFile
// asks for the descriptor's flags once and does not try.
func openPlain(p string) (*os.File, error) {
	fd, err := unix.Open(p, unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: p, Err: err}
	}
	return os.NewFile(uintptr(fd), p), nil
}

func lakeRefs(fs []lake.File) []FileRef {
	out := make([]FileRef, len(fs))
	for i, f := range fs {
		out[i] = FileRef{f.Name, f.UniqueName, f.Width, f.Height}
	}
	return out
}

// FileBoxes asks boxes for the boxes of each file.
func FileBoxes(refs []FileRef, boxes BoxesFunc) []lake.FileBoxes {
	out := make([]lake.FileBoxes, len(refs))
	for i, r := range refs {
		out[i] = lake.FileBoxes{UniqueName: r.UniqueName, Boxes: boxes(r.Name, r.Width, r.Height)}
	}
	return out
}
