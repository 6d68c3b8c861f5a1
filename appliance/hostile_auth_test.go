package appliance_test

import (
	"regexp"
	"strings"
	"testing"

	"github.com/framelake/framelake/appliance"
	"github.com/framelake/framelake/web"
)

// routeAccess is the decision about who may call each route ("sign-in": no
// key, its own checks): "public" needs
// nothing, "signed" needs a signed media link, the roles need a key of at
// least that role. A route the server serves that is missing here fails
// TestEveryRouteRefusesStrangers, so each new route gets a decision.
var routeAccess = map[string]string{
	"GET /healthz":            "public",
	"GET /media/:name":        "signed",
	"GET /media-blob/:name":   "signed",
	"GET /thumbs/:size/:name": "signed",
	"GET /crops/:size/:name":  "signed",

	"GET /api/v1/openapi.yaml": "read",
	"GET /api/v1/me":           "read",
	"GET /api/v1/runtime":      "read",

	"GET /api/v1/lake/items":             "read",
	"GET /api/v1/lake/facets":            "read",
	"GET /api/v1/lake/files/:uniqueName": "read",

	"GET /api/v1/lake/facets/:field":         "read",
	"GET /api/v1/lake/histogram":             "read",
	"GET /api/v1/lake/complete":              "read",
	"POST /api/v1/lake/selection/tags":       "write",
	"POST /api/v1/lake/selection/collection": "write",

	"POST /api/v1/lake/files":                               "write",
	"PATCH /api/v1/lake/files/:uniqueName/metadata":         "write",
	"PATCH /api/v1/lake/collections/:collectionId/metadata": "write",
	"DELETE /api/v1/lake/files/:uniqueName":                 "write",
	"PUT /api/v1/lake/annotations":                          "write",
	"GET /api/v1/lake/files/:uniqueName/annotations":        "read",

	"GET /api/v1/lake/files/:uniqueName/frames/:frame":             "read",
	"GET /api/v1/lake/files/:uniqueName/tracks":                    "read",
	"PUT /api/v1/lake/files/:uniqueName/tracks":                    "write",
	"PUT /api/v1/lake/files/:uniqueName/tracks/:number":            "write",
	"DELETE /api/v1/lake/files/:uniqueName/tracks/:number":         "write",
	"POST /api/v1/lake/files/:uniqueName/tracks/:number/propagate": "write",
	"GET /api/v1/lake/files/:uniqueName/tracks/metrics":            "read",

	// The workspace's assists write nothing but run a model: a write key, as the workspace.
	"POST /api/v1/assist/segment": "write",
	"POST /api/v1/assist/polygon": "write",

	"GET /api/v1/lake/history":                      "read",
	"GET /api/v1/lake/history/:changeId/shapes":     "read",
	"POST /api/v1/session":                          "sign-in",
	"GET /api/v1/session":                           "read",
	"DELETE /api/v1/session":                        "read",
	"GET /api/v1/users":                             "admin",
	"POST /api/v1/users":                            "admin",
	"PATCH /api/v1/users/:name":                     "admin",
	"POST /api/v1/lake/imports":                     "write",
	"DELETE /api/v1/lake/collections/:collectionId": "write",

	"GET /api/v1/projects":                                            "read",
	"PUT /api/v1/projects/:projectId/labels/:labelName":               "write",
	"POST /api/v1/projects":                                           "write",
	"GET /api/v1/projects/:projectId":                                 "read",
	"DELETE /api/v1/projects/:projectId":                              "write",
	"POST /api/v1/projects/:projectId/uploads":                        "write",
	"POST /api/v1/uploads/:uploadId/files":                            "write",
	"GET /api/v1/tasks":                                               "read",
	"GET /api/v1/tasks/:taskId":                                       "read",
	"GET /api/v1/projects/:projectId/annotations":                     "read",
	"PUT /api/v1/projects/:projectId/frames/:uniqueName/annotations":  "write",
	"GET /api/v1/projects/:projectId/frames/:uniqueName/annotations":  "read",
	"POST /api/v1/projects/:projectId/frames/:uniqueName/suggestions": "write",
	"POST /api/v1/projects/:projectId/tasks":                          "write",
	"PATCH /api/v1/tasks/:taskId":                                     "write",
	"GET /api/v1/tasks/:taskId/frames":                                "read",
	"GET /api/v1/lake/patches":                                        "read",

	"GET /api/v1/datasets":                                  "read",
	"GET /api/v1/datasets/:datasetGroupId":                  "read",
	"DELETE /api/v1/datasets/:datasetGroupId":               "write",
	"POST /api/v1/datasets/:datasetGroupId/versions":        "write",
	"GET /api/v1/dataset-versions/:datasetVersionId":        "read",
	"DELETE /api/v1/dataset-versions/:datasetVersionId":     "write",
	"GET /api/v1/dataset-versions/:datasetVersionId/data":   "read",
	"POST /api/v1/dataset-versions/:datasetVersionId/retry": "write",

	"GET /api/v1/jobs":             "read",
	"GET /api/v1/jobs/:id":         "read",
	"POST /api/v1/jobs/:id/cancel": "write",
	"POST /api/v1/jobs/:id/retry":  "write",

	"GET /api/v1/models":                   "read",
	"GET /api/v1/models/:name":             "read",
	"PATCH /api/v1/models/:name":           "admin",
	"DELETE /api/v1/models/:name":          "admin",
	"GET /api/v1/runs":                     "read",
	"GET /api/v1/embedding-models":         "read",
	"GET /api/v1/models/:name/projection":  "read",
	"POST /api/v1/models/:name/projection": "write",
	"GET /api/v1/runs/:id":                 "read",

	"POST /api/v1/client/register_model": "admin",

	"POST /api/v1/client/auto_tag_collection":                    "write",
	"POST /api/v1/client/generate_auto_tags_to_lake":             "write",
	"POST /api/v1/client/auto_annotate_collection":               "write",
	"POST /api/v1/client/generate_auto_annotations_to_lake":      "write",
	"POST /api/v1/client/generate_embeddings_for_collection":     "write",
	"POST /api/v1/client/generate_embeddings_to_lake":            "write",
	"POST /api/v1/client/create_dataset_from_collection":         "write",
	"POST /api/v1/client/create_dataset_from_datalake":           "write",
	"POST /api/v1/client/update_dataset_version_from_collection": "write",
	"POST /api/v1/client/update_dataset_version_from_datalake":   "write",
	"POST /api/v1/client/insert_image_embeddings":                "write",
	"POST /api/v1/client/insert_image_embeddings_batch":          "write",
	"POST /api/v1/client/select_samples":                         "write",
	"POST /api/v1/client/compute_uniqueness":                     "write",
	"POST /api/v1/client/compute_quality":                        "write",
	"POST /api/v1/client/find_duplicates":                        "write",
	"POST /api/v1/client/get_dataset_leakage":                    "read",

	"POST /api/v1/client/download_dataset":               "read",
	"POST /api/v1/client/find_similar":                   "read",
	"POST /api/v1/client/diff_dataset_versions":          "read",
	"POST /api/v1/client/get_collection_details":         "read",
	"POST /api/v1/client/get_embedding_vector":           "read",
	"POST /api/v1/client/get_file_details":               "read",
	"POST /api/v1/client/get_item_count_from_collection": "read",
	"POST /api/v1/client/get_item_count_from_lake":       "read",
	"POST /api/v1/client/get_item_list_from_collection":  "read",
	"POST /api/v1/client/get_item_list_from_datalake":    "read",

	"POST /api/v1/client/evaluate_detections":      "write",
	"POST /api/v1/client/get_evaluation":           "read",
	"POST /api/v1/client/compare_evaluations":      "read",
	"POST /api/v1/client/delete_evaluation":        "write",
	"POST /api/v1/client/list_evaluations":         "read",
	"POST /api/v1/client/find_label_disagreements": "write",
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
	rank := map[string]int{"read": 1, "write": 2, "admin": 3}
	byRole := map[string]cred{"read": c.read, "write": c.write, "admin": c.admin}
	seen := map[string]bool{}
	for _, r := range web.Routes() {
		name := r.Method + " " + r.Path
		seen[name] = true
		access, ok := routeAccess[name]
		if !ok {
			t.Errorf("route %s has no access decision in routeAccess", name)
			continue
		}
		if r.Role != "" && string(r.Role) != access {
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
