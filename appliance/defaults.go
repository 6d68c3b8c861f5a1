package appliance

import (
	"archive/tar"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/framelake/framelake/analysis"
)

// defaultApplications are the folders `make models` writes, one per application.
var defaultApplications = []string{"auto_tagging", "embedding", "auto_annotation", "segmentation"}

// HasDefaultModels reports whether dir holds at least one system default
// model package, as `make models` lays them out (one folder per application).
func HasDefaultModels(dir string) bool {
	for _, app := range defaultApplications {
		if st, err := os.Stat(filepath.Join(dir, app)); err == nil && st.IsDir() {
			return true
		}
	}
	return false
}

// registerDefaults registers the system default model packages found in dir
// as analysis.DefaultName(app) (default-embedding, ...). A hash of each
// folder's files tells a rebuilt package, which replaces the registered one,
// from an unchanged one, which costs only the hash at start.
func (a *Appliance) registerDefaults(ctx context.Context, dir string) error {
	for _, app := range defaultApplications {
		// Resolved, because the walks below do not enter a linked folder.
		folder, err := filepath.EvalSymlinks(filepath.Join(dir, app))
		if err != nil {
			a.log.Warn("system default model not installed; run make models", "application", app,
				"folder", filepath.Join(dir, app))
			continue
		}
		sum, err := hashFolder(folder)
		if err != nil {
			return err
		}
		installed, err := a.Analysis.InstallDefault(ctx, analysis.Application(app), sum,
			func(w io.Writer) error { return packFolder(w, folder) })
		if err != nil {
			return err
		}
		if installed {
			a.log.Info("registered system default model", "application", app, "model", analysis.DefaultName(analysis.Application(app)))
		}
	}
	return nil
}

// hashFolder hashes the names and bytes of every file under dir.
func hashFolder(dir string) (string, error) {
	var paths []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() && !strings.Contains(p, "__pycache__") {
			paths = append(paths, p)
		}
		return err
	})
	if err != nil {
		return "", err
	}
	sort.Strings(paths)
	h := sha256.New()
	for _, p := range paths {
		rel, _ := filepath.Rel(dir, p)
		h.Write([]byte(rel + "\x00"))
		f, err := os.Open(p)
		if err != nil {
			return "", err
		}
		_, err = io.Copy(h, f)
		f.Close()
		if err != nil {
			return "", err
		}
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// packFolder writes dir as a .tar.gz of its regular files and folders. The
// archive goes through a pipe to the registry in this process, so it is
// stored, not compressed: compressing 48 MB of weights cost 3-4 CPU-seconds
// at every first start on a data folder.
func packFolder(w io.Writer, dir string) error {
	gz, _ := gzip.NewWriterLevel(w, gzip.NoCompression)
	tw := tar.NewWriter(gz)
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || p == dir || strings.Contains(p, "__pycache__") {
			return err
		}
		info, err := d.Info()
		if err != nil || !(info.Mode().IsRegular() || info.IsDir()) {
			return err
		}
		hdr, err := tar.FileInfoHeader(info, "")
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		hdr.Name = filepath.ToSlash(rel)
		if err := tw.WriteHeader(hdr); err != nil || info.IsDir() {
			return err
		}
		f, err := os.Open(p)
		if err != nil {
			return err
		}
		defer f.Close()
		_, err = io.Copy(tw, f)
		return err
	})
	if err == nil {
		err = tw.Close()
	}
	if err == nil {
		err = gz.Close()
	}
	return err
}
