package query

import (
	"fmt"
	"strings"
	"testing"

	"github.com/framelake/framelake/errs"
)

func TestCompile(t *testing.T) {
	const exists = "EXISTS (SELECT 1 FROM annotation q_a WHERE q_a.file_seq = f.seq AND "
	const meta = "EXISTS (SELECT 1 FROM file_meta q_m WHERE q_m.file_seq = f.seq AND q_m.key = ? AND "
	tests := []struct {
		q     string
		t     Target
		shape Shape
		sql   string
		args  []any
	}{
		{`annotation.label=dog`, Files, Page, exists + "q_a.label = ?)", []any{"dog"}},
		{`annotation.label=dog`, Files, Count, "f.seq IN (SELECT q_a.file_seq FROM annotation q_a WHERE q_a.label = ?)", []any{"dog"}},
		{`annotation.label=dog AND createdAt >= "2026-01-01"`, Files, Page,
			"(" + exists + "q_a.label = ?) AND likely(f.created_at >= ?))", []any{"dog", int64(1767225600000)}},
		{`annotation.label=dog AND createdAt >= "2026-01-01"`, Files, Count,
			"(f.seq IN (SELECT q_a.file_seq FROM annotation q_a WHERE q_a.label = ?) AND f.created_at >= ?)", []any{"dog", int64(1767225600000)}},
		{`createdAt <= 2026-01-31`, Files, Count, "f.created_at < ?", []any{int64(1769904000000)}},
		{`createdAt < 2026-01-31`, Files, Count, "f.created_at < ?", []any{int64(1769817600000)}},
		{`createdAt > 2026-01-31`, Files, Count, "f.created_at >= ?", []any{int64(1769904000000)}},
		{`createdAt = 2026-01-31`, Files, Page, "(f.created_at >= ? AND f.created_at < ?)", []any{int64(1769817600000), int64(1769904000000)}},
		{`updatedAt != 2026-01`, Files, Count, "NOT ((f.updated_at >= ? AND f.updated_at < ?))", []any{int64(1767225600000), int64(1769904000000)}},
		{`createdAt = "2026-01-31 10:00"`, Files, Count, "(f.created_at >= ? AND f.created_at < ?)", []any{int64(1769853600000), int64(1769853660000)}},
		{`createdAt >= 2026-01-31T10:00:00+02:00`, Files, Count, "f.created_at >= ?", []any{int64(1769846400000)}},
		{`createdAt = 2026-01-31T1:00`, Files, Count, "(f.created_at >= ? AND f.created_at < ?)", []any{int64(1769821200000), int64(1769821260000)}},
		{`createdAt <= 2026-01-31T10:00:00.5Z`, Files, Count, "f.created_at < ?", []any{int64(1769853600501)}},
		{`Tags = dog`, Files, Page, "EXISTS (SELECT 1 FROM file_tag q_t WHERE q_t.file_seq = f.seq AND q_t.name = ?)", []any{"dog"}},
		{`Tags != dog`, Files, Count, "NOT (f.seq IN (SELECT q_t.file_seq FROM file_tag q_t WHERE q_t.name = ?))", []any{"dog"}},
		{`Tags ~ DO`, Files, Page, "EXISTS (SELECT 1 FROM file_tag q_t WHERE q_t.file_seq = f.seq AND instr(lower(q_t.name), ?) > 0)", []any{"do"}},
		{`Tags IN (a, b)`, Files, Page, "EXISTS (SELECT 1 FROM file_tag q_t WHERE q_t.file_seq = f.seq AND q_t.name IN (?, ?))", []any{"a", "b"}},
		{`collection = "Summer 2026"`, Files, Page,
			"EXISTS (SELECT 1 FROM collection_file q_cf JOIN collection q_c ON q_c.seq = q_cf.collection_seq WHERE q_cf.file_seq = f.seq AND q_c.name = ?)", []any{"Summer 2026"}},
		{`type = Image`, Files, Page, "f.type = ?", []any{"image"}},
		{`type IN (image, video)`, Files, Page, "f.type IN (?, ?)", []any{"image", "video"}},
		{`fileSize >= 1.5KiB`, Files, Page, "likely(f.size >= ?)", []any{int64(1536)}},
		{`fileSize < 10mb`, Files, Count, "f.size < ?", []any{int64(10000000)}},
		{`fileSize < 1e6`, Files, Count, "f.size < ?", []any{float64(1e6)}},
		{`fileSize < "2048"`, Files, Count, "f.size < ?", []any{int64(2048)}},
		{`width != 640`, Files, Page, "NOT coalesce(f.width = ?, 0)", []any{int64(640)}},
		{`frameRate > 29.97`, Files, Page, "f.frame_rate > ?", []any{29.97}},
		{`annotation.source = MACHINE AND annotation.confidence >= 0.8`, Files, Page,
			"(" + exists + "q_a.source = ?) AND " + exists + "q_a.confidence >= ?))", []any{"machine", 0.8}},
		{`annotation.count(dog) >= 2`, Files, Page, "(SELECT count(*) FROM annotation q_a WHERE q_a.file_seq = f.seq AND q_a.label = ?) >= ?", []any{"dog", int64(2)}},
		{`annotation.count = 0`, Files, Page, "NOT EXISTS (SELECT 1 FROM annotation q_a WHERE q_a.file_seq = f.seq)", nil},
		{`annotation.count < 1`, Files, Count, "NOT EXISTS (SELECT 1 FROM annotation q_a WHERE q_a.file_seq = f.seq)", nil},
		{`annotation.count <= 0`, Files, Page, "NOT EXISTS (SELECT 1 FROM annotation q_a WHERE q_a.file_seq = f.seq)", nil},
		{`annotation.count > 0`, Files, Page, "EXISTS (SELECT 1 FROM annotation q_a WHERE q_a.file_seq = f.seq)", nil},
		{`annotation.count >= 1`, Files, Page, "EXISTS (SELECT 1 FROM annotation q_a WHERE q_a.file_seq = f.seq)", nil},
		{`annotation.count != 0`, Files, Page, "NOT (NOT EXISTS (SELECT 1 FROM annotation q_a WHERE q_a.file_seq = f.seq))", nil},
		{`annotation.count(dog) = 0 AND width > 10`, Files, Page, "(NOT EXISTS (SELECT 1 FROM annotation q_a WHERE q_a.file_seq = f.seq AND q_a.label = ?) AND f.width > ?)", []any{"dog", int64(10)}},
		{`annotation.count = 2`, Files, Page, "(SELECT count(*) FROM annotation q_a WHERE q_a.file_seq = f.seq) = ?", []any{int64(2)}},
		{`annotation.count >= 0.5`, Files, Page, "(SELECT count(*) FROM annotation q_a WHERE q_a.file_seq = f.seq) >= ?", []any{0.5}},
		{`annotation.count = 0`, Collections, Page, "NOT EXISTS (SELECT 1 FROM collection_file q_cf JOIN annotation q_a ON q_a.file_seq = q_cf.file_seq WHERE q_cf.collection_seq = c.seq)", nil},
		{`metadata.iso > 100`, Files, Page,
			"(typeof(json_extract(f.metadata, ?)) IN ('integer', 'real') AND json_extract(f.metadata, ?) > ?)", []any{`$."iso"`, `$."iso"`, int64(100)}},
		{`metadata.camera <= "m"`, Files, Page,
			"(typeof(json_extract(f.metadata, ?)) = 'text' AND json_extract(f.metadata, ?) <= ?)", []any{`$."camera"`, `$."camera"`, "m"}},
		// metadata equality on files is a lookup in file_meta, except for
		// values it does not hold; collections test their JSON.
		{`metadata."it's" = 5`, Files, Page, meta + "q_m.value = ?)", []any{`it's`, int64(5)}},
		{`NOT metadata.x = a`, Files, Page, "NOT (" + meta + "q_m.value = ?))", []any{"x", "a"}},
		{`metadata.x IN (a, 2)`, Files, Count,
			"f.seq IN (SELECT q_m.file_seq FROM file_meta q_m WHERE q_m.key = ? AND q_m.value IN (?, ?))", []any{"x", "a", int64(2)}},
		{`metadata.x = "[1]"`, Files, Page, "json_extract(f.metadata, ?) = ?", []any{`$."x"`, "[1]"}},
		{`metadata.x = "` + strings.Repeat("é", 257) + `"`, Files, Page, "json_extract(f.metadata, ?) = ?", []any{`$."x"`, strings.Repeat("é", 257)}},
		{`metadata.x = a`, Collections, Page, "json_extract(c.metadata, ?) = ?", []any{`$."x"`, "a"}},
		{`NOT (name = a OR width > 3)`, Files, Page, "NOT coalesce((f.name = ? OR f.width > ?), 0)", []any{"a", int64(3)}},
		{`NOT (name = a OR uniqueName = b)`, Files, Page, "NOT ((f.name = ? OR f.unique_name = ?))", []any{"a", "b"}},
		{`annotation(label = dog AND source = machine AND NOT confidence < 0.5)`, Files, Page,
			exists + "(q_a.label = ? AND q_a.source = ? AND NOT coalesce(q_a.confidence < ?, 0)))", []any{"dog", "machine", 0.5}},
		{`annotation(label != dog)`, Files, Count, "f.seq IN (SELECT q_a.file_seq FROM annotation q_a WHERE NOT (q_a.label = ?))", []any{"dog"}},
		{`annotation(frame >= 2)`, Collections, Count,
			"c.seq IN (SELECT q_cf.collection_seq FROM collection_file q_cf JOIN annotation q_a ON q_a.file_seq = q_cf.file_seq WHERE q_a.frame >= ?)", []any{int64(2)}},
		// collections
		{`type = image`, Collections, Page, "c.type = ?", []any{"image_collection"}},
		{`Tags = dog`, Collections, Count, "c.seq IN (SELECT q_t.collection_seq FROM collection_tag q_t WHERE q_t.name = ?)", []any{"dog"}},
		{`annotation.label = dog`, Collections, Page,
			"EXISTS (SELECT 1 FROM collection_file q_cf JOIN annotation q_a ON q_a.file_seq = q_cf.file_seq WHERE q_cf.collection_seq = c.seq AND q_a.label = ?)", []any{"dog"}},
		{`fileCount > 2`, Collections, Page, "(SELECT count(*) FROM collection_file q_cf WHERE q_cf.collection_seq = c.seq) > ?", []any{int64(2)}},
		{`fileSize > 1GB`, Collections, Page,
			"(SELECT coalesce(sum(q_f.size), 0) FROM collection_file q_cf JOIN file q_f ON q_f.seq = q_cf.file_seq WHERE q_cf.collection_seq = c.seq) > ?", []any{int64(1e9)}},
	}
	for _, tt := range tests {
		e, err := Parse(tt.q)
		if err != nil {
			t.Errorf("Parse(%q): %v", tt.q, err)
			continue
		}
		alias := map[Target]string{Files: "f", Collections: "c"}[tt.t]
		sql, args, err := CompileWith(e, Options{Target: tt.t, Alias: alias, Shape: tt.shape})
		if err != nil {
			t.Errorf("Compile(%q, %s): %v", tt.q, tt.t, err)
			continue
		}
		if sql != tt.sql || fmt.Sprint(args) != fmt.Sprint(tt.args) || fmt.Sprintf("%T", args) != fmt.Sprintf("%T", tt.args) {
			t.Errorf("Compile(%q, %s, shape %d)\n got %s %#v\nwant %s %#v", tt.q, tt.t, tt.shape, sql, args, tt.sql, tt.args)
		}
		if n := strings.Count(sql, "?"); n != len(args) {
			t.Errorf("Compile(%q): %d placeholders, %d args", tt.q, n, len(args))
		}
	}
}

func TestCompileBlank(t *testing.T) {
	e, err := Parse("")
	if err != nil {
		t.Fatal(err)
	}
	sql, args, err := Compile(e, Files, "f")
	if sql != "1" || args != nil || err != nil {
		t.Fatalf("blank query compiles to %q %v %v", sql, args, err)
	}
}

func TestCompileErrors(t *testing.T) {
	tests := []struct {
		q    string
		t    Target
		want string
	}{
		{`uniqueName = x`, Collections, `query 1:1: field uniqueName does not apply to collections; known fields: name, type, fileSize, frameCount, fileCount,`},
		{`fileCount = 1`, Files, `query 1:1: field fileCount does not apply to files; known fields: name, uniqueName,`},
		{`width = wide`, Files, `query 1:9: width: want a number, got wide`},
		{`width = 1e999`, Files, `query 1:9: width: number 1e999 is out of range`},
		{`fileSize > 10XB`, Files, `query 1:12: fileSize: want a number of bytes such as 2048, 10MB or 1.5GiB, got 10XB`},
		{`createdAt > yesterday`, Files, `query 1:13: createdAt: want a date such as 2026-01-31`},
		{`createdAt > 2026`, Files, `query 1:13: createdAt: want a date`},
		{`createdAt > 2026-02-30`, Files, `query 1:13: createdAt: want a date`},
		{`createdAt ~ 2026`, Files, `query 1:1: operator ~ does not apply to createdAt`},
		{`createdAt IN (2026-01-01)`, Files, `query 1:1: IN does not apply to createdAt; compare with >= and <`},
		{`type = movie`, Files, `query 1:8: type: unknown value movie; want one of image, video, other`},
		{`type = image_collection`, Files, `query 1:8: type: unknown value image_collection`},
		{`type > image`, Files, `query 1:1: operator > does not apply to type`},
		{`annotation.source = robot`, Collections, `query 1:21: annotation.source: unknown value robot; want one of human, machine`},
		{`fileSize ~ 10`, Files, `query 1:1: operator ~ does not apply to fileSize`},
		{"name = a AND\n annotation.count(dog) ~ 1", Files, `query 2:2: operator ~ does not apply to annotation.count(dog)`},
	}
	for _, tt := range tests {
		e, err := Parse(tt.q)
		if err != nil {
			t.Errorf("Parse(%q): %v", tt.q, err)
			continue
		}
		_, _, err = Compile(e, tt.t, "x")
		if err == nil || !strings.HasPrefix(err.Error(), tt.want) {
			t.Errorf("Compile(%q, %s) error\n got %v\nwant %s", tt.q, tt.t, err, tt.want)
			continue
		}
		checkInvalid(t, err)
	}
}

func TestCompileOptions(t *testing.T) {
	e, _ := Parse("Tags = a")
	for _, o := range []Options{{Target: 0}, {Target: Files, Alias: "f; DROP"}, {Target: Files, Alias: "q_a"}, {Target: Files, Alias: "1f"}} {
		if _, _, err := CompileWith(e, o); !errs.Is(err, errs.Internal) {
			t.Errorf("CompileWith(%+v) = %v, want internal error", o, err)
		}
	}
	sql, _, err := Compile(e, Files, "")
	if err != nil || !strings.Contains(sql, "= file.seq") {
		t.Errorf("no alias: %q %v", sql, err)
	}
	// Hand-built trees are checked too.
	bad := []Expr{Not{}, Annotation{X: Annotation{X: Compare{Field: Field{Name: "label"}, Op: Eq}}},
		Annotation{X: Compare{Field: Field{Name: "metadata", Key: "k"}, Op: Eq}}, And{X: []Expr{nil}}, Compare{Field: Field{Name: "bogus"}, Op: Eq, Value: Value{Text: "x"}},
		In{Field: Field{Name: "name"}}, Compare{Field: Field{Name: "name", Arg: &Value{Text: "x"}}, Op: Eq}}
	for _, b := range bad {
		if _, _, err := Compile(b, Files, "f"); err == nil {
			t.Errorf("Compile(%#v) succeeded", b)
		}
	}
	var deep Expr = Compare{Field: Field{Name: "name"}, Op: Eq, Value: Value{Text: "x"}}
	for range 10000 {
		deep = Not{X: deep}
	}
	if _, _, err := Compile(deep, Files, "f"); err == nil || !strings.Contains(err.Error(), "nests deeper") {
		t.Errorf("deep hand-built tree: %v", err)
	}
}

func TestFields(t *testing.T) {
	f := Fields(Files)
	f[0] = "changed"
	if Fields(Files)[0] != "name" || len(Fields(Collections)) == 0 || Fields(0) != nil {
		t.Fatal("Fields")
	}
}
