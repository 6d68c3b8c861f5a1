package query

import (
	"strings"

	"github.com/framelake/framelake/errs"
)

// fieldKind says how a field reaches the target row.
type fieldKind int

const (
	fScalar fieldKind = iota // a column or scalar subquery of the target row
	fMember                  // a set: the test is whether a related row matches
	fMeta                    // a key of the metadata JSON; its type follows the literal
	fAttr                    // a key of an annotation's attributes JSON (col: the JSON, colArgs: the path)
)

// spec is one allowlisted field compiled for one target: the only SQL text a
// query can put into a statement.
type spec struct {
	kind     fieldKind
	col      string // scalar, meta: the value's SQL; member: the related row's column
	colArgs  []any  // arguments col binds, in order (metadata path, count label)
	typ      valueType
	nullable bool
	ranged   bool // an indexed column: one-sided ranges get likely() in Page shape
	enum     []string
	alias    string // vEnum: a suffix a short value may omit ("image" for "image_collection")
	from     string // member: FROM clause of the related rows
	key      string // member: column of the related row that equals the target's seq
	numbers  bool   // a literal written as a number compares as one (metadata values)
	counted  string // a count of rows: "FROM ... WHERE ..." of the rows col counts (see zeroTest)
}

var (
	fileFields = [...]string{
		"name", "uniqueName", "type", "fileSize", "width", "height", "frameCount", "frameRate",
		"createdAt", "updatedAt", "collection", "Tags",
		"annotation.label", "annotation.source", "annotation.confidence", "annotation.operation",
		"annotation.count", "annotation.type", "annotation.area", "annotation.points", "annotation.keypoints.visible",
		"class",
		"quality.sharpness", "quality.brightness", "quality.contrast", "quality.entropy", "quality.aspect",
		"duplicates.group", "duplicates.count", "disagreement.count", "uniqueness",
		"track.count", "track.label", "track.length",
	}
	collectionFields = [...]string{
		"name", "type", "fileSize", "frameCount", "fileCount", "createdAt", "updatedAt", "Tags",
		"annotation.label", "annotation.source", "annotation.confidence", "annotation.operation",
		"annotation.count", "annotation.type", "annotation.area", "annotation.points", "annotation.keypoints.visible",
		"class",
	}
	fileTypes       = [...]string{"image", "video", "other"}
	collectionTypes = [...]string{"image_collection", "video_collection", "other_collection"}
	sources         = [...]string{"human", "machine"}
	shapeTypes      = [...]string{"box", "polygon", "mask", "keypoints", "polyline", "class"}
)

// The columns of one annotation q_a that shape fields read (migration 010).
// A box's area is COCO's where its import kept one, else width × height; a
// class has none.
const (
	areaCol    = "coalesce(q_a.area, iif(q_a.type = 'box', q_a.w * q_a.h, NULL))"
	classCol   = "iif(q_a.type = 'class', q_a.label, NULL)"
	pointsCol  = "q_a.points"
	visibleCol = "q_a.visible"
	typeCol    = "q_a.type"
)

// Fields lists the built-in field names t knows, in documentation order;
// every target also knows metadata.<key>, annotation.count(<label>) and
// annotation.attributes.<name>.
func Fields(t Target) []string {
	switch t {
	case Files:
		return append([]string(nil), fileFields[:]...)
	case Collections:
		return append([]string(nil), collectionFields[:]...)
	}
	return nil
}

// outerName is how compiled SQL names the target row. The alias is spliced
// into SQL, so it must be a plain identifier; q_ names are this package's.
func outerName(o Options) (string, error) {
	var table string
	switch o.Target {
	case Files:
		table = "file"
	case Collections:
		table = "collection"
	default:
		return "", errs.New(errs.Internal, "", "query: unknown target %d", int(o.Target))
	}
	if o.Alias == "" {
		return table, nil
	}
	ok := len(o.Alias) <= 64 && !strings.HasPrefix(strings.ToLower(o.Alias), "q_")
	for i, r := range o.Alias {
		letter := r == '_' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z'
		ok = ok && (letter || i > 0 && r >= '0' && r <= '9')
	}
	if !ok {
		return "", errs.New(errs.Internal, "", "query: alias %q is not a plain identifier outside q_*", o.Alias)
	}
	return o.Alias, nil
}

func (c *compiler) field(f Field) (spec, error) {
	if f.Arg != nil && f.Name != "annotation.count" {
		return spec{}, errorAt(f.Pos, "field %s takes no argument", f.Name)
	}
	if isAttrField(f.Name) {
		// The name is a bound JSON path; checkAttrKey kept out the one
		// character ("), that could end its quoting.
		if err := checkAttrKey(f.Pos, f.Key); err != nil {
			return spec{}, err
		}
		sp := spec{kind: fAttr, col: "q_a.attributes", colArgs: []any{`$."` + f.Key + `"`}}
		if !c.inBox {
			sp.from, sp.key = c.boxes()
		}
		return sp, nil
	}
	if c.inBox {
		return boxField(f)
	}
	if f.Name == "metadata" {
		if err := checkMetadataKey(f.Pos, f.Key); err != nil {
			return spec{}, err
		}
		path := `$."` + f.Key + `"`
		return spec{kind: fMeta, col: "json_extract(" + c.outer + ".metadata, ?)", colArgs: []any{path}, nullable: true,
			numbers: true}, nil
	}
	s, known := c.fileField(f), fileFields[:]
	if c.opt.Target == Collections {
		s, known = c.collectionField(f), collectionFields[:]
	}
	if s.col == "" && isEvalField(f.Name) {
		return spec{}, errorAt(f.Pos, "field %s does not apply to %s", f, c.opt.Target)
	}
	if s.col == "" {
		for _, name := range builtinFields {
			if name == f.Name {
				return spec{}, errorAt(f.Pos, "field %s does not apply to %s; known fields: %s",
					f.Name, c.opt.Target, knownFieldsText(known))
			}
		}
		return spec{}, errorAt(f.Pos, "unknown field %s; known fields: %s", quote(f.Name), knownFieldsText(known))
	}
	return s, nil
}

func (c *compiler) fileField(f Field) spec {
	o := c.outer + "."
	switch f.Name {
	case "name":
		return spec{col: o + "name"}
	case "uniqueName":
		return spec{col: o + "unique_name"}
	case "type":
		return spec{col: o + "type", typ: vEnum, enum: fileTypes[:]}
	case "fileSize":
		return spec{col: o + "size", typ: vSize, ranged: true}
	case "width", "height":
		return spec{col: o + f.Name, typ: vNumber, nullable: true}
	case "frameCount":
		return spec{col: o + "frame_count", typ: vNumber, nullable: true}
	case "frameRate":
		return spec{col: o + "frame_rate", typ: vNumber, nullable: true}
	case "createdAt":
		return spec{col: o + "created_at", typ: vDate, ranged: true}
	case "updatedAt":
		return spec{col: o + "updated_at", typ: vDate, ranged: true}
	case "collection":
		return spec{kind: fMember, col: "q_c.name", key: "q_cf.file_seq",
			from: "collection_file q_cf JOIN collection q_c ON q_c.seq = q_cf.collection_seq"}
	case "Tags":
		return spec{kind: fMember, col: "q_t.name", key: "q_t.file_seq", from: "file_tag q_t"}
	case "track.count": // a video's tracks (lake migration 011), of every operation
		rows := "FROM track q_tr WHERE q_tr.file_seq = " + o + "seq"
		return spec{col: "(SELECT count(*) " + rows + ")", typ: vNumber, counted: rows}
	case "track.label":
		return spec{kind: fMember, col: "q_tr.label", key: "q_tr.file_seq", from: "track q_tr"}
	case "track.length": // frames from a track's first keyframe to its last
		return spec{kind: fMember, col: "(q_tr.last_frame - q_tr.first_frame + 1)", typ: vNumber, key: "q_tr.file_seq", from: "track q_tr"}
	}
	if s := c.scoreField(f); s.col != "" {
		return s
	}
	return c.annotationField(f)
}

func (c *compiler) collectionField(f Field) spec {
	o := c.outer + "."
	members := "collection_file q_cf JOIN file q_f ON q_f.seq = q_cf.file_seq WHERE q_cf.collection_seq = " + o + "seq"
	switch f.Name {
	case "name":
		return spec{col: o + "name"}
	case "type":
		return spec{col: o + "type", typ: vEnum, enum: collectionTypes[:], alias: "_collection"}
	case "createdAt":
		return spec{col: o + "created_at", typ: vDate, ranged: true}
	case "updatedAt":
		return spec{col: o + "updated_at", typ: vDate, ranged: true}
	case "fileSize":
		return spec{col: "(SELECT coalesce(sum(q_f.size), 0) FROM " + members + ")", typ: vSize}
	case "frameCount":
		return spec{col: "(SELECT coalesce(sum(coalesce(q_f.frame_count, 1)), 0) FROM " + members + ")", typ: vNumber}
	case "fileCount":
		return spec{col: "(SELECT count(*) FROM collection_file q_cf WHERE q_cf.collection_seq = " + o + "seq)", typ: vNumber}
	case "Tags":
		return spec{kind: fMember, col: "q_t.name", key: "q_t.collection_seq", from: "collection_tag q_t"}
	}
	return c.annotationField(f)
}

// boxes says how boxes relate to the target row: from lists them (alias
// q_a) and key is the column equal to the target's seq. A collection's boxes
// are those of its members.
func (c *compiler) boxes() (from, key string) {
	if c.opt.Target == Collections {
		return "collection_file q_cf JOIN annotation q_a ON q_a.file_seq = q_cf.file_seq", "q_cf.collection_seq"
	}
	return "annotation q_a", "q_a.file_seq"
}

// boxField resolves a field inside annotation(...) to a column of box q_a.
func boxField(f Field) (spec, error) {
	switch f.Name {
	case "label":
		return spec{col: "q_a.label"}, nil
	case "source":
		return spec{col: "q_a.source", typ: vEnum, enum: sources[:]}, nil
	case "confidence":
		return spec{col: "q_a.confidence", typ: vNumber, nullable: true}, nil
	case "operation":
		return spec{col: "q_a.operation"}, nil
	case "frame":
		return spec{col: "q_a.frame", typ: vNumber}, nil
	case "type":
		return spec{col: typeCol, typ: vEnum, enum: shapeTypes[:]}, nil
	case "area":
		return spec{col: areaCol, typ: vNumber, nullable: true}, nil
	case "points":
		return spec{col: pointsCol, typ: vNumber, nullable: true}, nil
	case "keypoints.visible":
		return spec{col: visibleCol, typ: vNumber, nullable: true}, nil
	}
	return spec{}, errorAt(f.Pos, "unknown field %s inside annotation(...); known fields: %s, attributes.<name>",
		quote(f.Name), strings.Join(boxFields[:], ", "))
}

// annotationField compiles annotation.* fields, tests on any box.
func (c *compiler) annotationField(f Field) spec {
	from, key := c.boxes()
	member := func(col string, typ valueType, enum []string) spec {
		return spec{kind: fMember, col: col, typ: typ, enum: enum, from: from, key: key}
	}
	switch f.Name {
	case "annotation.label":
		return member("q_a.label", vText, nil)
	case "annotation.source":
		return member("q_a.source", vEnum, sources[:])
	case "annotation.confidence":
		return member("q_a.confidence", vNumber, nil)
	case "annotation.operation":
		return member("q_a.operation", vText, nil)
	case "annotation.type":
		return member(typeCol, vEnum, shapeTypes[:])
	case "annotation.area":
		return member(areaCol, vNumber, nil)
	case "annotation.points":
		return member(pointsCol, vNumber, nil)
	case "annotation.keypoints.visible":
		return member(visibleCol, vNumber, nil)
	case "class":
		return member(classCol, vText, nil)
	case "annotation.count":
		rows := "FROM " + from + " WHERE " + key + " = " + c.outer + ".seq"
		var args []any
		if f.Arg != nil {
			rows, args = rows+" AND q_a.label = ?", []any{f.Arg.Text}
		}
		return spec{col: "(SELECT count(*) " + rows + ")", colArgs: args, typ: vNumber, counted: rows}
	}
	return spec{}
}

// isAttrField reports whether name is annotation.attributes.<key> (or
// attributes.<key> inside annotation(...)), whose Key is the attribute.
func isAttrField(name string) bool {
	return name == attrPrefix[:len(attrPrefix)-1] || name == attrName(true)[:len(attrName(true))-1]
}
