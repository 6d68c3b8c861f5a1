package query

import (
	"strings"
	"unicode/utf8"
)

// builtinFields are the canonical names of the fields every target may know,
// in the order error messages list them.
var builtinFields = [...]string{
	"name", "uniqueName", "type", "fileSize", "width", "height", "frameCount", "frameRate",
	"createdAt", "updatedAt", "collection", "fileCount", "Tags",
	"annotation.label", "annotation.source", "annotation.confidence", "annotation.operation",
	"annotation.count", "annotation.type", "annotation.area", "annotation.points", "annotation.keypoints.visible",
	"class",
	"quality.sharpness", "quality.brightness", "quality.contrast", "quality.entropy", "quality.aspect",
	"duplicates.group", "duplicates.count", "disagreement.count", "uniqueness",
	"track.count", "track.label", "track.length",
}

const metadataPrefix = "metadata."

func knownFieldsText(names []string) string {
	return strings.Join(names, ", ") + ", annotation.count(<label>), annotation.attributes.<name>, metadata.<key>, eval.<key>.tp|fp|fn"
}

// parser is a recursive-descent parser over a pull lexer. Recursion happens
// only through parentheses and NOT, both counted in depth, so input nests at
// most MaxDepth frames deep however it is crafted.
type parser struct {
	lex    lexer
	tok    token
	depth  int
	terms  int
	values int
	inBox  bool // inside annotation(...): fields are those of one box
}

// boxFields are the fields inside annotation(...), canonical names.
var boxFields = [...]string{"label", "source", "confidence", "operation", "frame", "type", "area", "points",
	"keypoints.visible"}

func newParser(src string) (*parser, error) {
	if !utf8.ValidString(src) {
		l := lexer{src: src, line: 1, col: 1}
		for {
			r, size := l.peekRune()
			if r == utf8.RuneError && size <= 1 {
				return nil, errorAt(l.pos(), "query is not valid UTF-8")
			}
			l.advance(size, r)
		}
	}
	p := &parser{lex: lexer{src: src, line: 1, col: 1}}
	if err := p.advance(); err != nil {
		return nil, err
	}
	return p, nil
}

func (p *parser) advance() error {
	t, err := p.lex.next()
	if err != nil {
		return err
	}
	p.tok = t
	return nil
}

func (p *parser) enter(at Pos) error {
	p.depth++
	if p.depth > MaxDepth {
		return errorAt(at, "query nests deeper than %d levels of parentheses and NOT", MaxDepth)
	}
	return nil
}

func (p *parser) parse() (Expr, error) {
	e, err := p.parseOr()
	if err != nil {
		return nil, err
	}
	switch p.tok.kind {
	case tEOF:
		return e, nil
	case tRParen:
		return nil, errorAt(p.tok.pos, "unexpected ) with no matching (")
	}
	return nil, errorAt(p.tok.pos, "expected AND, OR or end of query, found %s", p.tok.describe())
}

func (p *parser) parseOr() (Expr, error) {
	x, err := p.parseAnd()
	if err != nil || p.tok.kind != tOr {
		return x, err
	}
	xs := appendFlat(nil, x, false)
	for p.tok.kind == tOr {
		if err := p.advance(); err != nil {
			return nil, err
		}
		y, err := p.parseAnd()
		if err != nil {
			return nil, err
		}
		xs = appendFlat(xs, y, false)
	}
	return Or{X: xs}, nil
}

func (p *parser) parseAnd() (Expr, error) {
	x, err := p.parseUnary()
	if err != nil || p.tok.kind != tAnd {
		return x, err
	}
	xs := appendFlat(nil, x, true)
	for p.tok.kind == tAnd {
		if err := p.advance(); err != nil {
			return nil, err
		}
		y, err := p.parseUnary()
		if err != nil {
			return nil, err
		}
		xs = appendFlat(xs, y, true)
	}
	return And{X: xs}, nil
}

// appendFlat appends x to xs, splicing in the operands of a parenthesized
// And (or Or) so equal queries get equal trees whatever their grouping.
func appendFlat(xs []Expr, x Expr, and bool) []Expr {
	if a, ok := x.(And); ok && and {
		return append(xs, a.X...)
	}
	if o, ok := x.(Or); ok && !and {
		return append(xs, o.X...)
	}
	return append(xs, x)
}

func (p *parser) parseUnary() (Expr, error) {
	switch p.tok.kind {
	case tNot:
		at := p.tok.pos
		if err := p.enter(at); err != nil {
			return nil, err
		}
		if err := p.advance(); err != nil {
			return nil, err
		}
		x, err := p.parseUnary()
		if err != nil {
			return nil, err
		}
		p.depth--
		return Not{X: x, Pos: at}, nil
	case tLParen:
		open := p.tok.pos
		if err := p.enter(open); err != nil {
			return nil, err
		}
		if err := p.advance(); err != nil {
			return nil, err
		}
		x, err := p.parseOr()
		if err != nil {
			return nil, err
		}
		if p.tok.kind != tRParen {
			return nil, errorAt(p.tok.pos, "expected ) to close ( at %s, found %s", open, p.tok.describe())
		}
		p.depth--
		return x, p.advance()
	}
	return p.parsePredicate()
}

func (p *parser) parsePredicate() (Expr, error) {
	if p.tok.kind == tWord && strings.EqualFold(p.tok.text, "annotation") {
		return p.parseBox()
	}
	f, err := p.parseField()
	if err != nil {
		return nil, err
	}
	p.terms++
	if p.terms > MaxTerms {
		return nil, errorAt(f.Pos, "query has more than %d comparisons", MaxTerms)
	}
	switch p.tok.kind {
	case tOp:
		op := Op(p.tok.text)
		if err := p.advance(); err != nil {
			return nil, err
		}
		v, err := p.parseValue()
		if err != nil {
			return nil, err
		}
		return Compare{Field: f, Op: op, Value: v}, nil
	case tIn:
		vs, err := p.parseList()
		return In{Field: f, Values: vs}, err
	case tNot:
		at := p.tok.pos
		if err := p.advance(); err != nil {
			return nil, err
		}
		if p.tok.kind != tIn {
			return nil, errorAt(p.tok.pos, "expected IN after NOT, found %s", p.tok.describe())
		}
		vs, err := p.parseList()
		return Not{X: In{Field: f, Values: vs}, Pos: at}, err
	}
	return nil, errorAt(p.tok.pos, "expected an operator (=, !=, <, <=, >, >=, ~, !~, IN, NOT IN) after %s, found %s",
		f, p.tok.describe())
}

// parseBox parses annotation(...), the tests one box must meet together.
func (p *parser) parseBox() (Expr, error) {
	at := p.tok.pos
	if p.inBox {
		return nil, errorAt(at, "annotation(...) cannot nest")
	}
	if err := p.advance(); err != nil {
		return nil, err
	}
	if p.tok.kind != tLParen {
		return nil, errorAt(p.tok.pos, "expected ( after annotation (or a field such as annotation.label), found %s", p.tok.describe())
	}
	if err := p.enter(p.tok.pos); err != nil {
		return nil, err
	}
	if err := p.advance(); err != nil {
		return nil, err
	}
	p.inBox = true
	x, err := p.parseOr()
	if err != nil {
		return nil, err
	}
	if p.tok.kind != tRParen {
		return nil, errorAt(p.tok.pos, "expected ) to close annotation( at %s, found %s", at, p.tok.describe())
	}
	p.inBox = false
	p.depth--
	return Annotation{X: x, Pos: at}, p.advance()
}

func (p *parser) parseField() (Field, error) {
	t := p.tok
	switch t.kind {
	case tWord:
	case tEOF:
		return Field{}, errorAt(t.pos, "expected a comparison such as annotation.label = dog, found end of query")
	default:
		return Field{}, errorAt(t.pos, "expected a field name, found %s", t.describe())
	}
	if err := p.advance(); err != nil {
		return Field{}, err
	}
	if name, ok := attrPrefixOf(t.text, p.inBox); ok && len(t.text) == len(name) && p.tok.kind == tString && p.tok.off == t.end {
		key := p.tok.text // annotation.attributes."a key"
		if err := checkAttrKey(t.pos, key); err != nil {
			return Field{}, err
		}
		return Field{Name: strings.TrimSuffix(attrName(p.inBox), "."), Key: key, Pos: t.pos}, p.advance()
	}
	if p.inBox {
		return resolveBoxField(t)
	}
	if strings.EqualFold(t.text, metadataPrefix) && p.tok.kind == tString && p.tok.off == t.end {
		key := p.tok.text
		if err := checkMetadataKey(t.pos, key); err != nil {
			return Field{}, err
		}
		return Field{Name: "metadata", Key: key, Pos: t.pos}, p.advance()
	}
	f, err := resolveField(t)
	if err != nil || f.Name != "annotation.count" || p.tok.kind != tLParen {
		return f, err
	}
	if err := p.advance(); err != nil {
		return Field{}, err
	}
	arg, err := p.parseValue()
	if err != nil {
		return Field{}, err
	}
	if p.tok.kind != tRParen {
		return Field{}, errorAt(p.tok.pos, "expected ) after the label of annotation.count, found %s", p.tok.describe())
	}
	f.Arg = &arg
	return f, p.advance()
}

func resolveField(t token) (Field, error) {
	w := t.text
	if len(w) >= len(metadataPrefix) && strings.EqualFold(w[:len(metadataPrefix)], metadataPrefix) {
		key := w[len(metadataPrefix):]
		if strings.EqualFold(key, "tags") {
			return Field{Name: "Tags", Pos: t.pos}, nil
		}
		if key == "" {
			return Field{}, errorAt(t.pos, `missing key after metadata. (write metadata.<key> or metadata."<key>")`)
		}
		return Field{Name: "metadata", Key: key, Pos: t.pos}, nil
	}
	if f, ok, err := resolveAttrField(t, false); ok {
		return f, err
	}
	if f, ok, err := resolveEvalField(t); ok {
		return f, err
	}
	for _, name := range builtinFields {
		if strings.EqualFold(w, name) {
			return Field{Name: name, Pos: t.pos}, nil
		}
	}
	return Field{}, errorAt(t.pos, "unknown field %s; known fields: %s", quote(w), knownFieldsText(builtinFields[:]))
}

// resolveBoxField names a field of one box, with or without "annotation.".
func resolveBoxField(t token) (Field, error) {
	if f, ok, err := resolveAttrField(t, true); ok {
		return f, err
	}
	name := t.text
	if len(name) > len("annotation.") && strings.EqualFold(name[:len("annotation.")], "annotation.") {
		name = name[len("annotation."):]
	}
	for _, f := range boxFields {
		if strings.EqualFold(name, f) {
			return Field{Name: f, Pos: t.pos}, nil
		}
	}
	return Field{}, errorAt(t.pos, "unknown field %s inside annotation(...); known fields: %s, attributes.<name>",
		quote(t.text), strings.Join(boxFields[:], ", "))
}

// checkMetadataKey rejects keys SQLite's JSON path syntax cannot quote.
func checkMetadataKey(at Pos, key string) error {
	if key == "" {
		return errorAt(at, "empty metadata key")
	}
	if strings.ContainsRune(key, '"') {
		return errorAt(at, "metadata key %s may not contain a double quote", quote(key))
	}
	return nil
}

func (p *parser) parseValue() (Value, error) {
	t := p.tok
	var v Value
	switch t.kind {
	case tWord, tString:
		v = Value{Text: t.text, Pos: t.pos}
	case tNumber:
		v = Value{Text: t.text, Number: true, Pos: t.pos}
	case tAnd, tOr, tNot, tIn:
		return v, errorAt(t.pos, "expected a value, found the keyword %s (quote it to use it as a value)", t.describe())
	default:
		return v, errorAt(t.pos, "expected a value, found %s", t.describe())
	}
	p.values++
	if p.values > MaxValues {
		return v, errorAt(t.pos, "query has more than %d values", MaxValues)
	}
	return v, p.advance()
}

func (p *parser) parseList() ([]Value, error) {
	if err := p.advance(); err != nil { // IN
		return nil, err
	}
	if p.tok.kind != tLParen {
		return nil, errorAt(p.tok.pos, "expected ( after IN, found %s", p.tok.describe())
	}
	open := p.tok.pos
	if err := p.advance(); err != nil {
		return nil, err
	}
	var vs []Value
	for {
		v, err := p.parseValue()
		if err != nil {
			return nil, err
		}
		if vs = append(vs, v); len(vs) > MaxInList {
			return nil, errorAt(v.Pos, "IN list has more than %d values", MaxInList)
		}
		switch p.tok.kind {
		case tComma:
			if err := p.advance(); err != nil {
				return nil, err
			}
		case tRParen:
			return vs, p.advance()
		default:
			return nil, errorAt(p.tok.pos, "expected , or ) in the IN list opened at %s, found %s", open, p.tok.describe())
		}
	}
}

// attrPrefix starts a field naming one attribute of an annotation; inside
// annotation(...) the "annotation." is optional.
const attrPrefix = "annotation.attributes."

// attrName is the canonical Field.Name prefix of attribute fields: with
// "annotation." outside annotation(...), without inside (as the box's other
// fields are written there).
func attrName(inBox bool) string {
	if inBox {
		return attrPrefix[len("annotation."):]
	}
	return attrPrefix
}

// attrPrefixOf returns the attribute prefix w starts with (in w's spelling),
// if any.
func attrPrefixOf(w string, inBox bool) (string, bool) {
	for _, pre := range []string{attrPrefix, attrPrefix[len("annotation."):]} {
		if len(w) >= len(pre) && strings.EqualFold(w[:len(pre)], pre) {
			return w[:len(pre)], true
		}
		if !inBox {
			break
		}
	}
	return "", false
}

// resolveAttrField reads annotation.attributes.<name> (attributes.<name>
// inside annotation(...)); ok is false when t names no attribute.
func resolveAttrField(t token, inBox bool) (f Field, ok bool, err error) {
	pre, ok := attrPrefixOf(t.text, inBox)
	if !ok {
		return Field{}, false, nil
	}
	key := t.text[len(pre):]
	if key == "" {
		return Field{}, true, errorAt(t.pos, `missing attribute name after %s (write %s<name> or %s"<name>")`, pre, pre, pre)
	}
	if err := checkAttrKey(t.pos, key); err != nil {
		return Field{}, true, err
	}
	return Field{Name: strings.TrimSuffix(attrName(inBox), "."), Key: key, Pos: t.pos}, true, nil
}

// checkAttrKey rejects attribute names SQLite's JSON path syntax cannot
// quote; the name travels as a bound path, never as SQL text.
func checkAttrKey(at Pos, key string) error {
	if key == "" {
		return errorAt(at, "empty attribute name")
	}
	if strings.ContainsRune(key, '"') {
		return errorAt(at, "attribute name %s may not contain a double quote", quote(key))
	}
	return nil
}
