package web

import (
	"net/http"
	"sort"
	"strings"

	"github.com/labstack/echo/v5"

	"github.com/framelake/framelake/internal/auth"
)

// Which file holds which resource's routes (paths under /api/v1 unless
// they start elsewhere; build in web.go calls each file's routes function):
//
//	/lake/files, /lake/files/{u} (upload, read, metadata, delete)  lake_files.go
//	/lake/files/{u}/annotations, /lake/annotations                  lake_annotations.go
//	/lake/files/{u}/tracks..., /lake/files/{u}/frames/{frame}       tracks.go
//	/lake/collections/{id} (metadata, delete)                       lake_collections.go
//	/lake/items, /lake/facets..., /lake/histogram, /lake/complete   lake_items.go
//	/lake/selection/tags, /lake/selection/collection                lake_selection.go
//	/lake/imports                                                   lake_imports.go
//	/lake/history...                                                lake_history.go
//	/lake/patches, /crops/...                                       lake_patches.go
//	/projects, /projects/{id}, labels, annotations, frame annotations projects.go
//	/projects/{id}/uploads, /uploads/{id}/files                     uploads.go
//	/tasks, /tasks/{id}                                             tasks.go
//	/projects/{id}/tasks, /tasks/{id} PATCH, frames, suggestions    workspace.go
//	/tasks/{id}/jobs..., /projects/{id}/jobs/next, /queue           labeljobs.go
//	comments of frames and jobs, /comments/{id}                     comments.go
//	/projects/{id}/members...                                       members.go
//	/projects/{id}/videos/... (a video task's tracks and frames)     videotask.go
//	/projects/{id}/agreement, consensus                             agreement.go
//	/stats/people                                                   stats.go
//	/assist/...                                                     assist.go
//	/datasets..., /dataset-versions...                              datasets.go
//	/jobs...                                                        jobs.go
//	/models..., /runs...                                            models.go
//	/embedding-models, /models/{name}/projection                    projection.go
//	/session                                                        session.go
//	/users, /users/{name}                                           users.go
//	/session/sso, /session/oidc...                                  oidc.go
//	/runtime                                                        runtime.go
//	/me, /thumbs/..., the web app                                   app.go
//	/healthz, /media/..., /media-blob/..., /openapi.yaml            web.go
//	/client/{fn} (dispatch)                                         clientfn.go
//	client functions, by domain                                     clientfn_<domain>.go, models.go, datasets.go

// Route is one method and path the API serves. Client functions, which share
// POST /api/v1/client/:fn, are listed one each with the role they check.
type Route struct {
	Method, Path string
	Function     string    // the client function's name, "" for other routes
	Role         auth.Role // the function's least role; "" for other routes
}

// Routes lists every route New serves (HEAD mirrors of GET routes and the
// groups' 404 catch-alls left out), so a test can walk them all and a route
// added without a decision about who may call it is noticed.
func Routes() []Route {
	e, s := build(Deps{}, Options{})
	var out []Route
	for _, r := range e.Router().Routes() {
		if r.Method == http.MethodHead || r.Method == echo.RouteNotFound {
			continue
		}
		if strings.HasSuffix(r.Path, "/client/:fn") {
			for name, fn := range s.fns {
				out = append(out, Route{Method: r.Method, Path: strings.TrimSuffix(r.Path, ":fn") + name,
					Function: name, Role: fn.role})
			}
			continue
		}
		out = append(out, Route{Method: r.Method, Path: r.Path})
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Path != out[j].Path {
			return out[i].Path < out[j].Path
		}
		return out[i].Method < out[j].Method
	})
	return out
}
