// Package web is framelake's HTTP face: an Echo v5 server with one error
// handler (errs codes to HTTP statuses, the body of docs/spec/rest.md), API-key
// authentication, request ids, request logging with slog, body limits, and a
// file of routes per resource. Echo types never leave this package.
package web

import (
	"log/slog"
	"net/http"

	"github.com/labstack/echo/v5"
	"github.com/labstack/echo/v5/middleware"

	"github.com/framelake/framelake/analysis"
	"github.com/framelake/framelake/annotate"
	"github.com/framelake/framelake/curate"
	"github.com/framelake/framelake/dataset"
	"github.com/framelake/framelake/evaluate"
	"github.com/framelake/framelake/internal/auth"
	"github.com/framelake/framelake/internal/job"
	"github.com/framelake/framelake/labelimport"
	"github.com/framelake/framelake/labelnext"
	"github.com/framelake/framelake/lake"
	"github.com/framelake/framelake/propagate"
	"github.com/framelake/framelake/vector"
)

// Deps are the domain services the routes call.
type Deps struct {
	Lake     *lake.Lake
	Keys     *auth.Keys
	Jobs     *job.Queue
	Vectors  *vector.Store
	Annotate *annotate.Service
	Datasets *dataset.Service
	Analysis *analysis.Service // nil: analysis routes answer 503
	// LabelNext chooses what to label next; nil: its functions answer 503.
	LabelNext *labelnext.Service
	Evaluate  *evaluate.Service  // nil: evaluation functions answer 503
	Curate    *curate.Service    // nil: curation functions answer 503
	Propagate *propagate.Service // nil: propagation answers 503
	Imports   *labelimport.Service
	OIDC      *auth.OIDC // single sign-on; nil: off
	Logger    *slog.Logger
}

// Options bound what a request may send.
type Options struct {
	MaxJSONBytes   int64 // JSON bodies; default 16 MiB
	MaxUploadBytes int64 // multipart uploads; default 8 GiB
	Version        string
}

type server struct {
	Deps
	opt Options
	fns map[string]clientFn // client functions by name

	cropSources decodedThumbs // review crops' decoded thumbnails
}

// New returns the HTTP handler of the appliance.
func New(d Deps, opt Options) http.Handler {
	e, _ := build(d, opt)
	return e
}

// build makes the Echo server and keeps the server for Routes.
func build(d Deps, opt Options) (*echo.Echo, *server) {
	if opt.MaxJSONBytes <= 0 {
		opt.MaxJSONBytes = 16 << 20
	}
	if opt.MaxUploadBytes <= 0 {
		opt.MaxUploadBytes = 8 << 30
	}
	s := &server{Deps: d, opt: opt, fns: map[string]clientFn{}}
	e := echo.NewWithConfig(echo.Config{Logger: d.Logger, HTTPErrorHandler: s.handleError,
		JSONSerializer: jsonSerializer{},
		// HEAD answers every GET route as GET would, without the body.
		Router: echo.NewRouter(echo.RouterConfig{AllowOverwritingRoute: true, AutoHandleHEAD: true})})
	e.Use(secureHeaders)
	e.Use(middleware.RequestID())
	e.Use(s.logRequests())
	e.Use(middleware.Recover())

	e.GET("/healthz", s.healthz)
	e.GET(lake.MediaPath+":name", s.media)
	e.HEAD(lake.MediaPath+":name", s.media)
	e.GET(lake.BlobPath+":name", s.blobMedia)
	e.HEAD(lake.BlobPath+":name", s.blobMedia)

	api := e.Group("/api/v1", s.authenticate)
	api.GET("/openapi.yaml", s.openAPI)
	s.sessionRoutes(e, api)
	s.userRoutes(api)
	s.memberRoutes(api)
	s.oidcRoutes(e)
	rest := api.Group("", s.roleByMethod)
	// Which file holds which resource's routes: routes.go.
	s.lakeFileRoutes(rest, api)
	s.lakeAnnotationRoutes(rest)
	s.lakeCollectionRoutes(rest)
	s.lakeItemRoutes(rest, api)
	s.lakeSelectionRoutes(rest)
	s.lakeImportRoutes(rest)
	s.lakeHistoryRoutes(rest)
	s.lakePatchRoutes(e, api)
	s.trackRoutes(rest)
	s.statsRoutes(rest)
	s.agreementRoutes(rest)
	s.assistRoutes(rest)
	s.projectRoutes(rest)
	s.uploadRoutes(rest)
	s.taskRoutes(rest)
	s.workspaceRoutes(rest)
	s.labelJobRoutes(rest)
	s.datasetRoutes(rest, api)
	s.jobRoutes(rest)
	s.runtimeRoutes(rest)
	s.lakeFunctions()
	s.vectorFunctions()
	s.labelNextFunctions()
	s.datasetDiffFunctions()
	s.evaluateFunctions()
	s.curateFunctions()
	s.clientRoutes(api) // each client function checks its own role
	s.modelRoutes(api)
	s.projectionRoutes(api)
	s.appRoutes(e, api) // the web app (ui.go), its thumbnails and who the caller is
	return e, s
}

func (s *server) healthz(c *echo.Context) error {
	return c.JSON(http.StatusOK, map[string]string{"status": "ok", "version": s.opt.Version})
}

func (s *server) logRequests() echo.MiddlewareFunc {
	return middleware.RequestLoggerWithConfig(middleware.RequestLoggerConfig{
		LogStatus: true, LogMethod: true, LogURIPath: true, LogLatency: true, LogRequestID: true,
		LogRemoteIP: true, HandleError: true,
		LogValuesFunc: func(c *echo.Context, v middleware.RequestLoggerValues) error {
			level, gone := slog.LevelInfo, v.Status == StatusClientClosedRequest
			if v.Status >= 500 {
				level = slog.LevelError
			}
			attrs := []slog.Attr{slog.String("method", v.Method), slog.String("path", v.URIPath),
				slog.Int("status", v.Status), slog.Duration("latency", v.Latency),
				slog.String("request_id", v.RequestID), slog.String("remote", v.RemoteIP)}
			if gone {
				attrs = append(attrs, slog.Bool("client_closed", true))
			} else if v.Error != nil && v.Status >= 500 {
				attrs = append(attrs, slog.String("error", v.Error.Error()))
			}
			s.Logger.LogAttrs(c.Request().Context(), level, "request", attrs...)
			return nil
		},
	})
}
