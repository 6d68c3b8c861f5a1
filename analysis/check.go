package analysis

import (
	"context"
	"database/sql"
	"errors"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// OrphanModelDirs lists the package folders under modelsDir (<data>/models)
// that no model row names: what a crash leaves of a registration (installed,
// not yet recorded) or of a replacement (recorded, the old folder not yet
// removed). Only folders named like model ids (mod_*) are considered, so a
// folder of default packages kept there is never taken for one.
func OrphanModelDirs(ctx context.Context, db *sql.DB, modelsDir string) ([]string, error) {
	entries, err := os.ReadDir(modelsDir)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	rows, err := db.QueryContext(ctx, `SELECT dir FROM model`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	named := map[string]bool{}
	for rows.Next() {
		var dir string
		if err := rows.Scan(&dir); err != nil {
			return nil, err
		}
		named[filepath.Clean(dir)] = true
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	var out []string
	for _, e := range entries {
		if e.IsDir() && strings.HasPrefix(e.Name(), "mod_") && !named[e.Name()] {
			out = append(out, filepath.Join(modelsDir, e.Name()))
		}
	}
	sort.Strings(out)
	return out, nil
}

// removeOrphanModelDirs clears what interrupted registrations left. It runs
// when the service opens, before any registration can be in flight (the
// data folder has one process).
func (s *Service) removeOrphanModelDirs(ctx context.Context) error {
	dirs, err := OrphanModelDirs(ctx, s.db.R, filepath.Join(s.opt.DataDir, "models"))
	if err != nil {
		return err
	}
	for _, d := range dirs {
		if err := os.RemoveAll(d); err != nil {
			return err
		}
		s.log.Warn("removed the package folder of an interrupted model registration", "folder", filepath.Base(d))
	}
	return nil
}
