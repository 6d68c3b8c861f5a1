// Package query is the media lake's query language: a lexer, a parser that
// builds a small AST, and a compiler that turns the AST into a boolean SQL
// expression over the lake schema with `?` placeholders. Only fixed SQL text
// from the field allowlist in this package ever reaches SQL; every value, and
// every custom metadata key, travels as a bound parameter.
//
// The full grammar with examples is in GRAMMAR.md beside this file. In short:
//
//	annotation.label=dog AND createdAt >= "2026-01-01"
//	(Tags IN (cat, dog) OR metadata.camera ~ canon) AND NOT type = video
//	annotation.count(dog) >= 2 AND fileSize < 10MB AND width >= 1920
//
// Semantics decided here:
//
//   - Keywords (AND, OR, NOT, IN) and built-in field names are
//     case-insensitive. metadata.<key> keys are case-sensitive JSON keys,
//     except metadata.Tags (any case, unquoted), which is the Tags field so the
//     reference form keeps working; metadata."Tags" addresses a JSON key.
//   - Precedence: NOT binds tighter than AND, AND tighter than OR.
//   - Logic is two-valued. A missing value (NULL width, absent metadata key)
//     makes =, <, <=, >, >=, ~ and IN false, and !=, !~ and NOT IN true:
//     `a != v` is always exactly `NOT a = v`.
//   - Set-valued fields (Tags, collection, annotation.*) test existence:
//     `Tags = dog` means the item has a tag named dog, `Tags != dog` that it has
//     none. Two annotation.* comparisons joined by AND are two independent
//     tests: they may be met by different boxes. The grouped form
//     annotation(label = dog AND source = machine AND confidence > 0.8) asks
//     for one box that meets all its tests; inside it, != and NOT are about
//     that box (a box with another label), not about the file.
//   - annotation.count counts boxes on a file (all frames); annotation.count(dog)
//     counts only the boxes labelled dog.
//   - ~ is a substring test, case-insensitive for ASCII letters.
//   - Dates are UTC. A date literal denotes an interval: 2026-01-31 is that whole
//     day, 2026-01-31T10:00 that minute, and so on. `=` means within it, `<`
//     before its start, `<=` before its end (the whole day is included), `>`
//     at or after its end, `>=` at or after its start.
//   - For collections, fileSize and frameCount are totals over members (a file
//     with no frame count counts as one frame), fileCount counts members, and
//     annotation.* tests the boxes of all member files.
//
// The compiled SQL is shaped for the lake's indexes (see Shape). Measured on
// 1M files and 3M boxes without ANALYZE statistics, `annotation.label=dog AND
// createdAt >= 2026-01-01` ORDER BY updated_at DESC LIMIT 20 compiles to a walk of
// index file_type_updated with one annotation_label probe per file (0.2 ms,
// the same as the best hand-written SQL, where the plain EXISTS + range SQL a
// person would write sorts the whole range: 0.3-1 s); its count uses the
// label's file list with a Bloom filter. The weak case of the Page shape is a
// label on few files, which walks much of the index (tens of ms at 1M files,
// about a second when no file matches).
//
// `metadata.<key> = v` (and IN) on files tests table file_meta, the index of
// every file's top-level scalars that lake migration 002 keeps by triggers,
// instead of parsing each file's JSON; values it does not hold (text over 256
// characters, JSON of an object or array) are still compared on the JSON.
//
// Parse bounds its work: queries over MaxLength bytes, nesting deeper than
// MaxDepth, more than MaxTerms comparisons, IN lists over MaxInList values, or
// more than MaxValues values fail with a positioned error before any SQL is
// built. Parsing is linear in the input and its recursion is bounded by MaxDepth.
package query

import (
	"fmt"
	"strings"

	"github.com/framelake/framelake/errs"
)

// Limits on one query. They keep hostile input cheap to reject and keep the
// compiled SQL well inside SQLite's own limits (expression depth 1000, 32766
// bound parameters).
const (
	MaxLength = 64 << 10 // bytes of query text
	MaxDepth  = 64       // nested parentheses and NOTs
	MaxTerms  = 256      // comparisons in one query
	MaxInList = 1000     // values in one IN list
	MaxValues = 4096     // values in one query, IN lists included
)

// Expr is a node of a parsed query: And, Or, Not, Compare, In or
// Annotation. String prints the canonical form, which parses back to an equal
// Expr.
type Expr interface {
	String() string
	exprNode()
}

// Pos is a 1-based line and column (in characters) of the query text. The zero
// Pos means "unknown", for nodes built by hand.
type Pos struct{ Line, Col int }

func (p Pos) String() string { return fmt.Sprintf("%d:%d", p.Line, p.Col) }

// And holds two or more operands that must all hold.
type And struct{ X []Expr }

// Or holds two or more operands of which one must hold.
type Or struct{ X []Expr }

// Not negates X.
type Not struct {
	X   Expr
	Pos Pos
}

// Op is a comparison operator, spelled as in the canonical form.
type Op string

const (
	Eq       Op = "="
	Ne       Op = "!="
	Lt       Op = "<"
	Le       Op = "<="
	Gt       Op = ">"
	Ge       Op = ">="
	Match    Op = "~"  // substring
	NotMatch Op = "!~" // no such substring
)

// Compare is `Field Op Value`.
type Compare struct {
	Field Field
	Op    Op
	Value Value
}

// In is `Field IN (Values...)`; `Field NOT IN (...)` parses as Not{In}.
type In struct {
	Field  Field
	Values []Value
}

// Annotation is `annotation(X)`: one box must meet every test in X, where X
// names box fields without their prefix: label, source, confidence,
// operation, frame.
type Annotation struct {
	X   Expr
	Pos Pos
}

// Field names what a comparison is about. Name is the canonical built-in name
// ("createdAt", "annotation.count", "metadata", ...); Key is the JSON key when
// Name is "metadata"; Arg is the label of annotation.count(label).
type Field struct {
	Name string
	Key  string
	Arg  *Value
	Pos  Pos
}

// Value is a literal. Number is set when it was written as an unquoted decimal
// number; Text is its source text for numbers and its unescaped content
// otherwise. How Text is read (number, size, date, enum) depends on the field.
type Value struct {
	Text   string
	Number bool
	Pos    Pos
}

func (And) exprNode()     {}
func (Or) exprNode()      {}
func (Not) exprNode()     {}
func (Compare) exprNode() {}
func (In) exprNode()      {}

func (Annotation) exprNode() {}

// Target is the table a query is compiled against.
type Target int

const (
	Files       Target = iota + 1 // table file
	Collections                   // table collection
)

func (t Target) String() string {
	switch t {
	case Files:
		return "files"
	case Collections:
		return "collections"
	}
	return fmt.Sprintf("target(%d)", int(t))
}

// Shape says what the statement around the compiled expression does with the
// matches, because SQLite plans set-membership tests (Tags, collection,
// annotation.*) best in different forms for the two cases; see Options.
type Shape int

const (
	// Page: an ORDER BY over an indexed column with a LIMIT. Membership tests
	// become correlated EXISTS probes, so SQLite walks the ORDER BY index and
	// stops after the page instead of collecting every match and sorting.
	Page Shape = iota
	// Count: every match is visited (count(*), bulk jobs). Membership tests
	// become `seq IN (SELECT ...)`, which SQLite can drive from the
	// annotation or tag index or test with a Bloom filter.
	Count
)

// Options select what Compile produces.
type Options struct {
	Target Target
	// Alias is how the caller's FROM names the target table (`file f` → "f");
	// "" means the bare table name. It must be a plain identifier not starting
	// with "q_", which is reserved for this package's subqueries.
	Alias string
	Shape Shape
}

// errorAt returns the positioned invalid-argument error every failure of this
// package is: the web layer answers 400 with field "query".
func errorAt(p Pos, format string, args ...any) error {
	msg := fmt.Sprintf(format, args...)
	if p.Line == 0 {
		return errs.Invalid("query", "query: %s", msg)
	}
	return errs.Invalid("query", "query %d:%d: %s", p.Line, p.Col, msg)
}

// Parse parses src. A blank query returns a nil Expr and no error; it matches
// everything and Compile turns it into "1".
func Parse(src string) (Expr, error) {
	if len(src) > MaxLength {
		return nil, errorAt(Pos{1, 1}, "query is %d bytes; the limit is %d", len(src), MaxLength)
	}
	if strings.TrimSpace(src) == "" {
		return nil, nil
	}
	p, err := newParser(src)
	if err != nil {
		return nil, err
	}
	return p.parse()
}
