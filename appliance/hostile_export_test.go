package appliance_test

import (
	"context"
	"encoding/json"
	"mime"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/framelake/framelake/appliance"
	"github.com/framelake/framelake/client"
	"github.com/framelake/framelake/format"
	"github.com/framelake/framelake/internal/testmedia"
)

// checkArchive opens each archive named on its command line (archive and
// extraction folder, in pairs) with Python's zipfile or tarfile, as a user
// would, and names every member that is absolute, climbs out with "..",
// holds a backslash, NUL or drive letter, or resolves outside one top folder.
// One interpreter reads every archive: a Python start costs a CPU-second
// through pyenv's shim.
const checkArchive = `
import os, sys, tarfile, zipfile
failed = False
for path, root in zip(sys.argv[1::2], sys.argv[2::2]):
    root = os.path.realpath(root)
    if zipfile.is_zipfile(path):
        names = zipfile.ZipFile(path).namelist()
    else:
        names = tarfile.open(path).getnames()
    bad, tops = [], set()
    for n in names:
        parts = n.split("/")
        if n.startswith("/") or "\\" in n or "\x00" in n or ".." in parts or (len(n) > 1 and n[1] == ":"):
            bad.append(n)
        real = os.path.realpath(os.path.join(root, n))
        if not real.startswith(root + os.sep):
            bad.append(n)
        tops.add(parts[0])
    if len(tops) != 1:
        bad.append("several top folders: %r" % sorted(tops))
    print(os.path.basename(path), len(names), "members")
    for b in bad:
        print("BAD", os.path.basename(path), repr(b))
    failed = failed or bool(bad) or not names
sys.exit(1 if failed else 0)
`

// TestExportsStayInTheirFolder: a dataset whose name, collection, labels
// and file names are chosen to escape (.., absolute paths, backslashes) is
// downloaded in every export format, and each archive's members all stay
// in its one top folder, as Python's zipfile and tarfile read them.
func TestExportsStayInTheirFolder(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: builds and exports a dataset in every format")
	}
	e := start(t, appliance.Config{})
	c := e.creds(t)
	ctx := context.Background()
	labels := []string{"../../up", "/etc/passwd", `..\..\win`, "C:evil"}
	pid, err := e.write.CreateProject(ctx, client.Project{Name: "../../proj", ContentType: client.ContentImage,
		Labels: []client.Label{{Name: labels[0]}, {Name: labels[1]}, {Name: labels[2]}, {Name: labels[3]}}})
	if err != nil {
		t.Fatal(err)
	}
	coll := `../../../tmp/..\escape /abs`
	up, err := e.write.InitializeUpload(ctx, pid, coll, 4)
	if err != nil {
		t.Fatal(err)
	}
	for i, name := range []string{"...jpg", "..%2F..%2Fx.jpg", "C:..x.jpg", ".hidden.jpg"} {
		box := client.Box{Label: labels[i], X: 1, Y: 1, Width: 8, Height: 8}
		if _, err := e.write.UploadFrame(ctx, up.UploadID, client.Frame{File: memFile(name, testmedia.JPEG(32, 24, i)),
			Boxes: []client.Box{box}}); err != nil {
			t.Fatalf("frame %q: %v", name, err)
		}
	}
	cl, err := e.a.Lake.CollectionByName(ctx, coll)
	if err != nil {
		t.Fatal(err)
	}
	b := e.built(t)(e.write.CreateDatasetFromCollection(ctx, `../../..\\/etc/cron.d/ds`, cl.ID, client.DatasetSpec{
		SplitInfo: client.SplitInfo{Train: 50, Test: 25, Validation: 25}, Labels: labels,
		AugmentationList: json.RawMessage(flipConfig)}))
	script := filepath.Join(t.TempDir(), "check.py")
	if err := os.WriteFile(script, []byte(checkArchive), 0o644); err != nil {
		t.Fatal(err)
	}
	var args []string // archive, extraction folder, ...
	for _, f := range format.ExportTypes() {
		body, _ := json.Marshal(map[string]any{"version_id": b.VersionID, "export_type": string(f)})
		req := strings.NewReader(string(body))
		status, hdr, data := e.sendAs(t, c.read, "POST", "/api/v1/client/download_dataset", "application/json", req)
		if status != 200 {
			t.Errorf("%s: %d %.300s", f, status, data)
			continue
		}
		_, params, _ := mime.ParseMediaType(hdr.Get("Content-Disposition"))
		if fn := params["filename"]; fn == "" || strings.ContainsAny(fn, `/\`) || strings.Contains(fn, "..") {
			t.Errorf("%s: attachment file name %q", f, fn)
		}
		archive := filepath.Join(t.TempDir(), string(f)+".zip")
		if err := os.WriteFile(archive, data, 0o644); err != nil {
			t.Fatal(err)
		}
		args = append(args, archive, t.TempDir())
	}
	if len(args) == 0 {
		return // every download failed: said above
	}
	out, err := exec.Command("python3", append([]string{script}, args...)...).CombinedOutput()
	if err != nil {
		t.Errorf("members escape the archive's folder (BAD format member): %v\n%s", err, out)
	}
}
