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
var defaultApplications = []string{"auto_tagging", "embedding", "auto_annotation"}

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
// as ordinary models marked as their application's default. A model's name
// carries a hash of its files, so a rebuilt package replaces the old one and
// an unchanged one costs only the hash at start.
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
		prefix := "system-" + strings.ReplaceAll(app, "_", "-") + "-"
		name := prefix + sum[:12]
		if err := a.replaceDefault(ctx, app, prefix, name, folder); err != nil {
			return err
		}
		on := true
		if _, err := a.Analysis.UpdateModel(ctx, name, analysis.ModelUpdate{SystemDefault: &on}); err != nil {
			return err
		}
	}
	return nil
}

// replaceDefault registers folder as name unless it is registered already,
// removing earlier builds of the same default.
func (a *Appliance) replaceDefault(ctx context.Context, app, prefix, name, folder string) error {
	models, err := a.Analysis.Models(ctx)
	if err != nil {
		return err
	}
	for _, m := range models {
		if m.Name == name {
			return nil
		}
		if strings.HasPrefix(m.Name, prefix) {
			if err := a.Analysis.DeleteModel(ctx, m.Name); err != nil {
				return err
			}
		}
	}
	pr, pw := io.Pipe()
	go func() { pw.CloseWithError(packFolder(pw, folder)) }()
	_, err = a.Analysis.Register(ctx, analysis.RegisterRequest{Name: name, Application: app, Package: pr,
		CreatedBy: "framelake"})
	pr.CloseWithError(err)
	if err == nil {
		a.log.Info("registered system default model", "application", app, "model", name)
	}
	return err
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

// packFolder writes dir as a .tar.gz of its regular files and folders.
func packFolder(w io.Writer, dir string) error {
	gz := gzip.NewWriter(w)
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
