package web

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"github.com/go-playground/validator/v10"
	"github.com/labstack/echo/v5"

	"github.com/framelake/framelake/errs"
)

// validate names fields by their JSON names in its errors.
var validate = func() *validator.Validate {
	v := validator.New(validator.WithRequiredStructEnabled())
	v.RegisterTagNameFunc(func(f reflect.StructField) string {
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "-" {
			return ""
		}
		return name
	})
	return v
}()

// bindJSON decodes a JSON body into v, refusing unknown fields, trailing data
// and wrong types with an error that names the field, then validates v.
func (s *server) bindJSON(c *echo.Context, v any) error {
	body, err := s.readBody(c, "application/json")
	if err != nil {
		return err
	}
	if len(bytes.TrimSpace(body)) == 0 {
		body = []byte("{}")
	}
	if err := decodeStrict(body, v); err != nil {
		return err
	}
	return validateStruct(v)
}

// readBody reads a request body of at most MaxJSONBytes whose content type,
// when the client gives one, is among types.
func (s *server) readBody(c *echo.Context, types ...string) ([]byte, error) {
	r := c.Request()
	if ct := r.Header.Get("Content-Type"); ct != "" {
		if mt, _, _ := mime.ParseMediaType(ct); !slices.Contains(types, mt) {
			return nil, errs.New(errs.UnsupportedMedia, "", "content type %q: send %s", ct, strings.Join(types, " or "))
		}
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, s.opt.MaxJSONBytes+1))
	if err != nil {
		return nil, err
	}
	if int64(len(body)) > s.opt.MaxJSONBytes {
		return nil, errs.New(errs.TooLarge, "", "request body is larger than the %s limit", humanBytes(s.opt.MaxJSONBytes))
	}
	return body, nil
}

func decodeStrict(body []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	err := dec.Decode(v)
	if err == nil && dec.More() {
		return errs.Invalid("", "request body has data after the JSON object")
	}
	var te *json.UnmarshalTypeError
	var se *json.SyntaxError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &te):
		return errs.Invalid(te.Field, "%s must be %s, got %s", te.Field, jsonKind(te.Type), te.Value)
	case errors.As(err, &se):
		return errs.Invalid("", "request body is not valid JSON at byte %d: %v", se.Offset, err)
	case strings.HasPrefix(err.Error(), "json: unknown field "):
		name, _ := strconv.Unquote(strings.TrimPrefix(err.Error(), "json: unknown field "))
		return errs.Invalid(name, "unknown field %q", name)
	}
	return errs.Invalid("", "request body: %v", err)
}

func validateStruct(v any) error {
	err := validate.Struct(v)
	var ve validator.ValidationErrors
	if !errors.As(err, &ve) || len(ve) == 0 {
		return nil
	}
	fe := ve[0]
	field := fe.Field()
	switch fe.Tag() {
	case "required":
		return errs.Invalid(field, "%s is required", field)
	case "min":
		return errs.Invalid(field, "%s must be at least %s", field, fe.Param())
	case "max":
		return errs.Invalid(field, "%s must be at most %s", field, fe.Param())
	case "oneof":
		return errs.Invalid(field, "%s must be one of %s", field, strings.ReplaceAll(fe.Param(), " ", ", "))
	}
	return errs.Invalid(field, "%s is invalid (%s)", field, fe.Tag())
}

func jsonKind(t reflect.Type) string {
	switch t.Kind() {
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "a boolean"
	case reflect.Slice, reflect.Array:
		return "an array"
	case reflect.Map, reflect.Struct:
		return "an object"
	case reflect.Float32, reflect.Float64, reflect.Int, reflect.Int64, reflect.Int32, reflect.Uint, reflect.Uint64:
		return "a number"
	}
	return t.String()
}

func humanBytes(n int64) string {
	switch {
	case n >= 1<<30 && n%(1<<30) == 0:
		return fmt.Sprintf("%d GiB", n>>30)
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d-byte", n)
}
