package client_test

import (
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/framelake/framelake/annotate"
	"github.com/framelake/framelake/client"
	"github.com/framelake/framelake/evaluate"
)

// jsonFields lists the JSON names a struct type reads and writes, with
// those of embedded structs, and of nested structs as "outer.inner".
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
		out[prefix+name] = true
		jsonFields(f.Type, prefix+name+".", out)
	}
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
	} {
		srv, cli := map[string]bool{}, map[string]bool{}
		jsonFields(reflect.TypeOf(c.server), "", srv)
		jsonFields(reflect.TypeOf(c.client), "", cli)
		var missing []string
		for f := range srv {
			if !cli[f] && !slices.Contains(c.skip, f) {
				missing = append(missing, f)
			}
		}
		slices.Sort(missing)
		if len(missing) > 0 {
			t.Errorf("%s: the client's type lacks %v", c.name, missing)
		}
	}
}
