package query

import (
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/framelake/framelake/errs"
)

// opIn marks an In node on the way through leaf; it is never printed.
const opIn Op = "IN"

// maxCompileDepth bounds recursion over hand-built trees; parsed ones stay far
// below it (each level of parentheses adds at most an Or, an And and a Not).
const maxCompileDepth = 4 * MaxDepth

// Compile compiles e for a page of rows (Shape Page) of target t whose table
// the caller's FROM names alias. See CompileWith.
func Compile(e Expr, t Target, alias string) (sql string, args []any, err error) {
	return CompileWith(e, Options{Target: t, Alias: alias})
}

// CompileWith returns a boolean SQL expression equivalent to e and the values
// for its `?` placeholders, in order, to AND into the caller's WHERE clause. The
// SQL text comes only from this package's field allowlist; every literal and
// metadata key is an argument. A nil e (blank query) compiles to "1".
//
// Errors in e (a field that does not apply to the target, a value of the wrong
// kind) are errs.InvalidArgument with field "query" and a position; a bad
// Options is errs.Internal.
func CompileWith(e Expr, o Options) (sql string, args []any, err error) {
	outer, err := outerName(o)
	if err != nil {
		return "", nil, err
	}
	if e == nil {
		return "1", nil, nil
	}
	c := &compiler{opt: o, outer: outer}
	sql, _, err = c.expr(e)
	if err != nil {
		return "", nil, err
	}
	return sql, c.args, nil
}

type compiler struct {
	opt    Options
	outer  string
	args   []any
	depth  int
	terms  int
	values int
	inBox  bool // compiling the inside of annotation(...): fields of box q_a
}

// expr compiles e and reports whether the SQL may be NULL (a missing value),
// which only matters under NOT: the query language is two-valued.
func (c *compiler) expr(e Expr) (string, bool, error) {
	c.depth++
	defer func() { c.depth-- }()
	if c.depth > maxCompileDepth {
		return "", false, errorAt(Pos{}, "query nests deeper than %d levels", maxCompileDepth)
	}
	switch e := e.(type) {
	case And:
		return c.junction(e.X, " AND ", "1")
	case Or:
		return c.junction(e.X, " OR ", "0")
	case Not:
		s, nullable, err := c.expr(e.X)
		return negate(s, nullable), false, err
	case Compare:
		return c.leaf(e.Field, e.Op, []Value{e.Value})
	case In:
		return c.leaf(e.Field, opIn, e.Values)
	case Annotation:
		return c.box(e)
	case nil:
		return "", false, errorAt(Pos{}, "missing operand")
	}
	return "", false, errs.New(errs.Internal, "", "query: unknown node %T", e)
}

// box compiles annotation(X): one related box (q_a) meets all of X.
func (c *compiler) box(e Annotation) (string, bool, error) {
	if c.inBox {
		return "", false, errorAt(e.Pos, "annotation(...) cannot nest")
	}
	c.inBox = true
	s, _, err := c.expr(e.X)
	c.inBox = false
	if err != nil {
		return "", false, err
	}
	from, key := c.boxes()
	return c.membership(spec{from: from, key: key}, s), false, nil
}

func negate(s string, nullable bool) string {
	if nullable {
		return "NOT coalesce(" + s + ", 0)"
	}
	return "NOT (" + s + ")"
}

func (c *compiler) junction(xs []Expr, sep, empty string) (string, bool, error) {
	if len(xs) == 0 {
		return empty, false, nil
	}
	parts := make([]string, len(xs))
	nullable := false
	for i, x := range xs {
		s, n, err := c.expr(x)
		if err != nil {
			return "", false, err
		}
		parts[i], nullable = s, nullable || n
	}
	if len(parts) == 1 {
		return parts[0], nullable, nil
	}
	return "(" + strings.Join(parts, sep) + ")", nullable, nil
}

// leaf compiles one comparison. Negative operators are NOT of the positive
// one, so `a != v` and `NOT a = v` mean the same for every field.
func (c *compiler) leaf(f Field, op Op, vs []Value) (string, bool, error) {
	if c.terms++; c.terms > MaxTerms {
		return "", false, errorAt(f.Pos, "query has more than %d comparisons", MaxTerms)
	}
	if c.values += len(vs); c.values > MaxValues || len(vs) > MaxInList {
		return "", false, errorAt(f.Pos, "query has too many values")
	}
	if len(vs) == 0 {
		return "", false, errorAt(f.Pos, "empty IN list")
	}
	sp, err := c.field(f)
	if err != nil {
		return "", false, err
	}
	if err := checkOp(f, sp, op); err != nil {
		return "", false, err
	}
	positive := op
	switch op {
	case Ne:
		positive = Eq
	case NotMatch:
		positive = Match
	}
	var s string
	var nullable bool
	if z, ok := c.zeroTest(sp, positive, vs[0]); ok {
		s = z
	} else if sp.kind == fMeta && c.opt.Target == Files && (positive == Eq || positive == opIn) && MetaIndexed(vs...) {
		// The same test on file_meta, the index of top-level scalars.
		pred := "q_m.key = " + c.bind(f.Key) + " AND "
		sp = spec{kind: fMember, col: "q_m.value", from: "file_meta q_m", key: "q_m.file_seq", numbers: true}
		s, _, err = c.predicate(f, sp, positive, vs, false)
		s = c.membership(sp, pred+s)
	} else if sp.kind == fAttr {
		s, err = c.attrPredicate(f, sp, positive, vs)
		if nullable = sp.from == ""; !nullable {
			s = c.membership(sp, s)
		}
	} else if sp.kind == fMember {
		s, _, err = c.predicate(f, sp, positive, vs, false)
		s = c.membership(sp, s)
	} else {
		s, nullable, err = c.predicate(f, sp, positive, vs, sp.ranged && c.opt.Shape == Page)
	}
	if err != nil {
		return "", false, err
	}
	if positive != op {
		return negate(s, nullable), false, nil
	}
	return s, nullable, nil
}

// zeroTest writes a comparison of a count of rows with zero (= 0, < 1,
// <= 0; > 0, >= 1) as the NOT EXISTS or EXISTS it means, which stops at the
// first row where count(*) reads them all: the sidebar's "raw" count
// (annotation.count = 0) over its sample took half the time so.
func (c *compiler) zeroTest(sp spec, op Op, v Value) (string, bool) {
	if sp.counted == "" || !v.Number {
		return "", false
	}
	n, err := strconv.ParseFloat(v.Text, 64)
	if err != nil {
		return "", false
	}
	var none bool
	switch {
	case op == Eq && n == 0, op == Lt && n == 1, op == Le && n == 0:
		none = true
	case op == Gt && n == 0, op == Ge && n == 1:
	default:
		return "", false
	}
	c.args = append(c.args, sp.colArgs...)
	if none {
		return "NOT EXISTS (SELECT 1 " + sp.counted + ")", true
	}
	return "EXISTS (SELECT 1 " + sp.counted + ")", true
}

// membership wraps a predicate on related rows into a test on the target row,
// in the form SQLite plans best for the statement's Shape (see Shape).
func (c *compiler) membership(sp spec, pred string) string {
	if c.opt.Shape == Count {
		return c.outer + ".seq IN (SELECT " + sp.key + " FROM " + sp.from + " WHERE " + pred + ")"
	}
	return "EXISTS (SELECT 1 FROM " + sp.from + " WHERE " + sp.key + " = " + c.outer + ".seq AND " + pred + ")"
}

// MetaIndexed reports whether equality of a metadata key with each of vs can
// be answered from table file_meta, which holds numbers, booleans and text up
// to 256 characters. Longer text and text that is JSON of an object or array
// (what json_extract returns for one) are compared on the JSON itself.
func MetaIndexed(vs ...Value) bool {
	for _, v := range vs {
		if v.Number {
			continue
		}
		t := strings.TrimSpace(v.Text)
		if utf8.RuneCountInString(v.Text) > 256 || strings.HasPrefix(t, "{") || strings.HasPrefix(t, "[") {
			return false
		}
	}
	return true
}

// MetaLiteral is the value v compares as with a metadata key: a number when
// written as one, else its text.
func MetaLiteral(f Field, v Value) (any, error) {
	if v.Number {
		return number(f, v)
	}
	return v.Text, nil
}

func checkOp(f Field, sp spec, op Op) error {
	bad := false
	switch sp.typ {
	case vEnum:
		bad = op != Eq && op != Ne && op != opIn
	case vDate:
		bad = op == Match || op == NotMatch || op == opIn
	case vNumber, vSize:
		bad = op == Match || op == NotMatch
	}
	if !bad {
		return nil
	}
	if op == opIn {
		return errorAt(f.Pos, "IN does not apply to %s; compare with >= and <", f)
	}
	return errorAt(f.Pos, "operator %s does not apply to %s", op, f)
}

// col returns the field's SQL and binds its own arguments, so arguments stay
// in textual order when the column is written more than once.
func (c *compiler) col(sp spec) string {
	c.args = append(c.args, sp.colArgs...)
	return sp.col
}

func (c *compiler) bind(x any) string {
	c.args = append(c.args, x)
	return "?"
}

// predicate compiles the positive operators (=, <, <=, >, >=, ~, IN) on sp.
// hint wraps one-sided ranges in likely(): without ANALYZE statistics SQLite
// guesses a range keeps a quarter of the rows and would rather scan that range
// and sort than walk the ORDER BY index and stop after a page; user ranges
// such as createdAt >= "2026-01-01" usually keep far more.
func (c *compiler) predicate(f Field, sp spec, op Op, vs []Value, hint bool) (string, bool, error) {
	switch {
	case op == Match:
		return "instr(lower(" + c.col(sp) + "), " + c.bind(asciiLower(vs[0].Text)) + ") > 0", sp.nullable, nil
	case sp.typ == vDate:
		return c.dateRange(f, sp, op, vs[0], hint)
	case op == opIn:
		xs := make([]any, len(vs))
		for i, v := range vs {
			x, err := c.literal(f, sp, v)
			if err != nil {
				return "", false, err
			}
			xs[i] = x
		}
		s := c.col(sp) + " IN (?" + strings.Repeat(", ?", len(xs)-1) + ")"
		c.args = append(c.args, xs...)
		return s, sp.nullable, nil
	}
	x, err := c.literal(f, sp, vs[0])
	if err != nil {
		return "", false, err
	}
	if sp.kind == fMeta && op != Eq {
		// SQLite orders every number before every string; compare like with like.
		types := " = 'text'"
		if vs[0].Number {
			types = " IN ('integer', 'real')"
		}
		guard := "typeof(" + c.col(sp) + ")" + types
		return "(" + guard + " AND " + c.col(sp) + " " + string(op) + " " + c.bind(x) + ")", false, nil
	}
	s := c.col(sp) + " " + string(op) + " " + c.bind(x)
	if hint && op != Eq {
		s = "likely(" + s + ")"
	}
	return s, sp.nullable, nil
}

// literal converts v to the argument the field compares with.
func (c *compiler) literal(f Field, sp spec, v Value) (any, error) {
	switch sp.typ {
	case vNumber:
		return number(f, v)
	case vSize:
		return size(f, v)
	case vEnum:
		return enumValue(f, sp, v)
	}
	if sp.numbers && v.Number {
		return number(f, v)
	}
	return v.Text, nil
}

func enumValue(f Field, sp spec, v Value) (any, error) {
	s := strings.ToLower(v.Text)
	for _, e := range sp.enum {
		if s == e || sp.alias != "" && s+sp.alias == e {
			return e, nil
		}
	}
	return nil, errorAt(v.Pos, "%s: unknown value %s; want one of %s", f, v, strings.Join(sp.enum, ", "))
}

// dateRange compiles a comparison with the interval [start, end) a date
// literal denotes: `<=` 2026-01-31 includes that whole day.
func (c *compiler) dateRange(f Field, sp spec, op Op, v Value, hint bool) (string, bool, error) {
	start, end, err := date(f, v)
	if err != nil {
		return "", false, err
	}
	var s string
	switch op {
	case Eq:
		return "(" + c.col(sp) + " >= " + c.bind(start) + " AND " + c.col(sp) + " < " + c.bind(end) + ")", sp.nullable, nil
	case Lt:
		s = c.col(sp) + " < " + c.bind(start)
	case Le:
		s = c.col(sp) + " < " + c.bind(end)
	case Gt:
		s = c.col(sp) + " >= " + c.bind(end)
	case Ge:
		s = c.col(sp) + " >= " + c.bind(start)
	default:
		return "", false, errorAt(f.Pos, "operator %s does not apply to %s", op, f)
	}
	if hint {
		s = "likely(" + s + ")"
	}
	return s, sp.nullable, nil
}
