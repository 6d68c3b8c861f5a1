package main

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"golang.org/x/sys/unix"

	"github.com/framelake/framelake/dataset"
	"github.com/framelake/framelake/internal/replica"
	"github.com/framelake/framelake/internal/sqlitedb"
	"github.com/framelake/framelake/lake"
)

// A backup is a data folder: framelake.db (a VACUUM INTO snapshot), the
// blobs that snapshot names under media/, and every other file of the folder
// (keys, model packages), hard-linked where the file system allows. Blobs and
// keys are only ever replaced by a rename, never written in place, so a link
// keeps the bytes of the moment it was made. framelake.db is the last thing
// a backup writes: a folder without it is an unfinished backup.

// backupSummary is what backup and restore print.
type backupSummary struct {
	Out     string  `json:"out"`
	Blobs   int     `json:"blobs,omitempty"` // backup: the blobs the database copy names
	Files   int     `json:"files,omitempty"` // restore: every file of the backup
	Linked  int     `json:"linked"`          // files hard-linked; the rest were copied
	Copied  int     `json:"copied"`
	Bytes   int64   `json:"bytes"` // of the blobs
	Seconds float64 `json:"seconds"`
	// Media is the bucket the lake's media lives in, which a backup leaves
	// to the bucket's own versioning or replication; "" for the local folder.
	Media string `json:"media,omitempty"`
}

func cmdBackup(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("backup", flag.ContinueOnError)
	data := fs.String("data", envOr("FRAMELAKE_DATA", "./framelake-data"), "data folder (env FRAMELAKE_DATA); a server may be running on it")
	out := fs.String("out", "", "backup folder to create (must not exist, or be empty)")
	asJSON := fs.Bool("json", false, "print the summary as JSON")
	if err := parse(fs, args, 0); err != nil {
		return err
	}
	if *out == "" {
		return errors.New("--out is required")
	}
	start := time.Now()
	s, err := backup(ctx, *data, *out)
	if err != nil {
		return err
	}
	s.Seconds = time.Since(start).Seconds()
	return printBackup(s, *asJSON, "backed up")
}

func printBackup(s backupSummary, asJSON bool, verb string) error {
	if asJSON {
		return json.NewEncoder(os.Stdout).Encode(s)
	}
	what := fmt.Sprintf("%d blobs (%d MiB)", s.Blobs, s.Bytes>>20)
	if s.Files > 0 {
		what = fmt.Sprintf("%d files", s.Files)
	}
	fmt.Printf("%s %s to %s in %.1fs: %d files hard-linked, %d copied\n",
		verb, what, s.Out, s.Seconds, s.Linked, s.Copied)
	if s.Media != "" {
		fmt.Printf("the media is in %s and was not copied: the backup's database names it\n", s.Media)
	}
	return nil
}

func backup(ctx context.Context, data, out string) (backupSummary, error) {
	s := backupSummary{Out: out}
	dbPath := filepath.Join(data, "framelake.db")
	if _, err := os.Stat(dbPath); err != nil {
		return s, fmt.Errorf("%s is not a framelake data folder: %w", data, err)
	}
	if inside(out, data) {
		return s, fmt.Errorf("--out %s is inside the data folder: give a folder outside it", out)
	}
	if err := emptyFolder(out); err != nil {
		return s, err
	}
	db, err := sqlitedb.Open(ctx, dbPath, sqlitedb.Options{Readers: 1})
	if err != nil {
		return s, err
	}
	part := filepath.Join(out, "framelake.db.part")
	// One read transaction: the copy is the database as of one commit.
	_, err = db.W.ExecContext(ctx, `VACUUM INTO ?`, part)
	db.Close()
	if err != nil {
		return s, fmt.Errorf("copy database: %w", err)
	}
	if err := backupBlobs(ctx, part, data, out, &s); err != nil {
		return s, err
	}
	if err := copyTree(data, out, &s, skipInData); err != nil {
		return s, err
	}
	return s, finishFolder(out, part, filepath.Join(out, "framelake.db"))
}

// skipInData are the data folder's entries a backup does not copy as they
// are: the live database (copied by VACUUM INTO), media (only named blobs),
// the lock and Litestream's state of serve --replica (a restored backup
// starts its replication anew).
func skipInData(rel string) bool {
	switch rel {
	case "framelake.db", "framelake.db-wal", "framelake.db-shm", "media", "framelake.lock", "framelake.db.part",
		".framelake.db-litestream":
		return true
	}
	return false
}

// backupBlobs links the blobs the database copy names into out/media. A
// blob named in the copy and gone from the folder was deleted after the
// copy was taken: the backup fails and can be run again.
func backupBlobs(ctx context.Context, dbCopy, data, out string, s *backupSummary) error {
	db, err := sqlitedb.Open(ctx, dbCopy, sqlitedb.Options{Readers: 1})
	if err != nil {
		return err
	}
	defer db.Close()
	tx, err := db.R.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return err
	}
	defer tx.Rollback()
	// Read in tx: the copy's one reader connection is the transaction's.
	if s.Media, err = lake.MediaLocation(ctx, tx); err != nil || s.Media != "" {
		return err
	}
	seen := map[string]bool{}
	var keys []string
	add := func(n lake.NamedBlob) {
		k := filepath.Join(n.Hash[:2], n.Hash[2:4], n.Hash+"."+n.Ext)
		if !seen[k] {
			seen[k] = true
			keys = append(keys, k)
		}
	}
	for _, namer := range []lake.BlobNamer{lake.FileBlobs, dataset.VersionBlobs} {
		if err := namer(ctx, tx, add); err != nil {
			return fmt.Errorf("read database copy: %w", err)
		}
	}
	var gone int
	for _, k := range keys {
		if err := ctx.Err(); err != nil {
			return err
		}
		n, err := linkOrCopy(filepath.Join(data, "media", k), filepath.Join(out, "media", k), s)
		if errors.Is(err, os.ErrNotExist) {
			gone++
			continue
		}
		if err != nil {
			return err
		}
		s.Blobs++
		s.Bytes += n
	}
	if gone > 0 {
		return fmt.Errorf("%d blobs were deleted while backing up (files deleted meanwhile); run the backup again", gone)
	}
	return nil
}

// linkOrCopy hard-links src to dst, or copies it when the file systems
// differ, creating dst's folder; it returns src's size.
func linkOrCopy(src, dst string, s *backupSummary) (int64, error) {
	st, err := os.Lstat(src)
	if err != nil {
		return 0, err
	}
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return 0, err
	}
	if st.Mode()&os.ModeSymlink != 0 {
		target, err := os.Readlink(src)
		if err == nil {
			err = os.Symlink(target, dst)
		}
		return 0, err
	}
	if err := os.Link(src, dst); err == nil {
		s.Linked++
		return st.Size(), nil
	}
	s.Copied++
	return st.Size(), copyFile(src, dst, st.Mode().Perm())
}

func copyFile(src, dst string, perm os.FileMode) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

// copyTree links or copies every file under from into to but the top-level
// entries skip names (by path relative to from).
func copyTree(from, to string, s *backupSummary, skip func(rel string) bool) error {
	return filepath.WalkDir(from, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(from, p)
		if rel == "." {
			return nil
		}
		if skip(rel) {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(to, rel), 0o755)
		}
		_, err = linkOrCopy(p, filepath.Join(to, rel), s)
		return err
	})
}

// inside reports whether path is dir or under it.
func inside(path, dir string) bool {
	p, err1 := filepath.Abs(path)
	d, err2 := filepath.Abs(dir)
	rel, err3 := filepath.Rel(d, p)
	return errors.Join(err1, err2, err3) == nil && (rel == "." || filepath.IsLocal(rel))
}

// emptyFolder makes dir, or checks that it is an empty folder.
func emptyFolder(dir string) error {
	ents, err := os.ReadDir(dir)
	if errors.Is(err, os.ErrNotExist) {
		return os.MkdirAll(dir, 0o700)
	}
	if err != nil {
		return err
	}
	if len(ents) > 0 {
		return fmt.Errorf("%s is not empty: give a new or empty folder", dir)
	}
	return nil
}

// finishFolder makes everything under dir durable, then renames the
// database into place, which marks the folder complete.
func finishFolder(dir, part, final string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	if err := unix.Syncfs(int(d.Fd())); err != nil {
		return fmt.Errorf("sync %s: %w", dir, err)
	}
	if err := os.Rename(part, final); err != nil {
		return err
	}
	return d.Sync()
}

func cmdRestore(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("restore", flag.ContinueOnError)
	from := fs.String("from", "", "backup folder made by framelake backup, or the replica URL serve --replica streams to "+
		"(s3://bucket/prefix?endpoint=URL&region=R or file:///folder)")
	data := fs.String("data", envOr("FRAMELAKE_DATA", "./framelake-data"), "new data folder to create (must not exist, or be empty)")
	at := fs.String("timestamp", "", "with a replica URL: restore the database as it was at this time "+
		"(RFC 3339, e.g. 2026-11-25T16:04:05Z; default its newest replicated state)")
	asJSON := fs.Bool("json", false, "print the summary as JSON")
	if err := parse(fs, args, 0); err != nil {
		return err
	}
	if *from == "" {
		return errors.New("--from is required")
	}
	if replica.IsURL(*from) {
		return restoreReplica(ctx, *from, *data, *at, *asJSON)
	}
	if *at != "" {
		return errors.New("--timestamp needs a replica URL in --from: a backup folder holds one moment")
	}
	start := time.Now()
	s := backupSummary{Out: *data}
	src := filepath.Join(*from, "framelake.db")
	if _, err := os.Stat(src); err != nil {
		return fmt.Errorf("%s is not a finished framelake backup: %w", *from, err)
	}
	if inside(*data, *from) {
		return fmt.Errorf("--data %s is inside the backup: give a folder outside it", *data)
	}
	if err := emptyFolder(*data); err != nil {
		return err
	}
	// The database is copied, not linked: the restored folder writes to it
	// and the backup must stay as it was.
	part := filepath.Join(*data, "framelake.db.part")
	if err := copyFile(src, part, 0o600); err != nil {
		return err
	}
	err := copyTree(*from, *data, &s, func(rel string) bool {
		return rel == "framelake.db" || rel == "framelake.db.part" || rel == "framelake.lock"
	})
	if err != nil {
		return err
	}
	if err := finishFolder(*data, part, filepath.Join(*data, "framelake.db")); err != nil {
		return err
	}
	s.Files = s.Linked + s.Copied + 1 // and the database
	s.Seconds = time.Since(start).Seconds()
	return printBackup(s, *asJSON, "restored")
}
