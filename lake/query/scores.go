package query

import "strings"

// Per-file figures that analyses compute after ingest, kept in the tables of
// lake migration 003 (file_quality, file_duplicate, file_disagreement,
// file_uniqueness, file_eval). They apply to files only.
//
// quality.* and uniqueness are single rows a file may lack, tested as
// membership so a range is driven by the column's index; a file without
// scores has a missing value. duplicates.count and disagreement.count have a
// natural value without a row (1: the file is its own group; 0). The counts
// of an evaluation are eval.<key>.tp|fp|fn, missing for a file the
// evaluation did not cover.
var scoreFields = [...]string{
	"quality.sharpness", "quality.brightness", "quality.contrast", "quality.entropy", "quality.aspect",
	"duplicates.group", "duplicates.count", "disagreement.count", "uniqueness",
}

const evalPrefix = "eval."

var evalStats = [...]string{"tp", "fp", "fn"}

// MaxEvalKey is the longest evaluation key.
const MaxEvalKey = 64

// ValidEvalKey says whether key can name an evaluation: it is written bare in
// queries (eval.<key>.fp), so it is 1 to MaxEvalKey letters, digits, _ or -.
func ValidEvalKey(key string) bool {
	if key == "" || len(key) > MaxEvalKey {
		return false
	}
	for _, r := range key {
		if !(r == '_' || r == '-' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9') {
			return false
		}
	}
	return true
}

// resolveEvalField reads eval.<key>.<stat>; ok is false when w is not in
// that form at all.
func resolveEvalField(t token) (f Field, ok bool, err error) {
	w := t.text
	if len(w) < len(evalPrefix) || !strings.EqualFold(w[:len(evalPrefix)], evalPrefix) {
		return Field{}, false, nil
	}
	rest := w[len(evalPrefix):]
	dot := strings.LastIndexByte(rest, '.')
	if dot < 0 {
		return Field{}, true, errorAt(t.pos, "write eval.<key>.tp, eval.<key>.fp or eval.<key>.fn, not %s", quote(w))
	}
	key, stat := rest[:dot], strings.ToLower(rest[dot+1:])
	if !ValidEvalKey(key) {
		return Field{}, true, errorAt(t.pos, "evaluation key %s is not 1 to %d letters, digits, _ or -", quote(key), MaxEvalKey)
	}
	for _, s := range evalStats {
		if stat == s {
			return Field{Name: evalPrefix + s, Key: key, Pos: t.pos}, true, nil
		}
	}
	return Field{}, true, errorAt(t.pos, "unknown evaluation count %s; known: tp, fp, fn", quote(rest[dot+1:]))
}

func isEvalField(name string) bool { return strings.HasPrefix(name, evalPrefix) }

// scoreField compiles the per-file figures; the zero spec when f is none.
func (c *compiler) scoreField(f Field) spec {
	seq := c.outer + ".seq"
	single := func(table, col string) spec {
		return spec{kind: fMember, col: "q_s." + col, typ: vNumber, from: table + " q_s", key: "q_s.file_seq"}
	}
	switch f.Name {
	case "quality.sharpness", "quality.brightness", "quality.contrast", "quality.entropy", "quality.aspect":
		return single("file_quality", strings.TrimPrefix(f.Name, "quality."))
	case "uniqueness":
		return single("file_uniqueness", "score")
	case "duplicates.group":
		return spec{kind: fMember, col: "q_s.group_id", from: "file_duplicate q_s", key: "q_s.file_seq"}
	case "duplicates.count":
		return spec{col: "coalesce((SELECT q_s.member_count FROM file_duplicate q_s WHERE q_s.file_seq = " + seq + "), 1)",
			typ: vNumber}
	case "disagreement.count":
		return spec{col: "coalesce((SELECT q_s.count FROM file_disagreement q_s WHERE q_s.file_seq = " + seq + "), 0)",
			typ: vNumber}
	case "eval.tp", "eval.fp", "eval.fn":
		return spec{col: "(SELECT q_s." + strings.TrimPrefix(f.Name, evalPrefix) +
			" FROM file_eval q_s WHERE q_s.eval_key = ? AND q_s.file_seq = " + seq + ")",
			colArgs: []any{f.Key}, typ: vNumber, nullable: true}
	}
	return spec{}
}
