package web

import (
	"context"
	"errors"
	"net/http"

	"github.com/labstack/echo/v5"

	"github.com/framelake/framelake/errs"
)

// status is the one mapping from error codes to HTTP statuses.
var status = map[errs.Code]int{
	errs.InvalidArgument:    http.StatusBadRequest,
	errs.NotFound:           http.StatusNotFound,
	errs.AlreadyExists:      http.StatusConflict,
	errs.FailedPrecondition: http.StatusConflict,
	errs.PermissionDenied:   http.StatusForbidden,
	errs.Unauthenticated:    http.StatusUnauthorized,
	errs.TooLarge:           http.StatusRequestEntityTooLarge,
	errs.UnsupportedMedia:   http.StatusUnsupportedMediaType,
	errs.Unavailable:        http.StatusServiceUnavailable,
	errs.TooManyAttempts:    http.StatusTooManyRequests,
	errs.Internal:           http.StatusInternalServerError,
}

// codeOfStatus names the statuses Echo itself produces (no route, wrong method, ...).
var codeOfStatus = map[int]errs.Code{
	http.StatusNotFound:              errs.NotFound,
	http.StatusMethodNotAllowed:      errs.InvalidArgument, // keeps its 405
	http.StatusRequestEntityTooLarge: errs.TooLarge,
	http.StatusUnsupportedMediaType:  errs.UnsupportedMedia,
	http.StatusBadRequest:            errs.InvalidArgument,
	http.StatusUnauthorized:          errs.Unauthenticated,
	http.StatusForbidden:             errs.PermissionDenied,
}

type errorBody struct {
	Error errorDetail `json:"error"`
}

type errorDetail struct {
	Code    errs.Code `json:"code"`
	Message string    `json:"message"`
	Field   string    `json:"field,omitempty"`
}

// toDetail turns any error into what the client sees. Unknown errors are
// internal: their text goes to the log only.
func toDetail(err error) (int, errorDetail) {
	var e *errs.Error
	var sc echo.HTTPStatusCoder
	var mb *http.MaxBytesError
	var slow *slowBodyError
	switch {
	case errors.As(err, &e):
		return status[e.Code], errorDetail{Code: e.Code, Message: e.Message, Field: e.Field}
	case errors.As(err, &mb):
		return http.StatusRequestEntityTooLarge, errorDetail{Code: errs.TooLarge,
			Message: "request body is larger than the " + humanBytes(mb.Limit) + " limit"}
	case errors.As(err, &slow):
		return http.StatusRequestTimeout, errorDetail{Code: errs.InvalidArgument, Message: slow.Error()}
	case errors.As(err, &sc):
		status := sc.StatusCode()
		if code, ok := codeOfStatus[status]; ok {
			msg := http.StatusText(status)
			if he, ok := sc.(*echo.HTTPError); ok && he.Message != "" {
				msg = he.Message
			}
			return status, errorDetail{Code: code, Message: lowerFirst(msg)}
		}
	}
	return http.StatusInternalServerError, errorDetail{Code: errs.Internal, Message: "internal error"}
}

func (s *server) handleError(c *echo.Context, err error) {
	if r, _ := echo.UnwrapResponse(c.Response()); r != nil && r.Committed {
		return
	}
	if clientGone(c) && !cutByServer(err) {
		// Nobody reads the answer; the status is for the request log.
		_ = c.NoContent(StatusClientClosedRequest)
		return
	}
	code, d := toDetail(err)
	if code == http.StatusNotFound && d.Message == "not found" {
		d.Message = "no route " + c.Request().Method + " " + c.Request().URL.Path
	} else if code == http.StatusMethodNotAllowed {
		d.Message = "method " + c.Request().Method + " not allowed on " + c.Request().URL.Path
	}
	if code >= 500 {
		s.Logger.Error("request failed", "path", c.Request().URL.Path, "error", err,
			"request_id", c.Response().Header().Get(echo.HeaderXRequestID))
	}
	if code == http.StatusRequestTimeout {
		c.Response().Header().Set("Connection", "close")
	}
	if c.Request().Method == http.MethodHead {
		_ = c.NoContent(code)
		return
	}
	_ = c.JSON(code, errorBody{Error: d})
}

// StatusClientClosedRequest (nginx's 499) is how the request log records a
// request whose client went away before it was answered: whatever error the
// handler then met (a query cut with "context canceled", a body cut short)
// is the client's leaving, not a server fault, so it is logged at info level
// and never as an error.
const StatusClientClosedRequest = 499

// clientGone says whether the client closed the request: net/http cancels a
// request's context when its connection closes (or an HTTP/2 stream is
// reset), and only then, as a server shutdown waits for requests instead.
func clientGone(c *echo.Context) bool {
	return errors.Is(c.Request().Context().Err(), context.Canceled)
}

// cutByServer says whether the server ended the request itself: a body cut
// for arriving too slowly closes the connection, which cancels the request's
// context too, yet the 408 is the server's answer and must still be sent.
func cutByServer(err error) bool {
	var slow *slowBodyError
	return errors.As(err, &slow)
}

func lowerFirst(s string) string {
	if s == "" || s[0] < 'A' || s[0] > 'Z' {
		return s
	}
	return string(s[0]+'a'-'A') + s[1:]
}
