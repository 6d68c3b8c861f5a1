package main_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/framelake/framelake/client"
	"github.com/framelake/framelake/internal/testmedia"
)

// TestImportRawIntoNewProject: `import DIR --project NAME` of images
// without labels, NAME new, creates the image project (as --project's help
// says) both with --data and through a server with --url, where it failed
// with "no project is named"; the images become the frames of its upload
// session and task.
func TestImportRawIntoNewProject(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "shots")
	if err := testmedia.WriteJPEGs(dir, 3, 64, 48); err != nil {
		t.Fatal(err)
	}
	data := t.TempDir()
	sum, proj := importProjectJSON(t, false, dir, "--data", data, "--project", "fresh-local")
	if p := proj.Project; sum.Stored != 3 || !p.Created || p.ProjectName != "fresh-local" || len(p.Sessions) != 1 ||
		p.Sessions[0].Frames != 3 {
		t.Fatalf("--data: summary %+v, project %+v", sum, p)
	}
	remote := t.TempDir()
	c, creds, stop := serveData(t, remote)
	defer stop()
	sum, proj = importProjectJSON(t, false, append([]string{dir, "--project", "fresh-remote"}, creds...)...)
	p := proj.Project
	if sum.Stored != 3 || !p.Created || p.ProjectName != "fresh-remote" || len(p.Sessions) != 1 || p.Sessions[0].Frames != 3 {
		t.Fatalf("--url: summary %+v, project %+v", sum, p)
	}
	tasks, err := c.TaskList(context.Background(), client.TaskListOptions{ProjectID: p.ProjectID})
	if err != nil || tasks.TaskCount != 1 || tasks.TaskList[0].FrameCount != 3 {
		t.Fatalf("tasks of the new project: %+v %v", tasks, err)
	}
}
