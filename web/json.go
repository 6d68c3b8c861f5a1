package web

import (
	"bytes"
	"encoding/json"

	"github.com/labstack/echo/v5"
)

// jsonSerializer writes answers without encoding/json's HTML escaping: they
// are read by programs and shells, never pasted into HTML, and a media link
// must copy as it is, with & rather than \u0026, and a query error must show
// <label> rather than \u003clabel\u003e.
type jsonSerializer struct{ echo.DefaultJSONSerializer }

func (jsonSerializer) Serialize(c *echo.Context, v any, indent string) error {
	enc := json.NewEncoder(c.Response())
	enc.SetEscapeHTML(false)
	if indent != "" {
		enc.SetIndent("", indent)
	}
	return enc.Encode(v)
}

// marshalJSON is json.Marshal without HTML escaping, for bodies written by hand.
func marshalJSON(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}
