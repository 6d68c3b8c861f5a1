// Package errs is framelake's one error type: every failure a caller can act on
// carries a Code, and optionally the request Field it is about. The web layer
// maps codes to HTTP statuses in one place; Go programs that embed framelake
// branch on CodeOf(err).
package errs

import (
	"errors"
	"fmt"
)

// Code classifies an error for callers. Values are stable and appear on the wire.
type Code string

const (
	InvalidArgument    Code = "invalid_argument"
	NotFound           Code = "not_found"
	AlreadyExists      Code = "already_exists"
	PermissionDenied   Code = "permission_denied"
	Unauthenticated    Code = "unauthenticated"
	FailedPrecondition Code = "failed_precondition"
	TooLarge           Code = "too_large"
	UnsupportedMedia   Code = "unsupported_media"
	Unavailable        Code = "unavailable"
	TooManyAttempts    Code = "too_many_attempts" // slowed down: try again later
	Internal           Code = "internal"
)

// Error is a failure with a code, a lowercase human message, and the request
// field it concerns ("" when it concerns no single field).
type Error struct {
	Code    Code
	Field   string
	Message string
	Err     error // wrapped cause, kept out of Message; may be nil
}

func (e *Error) Error() string {
	if e.Err != nil {
		return e.Message + ": " + e.Err.Error()
	}
	return e.Message
}

func (e *Error) Unwrap() error { return e.Err }

// New returns an *Error with a formatted message.
func New(code Code, field, format string, args ...any) *Error {
	return &Error{Code: code, Field: field, Message: fmt.Sprintf(format, args...)}
}

// Invalid reports bad input in field.
func Invalid(field, format string, args ...any) *Error {
	return New(InvalidArgument, field, format, args...)
}

// NotFoundf reports a missing resource.
func NotFoundf(format string, args ...any) *Error {
	return New(NotFound, "", format, args...)
}

// Wrap gives cause a code and message while keeping it for errors.Is/As and logs.
func Wrap(code Code, cause error, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...), Err: cause}
}

// Prefix returns err with "what: " put before its message, keeping its code and
// field; other errors are wrapped with fmt.Errorf.
func Prefix(err error, what string) error {
	var e *Error
	if errors.As(err, &e) {
		c := *e
		c.Message = what + ": " + e.Message
		return &c
	}
	return fmt.Errorf("%s: %w", what, err)
}

// CodeOf returns the code of the first *Error in err's chain, Internal otherwise.
func CodeOf(err error) Code {
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	return Internal
}

// Is reports whether err carries code.
func Is(err error, code Code) bool { return err != nil && CodeOf(err) == code }
