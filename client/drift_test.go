package client_test

import (
	"encoding/json"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/framelake/framelake/analysis"
	"github.com/framelake/framelake/annotate"
	"github.com/framelake/framelake/client"
	"github.com/framelake/framelake/curate"
	"github.com/framelake/framelake/dataset"
	"github.com/framelake/framelake/evaluate"
	"github.com/framelake/framelake/internal/auth"
	"github.com/framelake/framelake/labelnext"
	"github.com/framelake/framelake/lake"
)

// jsonFields lists the JSON names a struct type reads and writes, lower
// case as encoding/json matches them, with those of embedded structs, and of
// nested structs as "outer.inner"; a field the client keeps whole (raw
// JSON, a map, any) is "name.*", which covers whatever the server nests
// under it.
func jsonFields(t reflect.Type, prefix string, out map[string]bool) {
	for t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice || t.Kind() == reflect.Map {
		t = t.Elem()
	}
	if t.Kind() != reflect.Struct || t.PkgPath() == "time" {
		return
	}
	for i := range t.NumField() {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "-" || (!f.IsExported() && !f.Anonymous) {
			continue
		}
		if f.Anonymous && name == "" {
			jsonFields(f.Type, prefix, out)
			continue
		}
		if name == "" {
			name = f.Name
		}
		name = strings.ToLower(name)
		out[prefix+name] = true
		if opaque(f.Type) {
			out[prefix+name+".*"] = true
			continue
		}
		jsonFields(f.Type, prefix+name+".", out)
	}
}

// opaque reports whether a field holds JSON the client does not take apart.
func opaque(t reflect.Type) bool {
	for t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice && t.Elem().Kind() != reflect.Uint8 {
		t = t.Elem()
	}
	return t == reflect.TypeOf(json.RawMessage{}) || t.Kind() == reflect.Interface ||
		t.Kind() == reflect.Map && t.Elem().Kind() == reflect.Interface
}

// covered reports whether the client's fields take the server's field f:
// named, or under a field the client keeps whole.
func covered(cli map[string]bool, f string) bool {
	if cli[f] {
		return true
	}
	for i := range len(f) {
		if f[i] == '.' && cli[f[:i]+".*"] {
			return true
		}
	}
	return false
}

// TestClientTypesMatchServer: the Go client's copies of the server's
// answers know every field the server writes, so a field added on one side
// and not the other fails here (the client imports nothing of the server;
// this test may).
func TestClientTypesMatchServer(t *testing.T) {
	for _, c := range []struct {
		name           string
		server, client any
		skip           []string // fields the client leaves out on purpose
	}{
		{"evaluation", evaluate.Result{}, client.Evaluation{}, nil},
		{"project", annotate.Project{}, client.ProjectInfo{}, nil},
		{"evaluation comparison", evaluate.Comparison{}, client.EvaluationComparison{}, nil},
		{"label disagreements", evaluate.Disagreements{}, client.LabelDisagreements{}, nil},
		{"task", annotate.Task{}, client.Task{}, nil},
		{"annotation download", annotate.Download{}, client.Annotations{}, nil},
		{"task workspace", annotate.Workspace{}, client.Workspace{}, nil},
		{"frame state", annotate.FrameState{}, client.FrameState{}, nil},
		{"suggestion", annotate.Suggestion{}, client.Suggestion{}, nil},
		{"model", analysis.Model{}, client.Model{}, nil},
		{"analysis run", analysis.Run{}, client.Run{}, nil},
		{"selection", labelnext.Result{}, client.Selection{}, nil},
		{"uniqueness", labelnext.UniquenessResult{}, client.UniquenessResult{}, nil},
		{"duplicates", curate.DuplicatesResult{}, client.DuplicatesResult{}, nil},
		{"dataset leakage", dataset.Leakage{}, client.DatasetLeakage{}, nil},
		{"dataset diff", dataset.Diff{}, client.VersionDiff{}, nil},
		{"deleted", lake.Deleted{}, client.Deleted{}, nil},
		{"history change", lake.Change{}, client.Change{}, nil},
		{"label job", annotate.Job{}, client.LabelJob{}, nil},
		{"queue item", annotate.QueueItem{}, client.QueueItem{}, nil},
		{"comment", annotate.Comment{}, client.Comment{}, nil},
		{"member", auth.Member{}, client.Member{}, nil},
		{"user", auth.User{}, client.User{}, nil},
	} {
		srv, cli := map[string]bool{}, map[string]bool{}
		jsonFields(reflect.TypeOf(c.server), "", srv)
		jsonFields(reflect.TypeOf(c.client), "", cli)
		var missing []string
		for f := range srv {
			if !strings.HasSuffix(f, ".*") && !covered(cli, f) && !slices.Contains(c.skip, f) {
				missing = append(missing, f)
			}
		}
		slices.Sort(missing)
		if len(missing) > 0 {
			t.Errorf("%s: the client's type lacks %v", c.name, missing)
		}
	}
}

// TestJobFrameJSON keeps a job's frame, as the server writes it, the frame
// status of a workspace plus the job's review: every field the server writes
// reads into the client's LabelJobFrame and writes back the same JSON.
func TestJobFrameJSON(t *testing.T) {
	review, frame := "accepted", 12
	srv := annotate.JobFrame{Review: &review}
	srv.SequenceNo, srv.UniqueName, srv.URL, srv.Width, srv.Height = 3, "v.mp4", "https://x/y", 640, 480
	srv.Annotated, srv.BoxCount, srv.Version, srv.Frame = true, 2, 5, &frame
	b, err := json.Marshal(srv)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"annotated":true,"boxCount":2,"frame":12,"height":480,"review":"accepted","sequenceNo":3,` +
		`"uniqueName":"v.mp4","url":"https://x/y","version":5,"width":640}`
	if got := sortedJSON(t, b); got != want {
		t.Errorf("server's job frame:\n got %s\nwant %s", got, want)
	}
	var cli client.LabelJobFrame
	if err := json.Unmarshal(b, &cli); err != nil {
		t.Fatal(err)
	}
	if cli.FrameStatus != (client.FrameStatus{SequenceNo: 3, UniqueName: "v.mp4", URL: "https://x/y", Width: 640,
		Height: 480, Annotated: true, BoxCount: 2, Version: 5, Frame: cli.Frame}) || *cli.Frame != 12 || *cli.Review != review {
		t.Errorf("client's job frame: %+v", cli)
	}
	back, _ := json.Marshal(cli)
	if got := sortedJSON(t, back); got != want {
		t.Errorf("client's job frame written back:\n got %s\nwant %s", got, want)
	}
}

// sortedJSON is a JSON object with its keys sorted (encoding/json sorts map keys).
func sortedJSON(t *testing.T, b []byte) string {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	out, _ := json.Marshal(m)
	return string(out)
}
