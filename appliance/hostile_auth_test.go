package appliance_test

import (
	"regexp"
	"strings"
	"testing"

	"github.com/framelake/framelake/appliance"
	"github.com/framelake/framelake/internal/auth"
	"github.com/framelake/framelake/web"
)

// routeAccess is the decision about who may call each route (docs/team.md
// "Roles"), in this vocabulary:
//   - "public" needs nothing; "signed" a signed media link; "sign-in" no key
//     (its own checks);
//   - "own": any caller with a key or a session, annotators and reviewers
//     included (their session, their key, the API's description, their queue);
//   - "viewer", "curator", "admin": a lake-wide role of at least that
//     (admin > curator > viewer); annotators and reviewers are refused;
//   - "project:view", "project:annotate", "project:review", "project:curate":
//     a project route (web/auth.go projectRoutes) asking that of the caller
//     on the route's project: admins and curators everything, viewers view,
//     annotators annotate and reviewers review their member projects;
//   - "project:member": members of the project get past the route's rule and
//     the handler decides by the job, its state or the comment.
//
// A route the server serves that is missing here fails
// TestEveryRouteRefusesStrangers, so each new route gets a decision, and
// TestEveryRoleOnEveryRoute (roles_test.go) tries every role on every row.
var routeAccess = map[string]string{
	"GET /healthz":            "public",
	"GET /media/:name":        "signed",
	"GET /media-blob/:name":   "signed",
	"GET /thumbs/:size/:name": "signed",
	"GET /crops/:size/:name":  "signed",

	"GET /api/v1/openapi.yaml": "own",
	"GET /api/v1/me":           "own",
	"GET /api/v1/runtime":      "viewer",

	"GET /api/v1/lake/items":             "viewer",
	"GET /api/v1/lake/facets":            "viewer",
	"GET /api/v1/lake/files/:uniqueName": "viewer",

	"GET /api/v1/lake/facets/:field":         "viewer",
	"GET /api/v1/lake/histogram":             "viewer",
	"GET /api/v1/lake/complete":              "viewer",
	"POST /api/v1/lake/selection/tags":       "curator",
	"POST /api/v1/lake/selection/collection": "curator",

	"POST /api/v1/lake/files":                               "curator",
	"PATCH /api/v1/lake/files/:uniqueName/metadata":         "curator",
	"PATCH /api/v1/lake/collections/:collectionId/metadata": "curator",
	"DELETE /api/v1/lake/files/:uniqueName":                 "curator",
	"PUT /api/v1/lake/annotations":                          "curator",
	"GET /api/v1/lake/files/:uniqueName/annotations":        "viewer",

	"GET /api/v1/lake/files/:uniqueName/frames/:frame":             "viewer",
	"GET /api/v1/lake/files/:uniqueName/tracks":                    "viewer",
	"PUT /api/v1/lake/files/:uniqueName/tracks":                    "curator",
	"PUT /api/v1/lake/files/:uniqueName/tracks/:number":            "curator",
	"DELETE /api/v1/lake/files/:uniqueName/tracks/:number":         "curator",
	"POST /api/v1/lake/files/:uniqueName/tracks/:number/propagate": "curator",
	"GET /api/v1/lake/files/:uniqueName/tracks/metrics":            "viewer",

	// The workspace's assists write nothing but run a model: a write key, as the workspace.
	"POST /api/v1/assist/segment": "curator",
	"POST /api/v1/assist/polygon": "curator",

	"GET /api/v1/lake/history":                      "project:view",
	"GET /api/v1/lake/history/:changeId/shapes":     "project:member",
	"POST /api/v1/lake/history/:changeId/restore":   "project:member",
	"GET /api/v1/stats/people":                      "own",
	"POST /api/v1/session":                          "sign-in",
	"GET /api/v1/session":                           "own",
	"DELETE /api/v1/session":                        "own",
	"GET /api/v1/session/sso":                       "public",
	"GET /api/v1/session/oidc":                      "sign-in",
	"GET /api/v1/session/oidc/callback":             "sign-in",
	"GET /api/v1/session/oidc/logout":               "sign-in",
	"GET /api/v1/users":                             "admin",
	"POST /api/v1/users":                            "admin",
	"PATCH /api/v1/users/:name":                     "admin",
	"POST /api/v1/lake/imports":                     "curator",
	"DELETE /api/v1/lake/collections/:collectionId": "curator",

	"GET /api/v1/projects":                                            "viewer",
	"PUT /api/v1/projects/:projectId/labels/:labelName":               "project:curate",
	"POST /api/v1/projects":                                           "curator",
	"GET /api/v1/projects/:projectId":                                 "project:view",
	"DELETE /api/v1/projects/:projectId":                              "project:curate",
	"POST /api/v1/projects/:projectId/uploads":                        "project:curate",
	"POST /api/v1/uploads/:uploadId/files":                            "curator",
	"GET /api/v1/tasks":                                               "project:view",
	"GET /api/v1/tasks/:taskId":                                       "project:view",
	"GET /api/v1/projects/:projectId/annotations":                     "project:view",
	"PUT /api/v1/projects/:projectId/frames/:uniqueName/annotations":  "project:member",
	"GET /api/v1/projects/:projectId/frames/:uniqueName/annotations":  "project:view",
	"POST /api/v1/projects/:projectId/frames/:uniqueName/suggestions": "project:annotate",
	"POST /api/v1/projects/:projectId/tasks":                          "project:curate",
	"PATCH /api/v1/tasks/:taskId":                                     "project:curate",
	"GET /api/v1/tasks/:taskId/frames":                                "project:view",
	"GET /api/v1/lake/patches":                                        "viewer",

	"POST /api/v1/tasks/:taskId/jobs":                              "project:member",
	"GET /api/v1/tasks/:taskId/jobs":                               "project:view",
	"GET /api/v1/tasks/:taskId/jobs/:number":                       "project:view",
	"PATCH /api/v1/tasks/:taskId/jobs/:number":                     "project:member",
	"POST /api/v1/tasks/:taskId/jobs/:number/state":                "project:member",
	"POST /api/v1/projects/:projectId/jobs/next":                   "project:annotate",
	"GET /api/v1/projects/:projectId/members":                      "project:curate",
	"PUT /api/v1/projects/:projectId/members/:name":                "project:curate",
	"DELETE /api/v1/projects/:projectId/members/:name":             "project:curate",
	"GET /api/v1/queue":                                            "own",
	"POST /api/v1/projects/:projectId/frames/:uniqueName/comments": "project:member",
	"GET /api/v1/projects/:projectId/frames/:uniqueName/comments":  "project:view",
	"GET /api/v1/tasks/:taskId/jobs/:number/comments":              "project:view",
	"PATCH /api/v1/comments/:commentId":                            "project:member",

	"GET /api/v1/projects/:projectId/videos/:uniqueName/tracks": "project:view", "PUT /api/v1/projects/:projectId/videos/:uniqueName/tracks": "project:annotate", "PUT /api/v1/projects/:projectId/videos/:uniqueName/tracks/:number": "project:annotate", "DELETE /api/v1/projects/:projectId/videos/:uniqueName/tracks/:number": "project:member", "POST /api/v1/projects/:projectId/videos/:uniqueName/tracks/:number/propagate": "project:annotate", "GET /api/v1/projects/:projectId/videos/:uniqueName/propagations/:jobId": "project:annotate", "GET /api/v1/projects/:projectId/videos/:uniqueName/frames/:frame": "project:view",
	"GET /api/v1/projects/:projectId/agreement":                     "project:view",
	"POST /api/v1/projects/:projectId/frames/:uniqueName/consensus": "project:review",

	"GET /api/v1/datasets":                                  "viewer",
	"GET /api/v1/datasets/:datasetGroupId":                  "viewer",
	"DELETE /api/v1/datasets/:datasetGroupId":               "curator",
	"POST /api/v1/datasets/:datasetGroupId/versions":        "curator",
	"GET /api/v1/dataset-versions/:datasetVersionId":        "viewer",
	"DELETE /api/v1/dataset-versions/:datasetVersionId":     "curator",
	"GET /api/v1/dataset-versions/:datasetVersionId/data":   "viewer",
	"POST /api/v1/dataset-versions/:datasetVersionId/retry": "curator",

	"GET /api/v1/jobs":             "viewer",
	"GET /api/v1/jobs/:id":         "viewer",
	"POST /api/v1/jobs/:id/cancel": "curator",
	"POST /api/v1/jobs/:id/retry":  "curator",

	"GET /api/v1/models":                   "viewer",
	"GET /api/v1/models/:name":             "viewer",
	"PATCH /api/v1/models/:name":           "admin",
	"DELETE /api/v1/models/:name":          "admin",
	"GET /api/v1/runs":                     "viewer",
	"GET /api/v1/embedding-models":         "viewer",
	"GET /api/v1/models/:name/projection":  "viewer",
	"POST /api/v1/models/:name/projection": "curator",
	"GET /api/v1/runs/:id":                 "viewer",

	"POST /api/v1/client/register_model": "admin",

	"POST /api/v1/client/auto_tag_collection":                    "curator",
	"POST /api/v1/client/generate_auto_tags_to_lake":             "curator",
	"POST /api/v1/client/auto_annotate_collection":               "curator",
	"POST /api/v1/client/generate_auto_annotations_to_lake":      "curator",
	"POST /api/v1/client/generate_embeddings_for_collection":     "curator",
	"POST /api/v1/client/generate_embeddings_to_lake":            "curator",
	"POST /api/v1/client/create_dataset_from_collection":         "curator",
	"POST /api/v1/client/create_dataset_from_datalake":           "curator",
	"POST /api/v1/client/update_dataset_version_from_collection": "curator",
	"POST /api/v1/client/update_dataset_version_from_datalake":   "curator",
	"POST /api/v1/client/insert_image_embeddings":                "curator",
	"POST /api/v1/client/insert_image_embeddings_batch":          "curator",
	"POST /api/v1/client/select_samples":                         "curator",
	"POST /api/v1/client/compute_uniqueness":                     "curator",
	"POST /api/v1/client/compute_quality":                        "curator",
	"POST /api/v1/client/find_duplicates":                        "curator",
	"POST /api/v1/client/get_dataset_leakage":                    "viewer",

	"POST /api/v1/client/download_dataset":               "viewer",
	"POST /api/v1/client/find_similar":                   "viewer",
	"POST /api/v1/client/diff_dataset_versions":          "viewer",
	"POST /api/v1/client/get_collection_details":         "viewer",
	"POST /api/v1/client/get_embedding_vector":           "viewer",
	"POST /api/v1/client/get_file_details":               "viewer",
	"POST /api/v1/client/get_item_count_from_collection": "viewer",
	"POST /api/v1/client/get_item_count_from_lake":       "viewer",
	"POST /api/v1/client/get_item_list_from_collection":  "viewer",
	"POST /api/v1/client/get_item_list_from_datalake":    "viewer",

	"POST /api/v1/client/evaluate_detections":      "curator",
	"POST /api/v1/client/get_evaluation":           "viewer",
	"POST /api/v1/client/compare_evaluations":      "viewer",
	"POST /api/v1/client/delete_evaluation":        "curator",
	"POST /api/v1/client/list_evaluations":         "viewer",
	"POST /api/v1/client/find_label_disagreements": "curator",
}

var pathParam = regexp.MustCompile(`:[A-Za-z]+`)

// TestEveryRouteRefusesStrangers walks the router's own route list against
// the real server: no key, a wrong secret, an expired and a revoked key are
// 401 everywhere a key is needed; a key below the route's role is 403; a key
// of the route's role gets past authorization (any status but 401 and 403).
// Path parameters are placeholders: the refusals come before any lookup.
func TestEveryRouteRefusesStrangers(t *testing.T) {
	e := start(t, appliance.Config{})
	c := e.creds(t)
	// Keys of no person: a project rule asks of them what it asks of their
	// lake-wide role (a project's view of a viewer, the rest of a curator).
	rank := map[string]int{"own": 1, "viewer": 1, "project:view": 1, "curator": 2, "project:annotate": 2,
		"project:review": 2, "project:curate": 2, "project:member": 2, "admin": 3}
	byRole := map[string]cred{"viewer": c.read, "curator": c.write, "admin": c.admin}
	seen := map[string]bool{}
	for _, r := range web.Routes() {
		name := r.Method + " " + r.Path
		seen[name] = true
		access, ok := routeAccess[name]
		if !ok {
			t.Errorf("route %s has no access decision in routeAccess", name)
			continue
		}
		if r.Role != "" && map[auth.Role]string{auth.Read: "viewer", auth.Write: "curator", auth.Admin: "admin"}[r.Role] != access {
			t.Errorf("client function %s checks role %s; routeAccess says %s", r.Function, r.Role, access)
		}
		path := pathParam.ReplaceAllString(r.Path, "x_hostile")
		if r.Path == "/media-blob/:name" {
			path = "/media-blob/" + strings.Repeat("ab", 32) + ".jpg" // a well-formed blob name
		}
		send := func(k cred) int {
			status, _ := e.hostile(t, k, r.Method, path, "application/json", strings.NewReader("{}"))
			return status
		}
		switch access {
		case "public":
			if got := send(cred{}); got != 200 {
				t.Errorf("%s without a key: %d, want 200", name, got)
			}
			continue
		case "sign-in": // needs no key: a wrong or empty name and password is 400 or 401, never more
			if got := send(cred{}); got != 400 && got != 401 {
				t.Errorf("%s without a key: %d, want 400 or 401", name, got)
			}
			continue
		case "signed":
			for _, q := range []string{"", "?exp=9999999999&sig=AAAA"} {
				if got, _ := e.hostile(t, cred{}, r.Method, path+q, "", nil); got != 401 && got != 403 {
					t.Errorf("%s%s unsigned: %d, want 401 or 403", name, q, got)
				}
			}
			continue
		}
		for label, k := range map[string]cred{"no key": {}, "wrong secret": c.wrongSecret,
			"expired key": c.expired, "revoked key": c.revoked, "unknown key": {"flnokey", "x"}} {
			if got := send(k); got != 401 {
				t.Errorf("%s with %s: %d, want 401", name, label, got)
			}
			if r.Method == "GET" { // HEAD mirrors every GET route
				if got, _ := e.hostile(t, k, "HEAD", path, "", nil); got != 401 {
					t.Errorf("HEAD %s with %s: %d, want 401", r.Path, label, got)
				}
			}
		}
		for role, k := range byRole {
			if access == "project:member" && role == "viewer" {
				continue // past the route's rule; the handler decides (TestEveryRoleOnEveryRoute)
			}
			got := send(k)
			if rank[role] < rank[access] && got != 403 {
				t.Errorf("%s with a %s key: %d, want 403", name, role, got)
			}
			if rank[role] >= rank[access] && (got == 401 || got == 403) {
				t.Errorf("%s with a %s key: %d, want it past authorization", name, role, got)
			}
		}
	}
	for name := range routeAccess {
		if !seen[name] {
			t.Errorf("routeAccess decides %s, which no route serves", name)
		}
	}
}
