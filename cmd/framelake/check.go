package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"

	"github.com/framelake/framelake/analysis"
	"github.com/framelake/framelake/appliance"
	"github.com/framelake/framelake/dataset"
	"github.com/framelake/framelake/internal/job"
	"github.com/framelake/framelake/internal/sqlitedb"
	"github.com/framelake/framelake/labelimport"
	"github.com/framelake/framelake/lake"
)

// checkReport is what `framelake check` found; --json prints it as is.
type checkReport struct {
	Data          string    `json:"data"`
	ServerRunning bool      `json:"serverRunning"` // a server or import has the folder open
	Files         int       `json:"files"`         // rows naming a blob (files and dataset frames)
	Blobs         int       `json:"blobs"`
	Media         string    `json:"media,omitempty"` // the bucket the blobs are in; "" for the local folder
	InFlight      int       `json:"inFlight"`        // blobs an upload in progress is placing
	Problems      []finding `json:"problems"`
	Notes         []string  `json:"notes"`
	Repaired      int       `json:"repaired"`
}

// finding is one problem. Repaired says --repair fixed it.
type finding struct {
	Kind     string `json:"kind"` // sqlite_integrity, foreign_key, missing_blob, orphan_blob, version_half_built, job_interrupted, unfinished_import, orphan_model
	Subject  string `json:"subject"`
	Detail   string `json:"detail"`
	Repaired bool   `json:"repaired"`
}

func (r *checkReport) add(kind, subject, format string, a ...any) *finding {
	r.Problems = append(r.Problems, finding{Kind: kind, Subject: subject, Detail: fmt.Sprintf(format, a...)})
	return &r.Problems[len(r.Problems)-1]
}

func (r *checkReport) unrepaired() int {
	n := 0
	for _, p := range r.Problems {
		if !p.Repaired {
			n++
		}
	}
	return n
}

func cmdCheck(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("check", flag.ContinueOnError)
	data := fs.String("data", envOr("FRAMELAKE_DATA", "./framelake-data"), "data folder (env FRAMELAKE_DATA)")
	asJSON := fs.Bool("json", false, "print the report as JSON")
	repair := fs.Bool("repair", false, "fix what can be fixed safely (needs the folder to itself: no server running)")
	if err := parse(fs, args, 0); err != nil {
		return err
	}
	r, err := checkData(ctx, *data, *repair)
	if err != nil {
		return err
	}
	if *asJSON {
		enc := json.NewEncoder(os.Stdout)
		enc.SetIndent("", "  ")
		err = enc.Encode(r)
	} else {
		err = printCheck(os.Stdout, r)
	}
	if err != nil {
		return err
	}
	if n := r.unrepaired(); n > 0 {
		return fmt.Errorf("%d problem%s in %s", n, plural(n), *data)
	}
	return nil
}

// checkData checks the data folder, repairing when asked and when no other
// process has it open. Without --repair it only reads.
func checkData(ctx context.Context, data string, repair bool) (*checkReport, error) {
	dbPath := filepath.Join(data, "framelake.db")
	if _, err := os.Stat(dbPath); err != nil {
		return nil, fmt.Errorf("%s is not a framelake data folder: %w", data, err)
	}
	lock, alone, err := appliance.TryExclusive(data)
	if err != nil {
		return nil, err
	}
	defer lock.Release()
	r := &checkReport{Data: data, ServerRunning: !alone, Problems: []finding{}, Notes: []string{}}
	if repair && !alone {
		r.Notes = append(r.Notes, "a server or import has this folder open: nothing was repaired; stop it and run --repair again")
		repair = false
	}
	db, err := sqlitedb.Open(ctx, dbPath, sqlitedb.Options{Readers: 2})
	if err != nil {
		return nil, err
	}
	defer db.Close()
	if err := checkSQLite(ctx, db, r); err != nil {
		return nil, err
	}
	if missing, err := missingTables(ctx, db, "file", "dataset_version", "version_item", "job", "model"); err != nil {
		return nil, err
	} else if missing != "" {
		r.Notes = append(r.Notes, "the database has no table "+missing+" yet: its first start was interrupted, "+
			"and the next start sets it up")
		return r, nil
	}
	media := filepath.Join(data, "media")
	mr, err := lake.CheckMedia(ctx, db, media, dataset.VersionBlobs)
	if err != nil {
		return nil, err
	}
	r.Media = mr.Location
	if err := mediaFindings(ctx, r, mr, media, repair); err != nil {
		return nil, err
	}
	vp, stale, err := dataset.CheckVersions(ctx, db.R)
	if err != nil {
		return nil, err
	}
	for _, p := range vp {
		r.add("version_half_built", "dataset version "+p.VersionID, "%s", p.Problem)
	}
	if stale > 0 {
		r.Notes = append(r.Notes, fmt.Sprintf("%d frames of superseded dataset builds; the next build of their version clears them", stale))
	}
	if err := checkImports(ctx, db, filepath.Join(data, "imports"), r); err != nil {
		return nil, err
	}
	if !alone {
		return r, nil // running jobs and registrations belong to the live server
	}
	if err := checkJobs(ctx, db, r, repair); err != nil {
		return nil, err
	}
	return r, checkModels(ctx, db, filepath.Join(data, "models"), r, repair)
}

// missingTables names the first of tables the database lacks, or "".
func missingTables(ctx context.Context, db *sqlitedb.DB, tables ...string) (string, error) {
	for _, t := range tables {
		var n int
		err := db.R.QueryRowContext(ctx, `SELECT count(*) FROM sqlite_schema WHERE type = 'table' AND name = ?`, t).Scan(&n)
		if err != nil || n == 0 {
			return t, err
		}
	}
	return "", nil
}

func checkSQLite(ctx context.Context, db *sqlitedb.DB, r *checkReport) error {
	rows, err := db.R.QueryContext(ctx, `PRAGMA integrity_check(100)`)
	if err != nil {
		return fmt.Errorf("integrity_check: %w", err)
	}
	for rows.Next() {
		var msg string
		if err := rows.Scan(&msg); err != nil {
			rows.Close()
			return err
		}
		if msg != "ok" {
			r.add("sqlite_integrity", "framelake.db", "%s", msg)
		}
	}
	rows.Close()
	rows, err = db.R.QueryContext(ctx, `PRAGMA foreign_key_check`)
	if err != nil {
		return fmt.Errorf("foreign_key_check: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var table, parent string
		var rowid, fkid any
		if err := rows.Scan(&table, &rowid, &parent, &fkid); err != nil {
			return err
		}
		r.add("foreign_key", table, "row %v names a missing %s row", rowid, parent)
	}
	return rows.Err()
}

func mediaFindings(ctx context.Context, r *checkReport, mr lake.MediaReport, media string, repair bool) error {
	r.Files, r.Blobs, r.InFlight = mr.Named, mr.Blobs, mr.InFlight
	for _, n := range mr.Missing {
		r.add("missing_blob", n.Owner, "its bytes %s.%s are missing or not whole; restore them from a backup", n.Hash, n.Ext)
	}
	first := len(r.Problems)
	for _, k := range mr.Orphans {
		r.add("orphan_blob", "media "+k, "no file or dataset frame names it and no placing journal lists it "+
			"(a kill between dropping rows and removing their blob, or a dataset build resumed and not yet done); "+
			"--repair removes it")
	}
	if len(mr.Strays) > 0 {
		r.Notes = append(r.Notes, fmt.Sprintf("%d files in the media folder are not blobs (left alone), e.g. %s",
			len(mr.Strays), mr.Strays[0]))
	}
	if len(mr.Journals) > 0 {
		r.Notes = append(r.Notes, fmt.Sprintf("%d placing journals of interrupted uploads list %d blobs no row names; "+
			"the next server or import that writes, or --repair, removes them", len(mr.Journals), len(mr.Leftover)))
	}
	if !repair || len(mr.Orphans)+len(mr.Journals) == 0 {
		return nil
	}
	n, err := lake.RepairMedia(ctx, media, mr)
	for i := first; i < first+min(n, len(mr.Orphans)); i++ {
		r.Problems[i].Repaired = true
	}
	r.Repaired += n
	return err
}

func checkJobs(ctx context.Context, db *sqlitedb.DB, r *checkReport, repair bool) error {
	q := job.New(db, job.Options{Logger: discardLogger()})
	running, err := q.Running(ctx)
	if err != nil {
		return err
	}
	first := len(r.Problems)
	for _, j := range running {
		r.add("job_interrupted", "job "+j.ID, "%s job left running by a process that is gone (start %d); "+
			"the next start resumes it, --repair queues it now (failed with a reason after 3 crashed starts)", j.Type, j.Attempts)
	}
	if !repair || len(running) == 0 {
		return nil
	}
	if err := q.Settle(ctx); err != nil {
		return err
	}
	for i := first; i < len(r.Problems); i++ {
		r.Problems[i].Repaired = true
	}
	r.Repaired += len(running)
	return nil
}

// checkImports reports the import jobs that failed, which the lake holds
// in part: each keeps its archive until it is retried (which finishes it,
// skipping the files already in) or cancelled (which gives it up).
// --repair cannot do either for the user.
func checkImports(ctx context.Context, db *sqlitedb.DB, imports string, r *checkReport) error {
	q := job.New(db, job.Options{Logger: discardLogger()})
	for page := 0; ; page++ {
		jobs, _, err := q.List(ctx, job.ListOptions{Types: []string{labelimport.JobType}, Status: []job.Status{job.Failed},
			PageIndex: page, PageSize: job.MaxPageSize})
		if err != nil {
			return err
		}
		for _, j := range jobs {
			var p struct{ Archive string }
			kept := "its archive is kept in imports/"
			if json.Unmarshal(j.Payload, &p) != nil || p.Archive == "" {
				kept = "it has no archive"
			} else if _, err := os.Stat(filepath.Join(imports, filepath.Base(p.Archive))); err != nil {
				kept = "its archive is gone (upload it again)"
			}
			r.add("unfinished_import", "job "+j.ID, "import failed with %d of %d files done (%s); %s: "+
				"POST /api/v1/jobs/%s/retry finishes it, skipping the files already in; cancel gives it up",
				j.Done, j.Total, j.Error, kept, j.ID)
		}
		if len(jobs) < job.MaxPageSize {
			return nil
		}
	}
}

// checkModels finds package folders no model names (a registration or
// replacement a crash interrupted); the next start removes them too.
func checkModels(ctx context.Context, db *sqlitedb.DB, models string, r *checkReport, repair bool) error {
	dirs, err := analysis.OrphanModelDirs(ctx, db.R, models)
	if err != nil {
		return err
	}
	for _, d := range dirs {
		f := r.add("orphan_model", "models/"+filepath.Base(d), "a model package folder no model names (an interrupted "+
			"registration); the next start or --repair removes it")
		if repair {
			if err := os.RemoveAll(d); err != nil {
				return err
			}
			f.Repaired = true
			r.Repaired++
		}
	}
	return nil
}

func printCheck(w io.Writer, r *checkReport) error {
	state := "no server running"
	if r.ServerRunning {
		state = "a server or import has it open"
	}
	where := "on disk"
	if r.Media != "" {
		where = "in " + r.Media
	}
	fmt.Fprintf(w, "%s (%s): %d rows naming blobs, %d blobs %s, %d being placed\n",
		r.Data, state, r.Files, r.Blobs, where, r.InFlight)
	for _, p := range r.Problems {
		mark := "problem"
		if p.Repaired {
			mark = "repaired"
		}
		fmt.Fprintf(w, "%-8s %s: %s: %s\n", mark, p.Kind, p.Subject, p.Detail)
	}
	for _, n := range r.Notes {
		fmt.Fprintf(w, "note     %s\n", n)
	}
	if n := r.unrepaired(); n == 0 {
		_, err := fmt.Fprintf(w, "ok: no problems (%d repaired)\n", r.Repaired)
		return err
	}
	return nil
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

func discardLogger() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }
