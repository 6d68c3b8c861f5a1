package query

import "strings"

// attrPredicate compiles a positive comparison (=, <, <=, >, >=, ~, IN) of an
// annotation attribute, JSON value A at a bound path, with vs:
//
//   - an unquoted number compares with JSON numbers, numerically;
//   - true and false (quoted or not) equal the JSON boolean and the text
//     "true"/"false" that readers such as CVAT's <attribute> leave; they take
//     = and IN only;
//   - anything else compares with JSON text, by code point, ~ as a substring
//     ignoring ASCII case.
//
// Kinds never mix: SQLite orders every number before every string, and a
// JSON true extracts as 1, so each test first checks json_type. A missing
// attribute is NULL, which the caller treats as false.
func (c *compiler) attrPredicate(f Field, sp spec, op Op, vs []Value) (string, error) {
	if op != opIn {
		return c.attrTest(f, sp, op, vs[0])
	}
	parts := make([]string, len(vs))
	for i, v := range vs {
		s, err := c.attrTest(f, sp, Eq, v)
		if err != nil {
			return "", err
		}
		parts[i] = s
	}
	if len(parts) == 1 {
		return parts[0], nil
	}
	return "(" + strings.Join(parts, " OR ") + ")", nil
}

func (c *compiler) attrTest(f Field, sp spec, op Op, v Value) (string, error) {
	typ := func() string { return "json_type(" + c.col(sp) + ", ?)" }
	val := func() string { return "json_extract(" + c.col(sp) + ", ?)" }
	if b := strings.ToLower(v.Text); !v.Number && (b == "true" || b == "false") {
		if op != Eq {
			return "", errorAt(f.Pos, "operator %s does not apply to %s = %s; booleans take =, != and IN", op, f, b)
		}
		// A -> path is the value's JSON text: true, or "true" for the text.
		s := "(" + c.col(sp) + " -> ?) IN (" + c.bind(b) + ", " + c.bind(`"`+b+`"`) + ")"
		return s, nil
	}
	if op == Match {
		if v.Number {
			return "", errorAt(f.Pos, "operator ~ does not apply to %s with the number %s; quote it to match text", f, v.Text)
		}
		s := "(" + typ() + " = 'text' AND instr(lower(" + val() + "), " + c.bind(asciiLower(v.Text)) + ") > 0)"
		return s, nil
	}
	if v.Number {
		x, err := number(f, v)
		if err != nil {
			return "", err
		}
		s := "(" + typ() + " IN ('integer', 'real') AND " + val() + " " + string(op) + " " + c.bind(x) + ")"
		return s, nil
	}
	return "(" + typ() + " = 'text' AND " + val() + " " + string(op) + " " + c.bind(v.Text) + ")", nil
}
