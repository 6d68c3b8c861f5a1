package query

import (
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

type tokKind int

const (
	tEOF tokKind = iota
	tWord
	tNumber
	tString
	tOp
	tLParen
	tRParen
	tComma
	tAnd
	tOr
	tNot
	tIn
)

type token struct {
	kind tokKind
	text string // word or number as written, unescaped string content, or operator
	pos  Pos
	off  int // byte offsets of the token in src, end exclusive
	end  int
}

// describe names a token for error messages.
func (t token) describe() string {
	switch t.kind {
	case tEOF:
		return "end of query"
	case tString:
		return "string " + quote(t.text)
	case tLParen, tRParen, tComma, tOp:
		return t.text
	case tAnd, tOr, tNot, tIn:
		return strings.ToUpper(t.text)
	}
	return quote(t.text)
}

// lexer scans src one token at a time, tracking line and column as it goes so
// positions cost nothing extra and errors need no second pass.
type lexer struct {
	src       string
	off       int
	line, col int
}

// isWordRune says which characters may appear in an unquoted word: field
// names, labels, numbers with sizes (10MB), dates and times (2026-01-31T10:00:00+02:00).
func isWordRune(r rune) bool {
	if unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.IsMark(r) {
		return true
	}
	switch r {
	case '_', '.', '-', ':', '/', '+', '@':
		return true
	}
	return false
}

func (l *lexer) pos() Pos { return Pos{l.line, l.col} }

func (l *lexer) advance(size int, r rune) {
	l.off += size
	if r == '\n' {
		l.line++
		l.col = 1
	} else {
		l.col++
	}
}

func (l *lexer) peekRune() (rune, int) {
	if l.off >= len(l.src) {
		return -1, 0
	}
	return utf8.DecodeRuneInString(l.src[l.off:])
}

func (l *lexer) next() (token, error) {
	for {
		r, size := l.peekRune()
		if size == 0 || !unicode.IsSpace(r) {
			break
		}
		l.advance(size, r)
	}
	start, p := l.off, l.pos()
	r, size := l.peekRune()
	if size == 0 {
		return token{kind: tEOF, pos: p, off: start, end: start}, nil
	}
	switch {
	case r == '"' || r == '\'':
		text, err := l.scanString(r)
		return token{kind: tString, text: text, pos: p, off: start, end: l.off}, err
	case isWordRune(r):
		for {
			r, size := l.peekRune()
			if size == 0 || !isWordRune(r) {
				break
			}
			l.advance(size, r)
		}
		text := l.src[start:l.off]
		return token{kind: wordKind(text), text: text, pos: p, off: start, end: l.off}, nil
	}
	l.advance(size, r)
	tok := token{text: string(r), pos: p, off: start}
	switch r {
	case '(':
		tok.kind = tLParen
	case ')':
		tok.kind = tRParen
	case ',':
		tok.kind = tComma
	case '=', '<', '>', '!', '~':
		tok.kind = tOp
		tok.text = l.scanOp(r)
		if tok.text == "" {
			return tok, errorAt(p, "unexpected character %s (did you mean != or !~?)", quoteRune(r))
		}
	default:
		return tok, errorAt(p, "unexpected character %s", quoteRune(r))
	}
	tok.end = l.off
	return tok, nil
}

// scanOp completes an operator whose first rune r was consumed, folding the
// accepted spellings == and <> into = and !=. It returns "" for a lone !.
func (l *lexer) scanOp(r rune) string {
	second, size := l.peekRune()
	two := func(op string) string { l.advance(size, second); return op }
	switch {
	case r == '=' && second == '=':
		return two("=")
	case r == '<' && second == '=':
		return two("<=")
	case r == '<' && second == '>':
		return two("!=")
	case r == '>' && second == '=':
		return two(">=")
	case r == '!' && second == '=':
		return two("!=")
	case r == '!' && second == '~':
		return two("!~")
	case r == '!':
		return ""
	}
	return string(r)
}

// scanString reads a string quoted with q (" or '). A backslash escapes only
// a backslash or either quote, so every other character stands for itself.
func (l *lexer) scanString(q rune) (string, error) {
	open := l.pos()
	l.advance(1, q)
	var b strings.Builder
	for {
		r, size := l.peekRune()
		switch {
		case size == 0:
			return "", errorAt(open, "unterminated string (missing closing %c)", q)
		case r == q:
			l.advance(size, r)
			return b.String(), nil
		case r == '\\':
			at := l.pos()
			l.advance(size, r)
			e, esize := l.peekRune()
			if e != '\\' && e != '"' && e != '\'' {
				return "", errorAt(at, `invalid escape in string: only \\, \" and \' are allowed`)
			}
			l.advance(esize, e)
			b.WriteRune(e)
		default:
			l.advance(size, r)
			b.WriteRune(r)
		}
	}
}

func wordKind(w string) tokKind {
	switch strings.ToUpper(w) {
	case "AND":
		return tAnd
	case "OR":
		return tOr
	case "NOT":
		return tNot
	case "IN":
		return tIn
	}
	if isNumber(w) {
		return tNumber
	}
	return tWord
}

// isNumber accepts plain decimal numbers: an optional sign, digits with an
// optional fraction, an optional exponent. It rejects what strconv would also
// take (hex, inf, nan, underscores) so those stay words.
func isNumber(s string) bool {
	i := 0
	if i < len(s) && (s[i] == '+' || s[i] == '-') {
		i++
	}
	digits := 0
	for ; i < len(s) && s[i] >= '0' && s[i] <= '9'; i++ {
		digits++
	}
	if i < len(s) && s[i] == '.' {
		i++
		for ; i < len(s) && s[i] >= '0' && s[i] <= '9'; i++ {
			digits++
		}
	}
	if digits == 0 {
		return false
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			i++
		}
		exp := 0
		for ; i < len(s) && s[i] >= '0' && s[i] <= '9'; i++ {
			exp++
		}
		if exp == 0 {
			return false
		}
	}
	return i == len(s)
}

// isBareWord reports whether s can be printed unquoted and read back as the
// same string value: a word that is neither a keyword nor a number.
func isBareWord(s string) bool {
	if s == "" {
		return false
	}
	for _, r := range s {
		if !isWordRune(r) {
			return false
		}
	}
	return wordKind(s) == tWord
}

func quote(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		if r == '"' || r == '\\' {
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	b.WriteByte('"')
	return b.String()
}

func quoteRune(r rune) string { return strconv.QuoteRune(r) }
