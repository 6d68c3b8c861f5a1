package web

import (
	"net/http"
	"strings"

	"github.com/labstack/echo/v5"

	"github.com/framelake/framelake/errs"
	"github.com/framelake/framelake/internal/auth"
	"github.com/framelake/framelake/lake"
)

const keyCtx = "framelake.key"

// authenticate accepts headers key and secret, HTTP Basic with the key as
// user and the secret as password, or a signed-in person's session cookie
// (sessionKey), and remembers the key for the handlers.
func (s *server) authenticate(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c *echo.Context) error {
		r := c.Request()
		key, secret := r.Header.Get("key"), r.Header.Get("secret")
		if key == "" && secret == "" {
			key, secret, _ = r.BasicAuth()
		}
		if ck, err := r.Cookie(sessionCookie); err == nil && key == "" && secret == "" {
			k, err := s.sessionKey(c, ck.Value)
			if err != nil {
				return err
			}
			c.Set(keyCtx, k)
			// Changes to shapes are recorded with who made them (lake/history.go).
			c.SetRequest(r.WithContext(lake.WithActor(r.Context(), lake.Actor{Who: k.Name, Via: "web app"})))
			return lakewideOrProject(next)(c)
		}
		k, err := s.Keys.Verify(r.Context(), key, secret)
		if err != nil {
			// No Basic challenge to a client that sent key headers (the web
			// app): browsers would answer it with their own password dialog.
			if r.Header.Get("key") == "" {
				c.Response().Header().Set("WWW-Authenticate", `Basic realm="framelake"`)
			}
			return err
		}
		c.Set(keyCtx, k)
		who := k.Name // a person's key acts, and is recorded in the history, as the person
		if k.User != "" {
			who = k.User
		}
		c.SetRequest(r.WithContext(lake.WithActor(r.Context(), lake.Actor{Who: who, Via: "api key " + k.Key})))
		return lakewideOrProject(next)(c)
	}
}

// ownRoutes are what annotators and reviewers may call besides the project
// routes: their own session and key, and the API's description.
var ownRoutes = map[string]bool{"GET /session": true, "DELETE /session": true, "GET /me": true, "GET /openapi.yaml": true}

// lakewideOrProject refuses annotators and reviewers every route that is
// neither a project route (projectRoutes) nor their own (ownRoutes): they
// have no lake-wide read, and a route added later is refused them until it
// is made a project route, whatever group it is served from.
func lakewideOrProject(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c *echo.Context) error {
		k := caller(c)
		if k.Role.Lakewide() {
			return next(c)
		}
		route := routeKey(c)
		if _, ok := projectRoutes[route]; ok || ownRoutes[route] {
			return next(c)
		}
		return roleDenied(k, auth.Read)
	}
}

// routeKey names a request's route as the rule tables do: "GET /tasks/:taskId",
// a HEAD as its GET.
func routeKey(c *echo.Context) string {
	m := c.Request().Method
	if m == http.MethodHead {
		m = http.MethodGet
	}
	return m + " " + strings.TrimPrefix(c.Path(), "/api/v1")
}

// roleByMethod is the rule of the routes in the rest group: a project
// route (projectRoutes) asks projectAccess of the route's project; any other
// route is the lake's, where any lake-wide role reads (GET, HEAD) and
// curators change things. Annotators and reviewers have no lake-wide read.
func (s *server) roleByMethod(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c *echo.Context) error {
		if rule, ok := projectRoutes[routeKey(c)]; ok {
			if err := s.routeProjectAccess(c, rule); err != nil {
				return err
			}
			return next(c)
		}
		need := auth.Write
		if m := c.Request().Method; m == http.MethodGet || m == http.MethodHead {
			need = auth.Read
		}
		return requireRole(need)(next)(c)
	}
}

// requireRole guards routes that need more than the method implies, such as
// model registration (admin) or reads done with POST (read).
func requireRole(role auth.Role) echo.MiddlewareFunc {
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c *echo.Context) error {
			k, _ := c.Get(keyCtx).(auth.Key)
			if !k.Role.Allows(role) {
				return roleDenied(k, role)
			}
			return next(c)
		}
	}
}

// caller is the key that made the request.
func caller(c *echo.Context) auth.Key {
	k, _ := c.Get(keyCtx).(auth.Key)
	return k
}

// ProjectNeed is what a route asks of its caller on one project: the team's
// roles (docs/team.md) are per project for annotators and reviewers.
type ProjectNeed int

const (
	NeedView     ProjectNeed = iota // see the project's tasks, frames and shapes
	NeedAnnotate                    // edit the frames of jobs assigned to the caller
	NeedReview                      // review (accept, reject, comment) the project's jobs
	NeedCurate                      // change the project itself: labels, jobs, assignments
)

// projectAccess checks the caller may act on projectID as need asks
// (docs/team.md "Roles"): admins and curators everything; viewers see every
// project; annotators and reviewers, and viewers made members, act in the
// projects they are members of: NeedView as any member, NeedAnnotate as an
// annotator, NeedReview as a reviewer, NeedCurate never. Handlers of project
// routes call it before they read or write; a member of a project that no
// longer exists is answered its 404.
func (s *server) projectAccess(c *echo.Context, projectID string, need ProjectNeed) error {
	k := caller(c)
	if k.Role.Allows(auth.Write) || (need == NeedView && k.Role == auth.Read) {
		return nil
	}
	want := map[ProjectNeed]auth.Role{NeedAnnotate: auth.Annotator, NeedReview: auth.Reviewer}[need]
	if need == NeedCurate || k.User == "" {
		return projectDenied(k, projectID, need)
	}
	m := requestMembership(c, projectID)
	if !m.roleRead {
		role, err := s.Keys.ProjectRole(c.Request().Context(), projectID, k.User)
		if err != nil {
			return err
		}
		m.role, m.roleRead = role, true
	}
	if m.role == "" || (need != NeedView && m.role != want) {
		return projectDenied(k, projectID, need)
	}
	if s.Annotate != nil && !m.projectRead { // a member row outlives nothing: its project must exist
		if _, err := s.Annotate.Project(c.Request().Context(), projectID); err != nil {
			return err
		}
		m.projectRead = true
	}
	return nil
}

// membership is what projectAccess read of the caller and one project in
// this request. A workspace save asks up to five times (the route's rule,
// then the job rules' view, review and annotate), and each ask read the
// membership and the project again; a request now reads them once, at the
// time it is served, so a person disabled or removed is refused from their
// next request on, as before.
type membership struct {
	role                  auth.Role
	roleRead, projectRead bool
}

func requestMembership(c *echo.Context, projectID string) *membership {
	key := "framelake.membership." + projectID
	if m, ok := c.Get(key).(*membership); ok {
		return m
	}
	m := &membership{}
	c.Set(key, m)
	return m
}

var needNames = map[ProjectNeed]string{NeedView: "see", NeedAnnotate: "annotate", NeedReview: "review", NeedCurate: "curate"}

func projectDenied(k auth.Key, projectID string, need ProjectNeed) error {
	who := "api key " + k.Key
	if k.User != "" {
		who = k.User
	}
	project := "this project"
	if projectID != "" {
		project = "project " + projectID
	}
	if need == NeedCurate {
		return errs.New(errs.PermissionDenied, "", "curating %s needs a curator or an admin; %s is %s", project, who, k.Role)
	}
	as := map[ProjectNeed]string{NeedView: "a member", NeedAnnotate: "an annotator", NeedReview: "a reviewer"}[need]
	return errs.New(errs.PermissionDenied, "", "%s may not %s %s: %s is %s and not %s of it",
		who, needNames[need], project, who, k.Role, as)
}

func roleDenied(k auth.Key, role auth.Role) error {
	if !k.Role.Lakewide() {
		return errs.New(errs.PermissionDenied, "", "this needs a %s; %s is %s, who acts only in the projects they are members of",
			roleName[role], k.User, k.Role)
	}
	return errs.New(errs.PermissionDenied, "", "this needs a %s key; api key %s is %s", role, k.Key, k.Role)
}

var roleName = map[auth.Role]string{auth.Read: "viewer, curator or admin", auth.Write: "curator or admin", auth.Admin: "admin"}

// callerUser is who made the request and the role they act with: the
// signed-in person, or the person a key belongs to; a key of no person
// answers its own name. Handlers that hand work to people (annotate jobs)
// ask it rather than caller(c).Name, which is a key's name for a key.
func (s *server) callerUser(c *echo.Context) (string, auth.Role) {
	k := caller(c)
	if k.User != "" {
		return k.User, k.Role
	}
	return k.Name, k.Role
}

// projectRule is a project route's rule: the need it asks of the caller on
// the project the request names (in its path, or its query for listings).
// byHandler routes let every member of the project in and leave the finer
// decision (which job, which state) to their handler's own projectAccess.
type projectRule struct {
	need      ProjectNeed
	byHandler bool
	// history: the project is the query's project=, or task='s project, as
	// the history handler scopes its answer (web/lake_history.go historyScope).
	history bool
}

var (
	view, annotateNeed = projectRule{need: NeedView}, projectRule{need: NeedAnnotate}
	curateNeed, member = projectRule{need: NeedCurate}, projectRule{need: NeedView, byHandler: true}
	anyone             = projectRule{need: -1} // no project: any caller; the handler answers only theirs
)

// projectRoutes are the routes that act in one project, with their rule;
// every other route of the rest group is a lake route (roleByMethod).
// appliance/hostile_auth_test.go's routeAccess says the same per route and
// tries every role on it.
var projectRoutes = map[string]projectRule{
	"GET /projects/:projectId":                                 view,
	"PUT /projects/:projectId/labels/:labelName":               curateNeed,
	"POST /projects/:projectId/uploads":                        curateNeed,
	"DELETE /projects/:projectId":                              curateNeed,
	"GET /projects/:projectId/annotations":                     view,
	"PUT /projects/:projectId/frames/:uniqueName/annotations":  member, // annotators, and reviewers in review: by job (labeljobs.go)
	"GET /projects/:projectId/frames/:uniqueName/annotations":  view,
	"POST /projects/:projectId/frames/:uniqueName/suggestions": annotateNeed,
	"POST /projects/:projectId/tasks":                          curateNeed,
	"GET /tasks":                                               view, // ?projectId=: a member lists their project's tasks
	"GET /tasks/:taskId":                                       view,
	"PATCH /tasks/:taskId":                                     curateNeed,
	"GET /tasks/:taskId/frames":                                view,
	// A member reads the history of their project's frames (the workspace's
	// history): project= or task= is then required; lake-wide roles read all.
	"GET /lake/history": {need: NeedView, history: true},
	// A restore is decided by the change's project and job, a person's
	// statistics by whose rows they may read (web/lake_history.go restorable,
	// web/stats.go statsPeople).
	"POST /lake/history/:changeId/restore": anyone,
	"GET /lake/history/:changeId/shapes":   anyone, // a member previews their project's changes (lake_history.go)
	"GET /stats/people":                    anyone,

	"GET /projects/:projectId/members":          curateNeed,
	"PUT /projects/:projectId/members/:name":    curateNeed,
	"DELETE /projects/:projectId/members/:name": curateNeed,

	// Jobs, review and comments (web/labeljobs.go, web/comments.go): their
	// handlers decide by job and state.
	"POST /tasks/:taskId/jobs":                              member,
	"GET /tasks/:taskId/jobs":                               view,
	"GET /tasks/:taskId/jobs/:number":                       view,
	"PATCH /tasks/:taskId/jobs/:number":                     member,
	"POST /tasks/:taskId/jobs/:number/state":                member,
	"POST /projects/:projectId/jobs/next":                   annotateNeed,
	"GET /queue":                                            anyone,
	"POST /projects/:projectId/frames/:uniqueName/comments": member,
	"GET /projects/:projectId/frames/:uniqueName/comments":  view,
	"GET /tasks/:taskId/jobs/:number/comments":              view,
	"PATCH /comments/:commentId":                            member,

	// A video task's video (web/videotask.go): writes by job, in the handler.
	"GET /projects/:projectId/videos/:uniqueName/tracks":                    view,
	"PUT /projects/:projectId/videos/:uniqueName/tracks":                    annotateNeed,
	"PUT /projects/:projectId/videos/:uniqueName/tracks/:number":            annotateNeed,
	"DELETE /projects/:projectId/videos/:uniqueName/tracks/:number":         member, // the handler asks NeedAnnotate
	"POST /projects/:projectId/videos/:uniqueName/tracks/:number/propagate": annotateNeed,
	"GET /projects/:projectId/videos/:uniqueName/propagations/:jobId":       annotateNeed,
	"GET /projects/:projectId/videos/:uniqueName/frames/:frame":             view,

	// Agreement between annotators (web/agreement.go).
	"GET /projects/:projectId/agreement":                     view,
	"POST /projects/:projectId/frames/:uniqueName/consensus": {need: NeedReview},
}

// routeProjectAccess applies a project route's rule. Lake-wide roles are
// decided without a lookup, so a stranger's guess at an id learns nothing;
// a person's project comes from the path (projectId, taskId, commentId) or
// the query (projectId).
func (s *server) routeProjectAccess(c *echo.Context, rule projectRule) error {
	k := caller(c)
	if rule.need < 0 {
		return nil
	}
	if k.Role.Allows(auth.Write) || (rule.need == NeedView && k.Role == auth.Read) {
		return nil
	}
	if k.User == "" || rule.need == NeedCurate {
		return projectDenied(k, "", rule.need)
	}
	pid, err := s.routeProject(c)
	if rule.history {
		pid, err = s.historyProject(c)
	}
	if err != nil {
		return err
	}
	return s.projectAccess(c, pid, rule.need)
}

// historyProject is the project a history query is scoped to: the one
// the handler narrows its answer to, never another parameter's.
func (s *server) historyProject(c *echo.Context) (string, error) {
	if p := c.QueryParam("project"); p != "" {
		return p, nil
	}
	if t := c.QueryParam("task"); t != "" {
		return s.Annotate.TaskProject(c.Request().Context(), t)
	}
	return "", errs.Invalid("project", "an annotator or a reviewer reads the history of one project: give project= or task=")
}

// routeProject is the project a project route's request names.
func (s *server) routeProject(c *echo.Context) (string, error) {
	ctx := c.Request().Context()
	switch {
	case c.Param("projectId") != "":
		return c.Param("projectId"), nil
	case c.Param("taskId") != "":
		return s.Annotate.TaskProject(ctx, c.Param("taskId"))
	case c.Param("commentId") != "":
		return s.Annotate.CommentProject(ctx, c.Param("commentId"))
	case c.QueryParam("projectId") != "":
		return c.QueryParam("projectId"), nil
	}
	return "", errs.Invalid("projectId", "projectId is required")
}
