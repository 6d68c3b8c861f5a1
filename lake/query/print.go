package query

import (
	"strings"
)

// The canonical form: keywords upper case, one space around operators and
// keywords, fields by their canonical names, values unquoted where that reads
// back as the same value, and parentheses only where precedence needs them.

func (e And) String() string {
	return join(e.X, " AND ", func(x Expr) bool { _, ok := x.(Or); return ok })
}

func (e Or) String() string { return join(e.X, " OR ", func(Expr) bool { return false }) }

func join(xs []Expr, sep string, paren func(Expr) bool) string {
	var b strings.Builder
	for i, x := range xs {
		if i > 0 {
			b.WriteString(sep)
		}
		writeOperand(&b, x, paren(x))
	}
	return b.String()
}

func writeOperand(b *strings.Builder, x Expr, paren bool) {
	if x == nil {
		b.WriteString("()")
		return
	}
	if paren {
		b.WriteByte('(')
	}
	b.WriteString(x.String())
	if paren {
		b.WriteByte(')')
	}
}

func (e Not) String() string {
	var b strings.Builder
	b.WriteString("NOT ")
	switch e.X.(type) {
	case And, Or:
		writeOperand(&b, e.X, true)
	default:
		writeOperand(&b, e.X, false)
	}
	return b.String()
}

func (e Annotation) String() string {
	var b strings.Builder
	b.WriteString("annotation(")
	writeOperand(&b, e.X, false)
	b.WriteByte(')')
	return b.String()
}

func (e Compare) String() string {
	return e.Field.String() + " " + string(e.Op) + " " + e.Value.String()
}

func (e In) String() string {
	var b strings.Builder
	b.WriteString(e.Field.String())
	b.WriteString(" IN (")
	for i, v := range e.Values {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(v.String())
	}
	b.WriteByte(')')
	return b.String()
}

func (f Field) String() string {
	switch {
	case f.Name == "metadata" && isBareKey(f.Key):
		return metadataPrefix + f.Key
	case f.Name == "metadata":
		return metadataPrefix + quote(f.Key)
	case isAttrField(f.Name) && isBareKey(f.Key):
		return f.Name + "." + f.Key
	case isAttrField(f.Name):
		return f.Name + "." + quote(f.Key)
	case f.Arg != nil:
		return f.Name + "(" + f.Arg.String() + ")"
	case isEvalField(f.Name):
		return evalPrefix + f.Key + "." + strings.TrimPrefix(f.Name, evalPrefix)
	}
	return f.Name
}

// isBareKey reports whether metadata.<key> can be written unquoted and read
// back as that key: word characters only, and not the Tags alias.
func isBareKey(key string) bool {
	if key == "" || strings.EqualFold(key, "tags") {
		return false
	}
	for _, r := range key {
		if !isWordRune(r) {
			return false
		}
	}
	return true
}

func (v Value) String() string {
	if v.Number || isBareWord(v.Text) {
		return v.Text
	}
	return quote(v.Text)
}
