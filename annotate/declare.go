package annotate

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"unicode"

	"github.com/framelake/framelake/errs"
	"github.com/framelake/framelake/lake/shape"
)

// Attribute types a label may declare (AttributeSpec.Type).
const (
	AttrText    = "text"    // a JSON string
	AttrNumber  = "number"  // a finite JSON number, within min and max when given
	AttrBoolean = "boolean" // true or false
	AttrSelect  = "select"  // a JSON string, one of values
)

// Bounds of a declaration.
const (
	MaxLabelAttributes = 100
	MaxSelectValues    = 1000
)

// AttributeSpec is a typed attribute a label declares: its annotations'
// attributes then hold only declared names, each value of its type, and
// every required one.
type AttributeSpec struct {
	Name     string   `json:"name"`
	Type     string   `json:"type"`
	Min      *float64 `json:"min,omitempty"`    // number only
	Max      *float64 `json:"max,omitempty"`    // number only
	Values   []string `json:"values,omitempty"` // select only: the allowed values
	Required bool     `json:"required,omitempty"`
}

// declaration is what project_label.declaration stores: the label's
// fields past its name and description.
type declaration struct {
	Attributes []AttributeSpec `json:"attributes,omitempty"`
	*shape.Skeleton
}

func (l Label) declared() bool { return len(l.Attributes) > 0 || l.Skeleton != nil }

// declarationJSON is the column's value: NULL when the label declares nothing.
func (l Label) declarationJSON() (any, error) {
	if !l.declared() {
		return nil, nil
	}
	b, err := json.Marshal(declaration{Attributes: l.Attributes, Skeleton: l.Skeleton})
	return string(b), err
}

// setDeclaration reads a stored declaration into l.
func (l *Label) setDeclaration(col sql.NullString) error {
	if !col.Valid {
		return nil
	}
	var d declaration
	if err := json.Unmarshal([]byte(col.String), &d); err != nil {
		return fmt.Errorf("label %q: stored declaration: %w", l.Name, err)
	}
	l.Attributes, l.Skeleton = d.Attributes, d.Skeleton
	return nil
}

// checkDeclaration refuses a malformed declaration of a label; where names
// it in the message (labels[i], or the label of a PUT).
func checkDeclaration(where string, l Label) error {
	if l.Skeleton != nil {
		if err := l.Skeleton.Check(); err != nil {
			return errs.Invalid("labels", "%s: %v", where, err)
		}
	}
	if len(l.Attributes) > MaxLabelAttributes {
		return errs.Invalid("labels", "%s: a label declares at most %d attributes, got %d", where, MaxLabelAttributes, len(l.Attributes))
	}
	for i, a := range l.Attributes {
		if err := checkAttributeSpec(a, l.Attributes[:i]); err != nil {
			return errs.Invalid("labels", "%s: attributes[%d]: %v", where, i, err)
		}
	}
	return nil
}

func checkAttributeSpec(a AttributeSpec, before []AttributeSpec) error {
	switch {
	case strings.TrimSpace(a.Name) == "":
		return errors.New("name is empty")
	case a.Name != strings.TrimSpace(a.Name) || strings.IndexFunc(a.Name, unicode.IsControl) >= 0:
		return fmt.Errorf("name %q has surrounding spaces or control characters", a.Name)
	case len(a.Name) > 200:
		return errors.New("name is longer than 200 bytes")
	case slices.ContainsFunc(before, func(b AttributeSpec) bool { return b.Name == a.Name }):
		return fmt.Errorf("%q is declared twice", a.Name)
	}
	switch a.Type {
	case AttrText, AttrBoolean, AttrNumber, AttrSelect:
	default:
		return fmt.Errorf("%q: type is %q; use text, number, boolean or select", a.Name, a.Type)
	}
	if a.Type != AttrNumber && (a.Min != nil || a.Max != nil) {
		return fmt.Errorf("%q: min and max are for number attributes, not %s", a.Name, a.Type)
	}
	for _, v := range []*float64{a.Min, a.Max} {
		if v != nil && (math.IsNaN(*v) || math.IsInf(*v, 0)) {
			return fmt.Errorf("%q: min and max are finite numbers", a.Name)
		}
	}
	if a.Min != nil && a.Max != nil && *a.Min > *a.Max {
		return fmt.Errorf("%q: min %v is above max %v", a.Name, *a.Min, *a.Max)
	}
	if a.Type != AttrSelect {
		if len(a.Values) > 0 {
			return fmt.Errorf("%q: values are for select attributes, not %s", a.Name, a.Type)
		}
		return nil
	}
	if len(a.Values) == 0 || len(a.Values) > MaxSelectValues {
		return fmt.Errorf("%q: a select attribute lists 1 to %d values, got %d", a.Name, MaxSelectValues, len(a.Values))
	}
	for j, v := range a.Values {
		if v == "" || slices.Index(a.Values, v) != j {
			return fmt.Errorf("%q: values[%d] %q is empty or given twice", a.Name, j, v)
		}
	}
	return nil
}

// checkAttributes checks one annotation's attributes (a JSON object, or
// none) against its label's declared ones: only declared names, each of its
// type, every required one there. A label declaring none takes any object.
func checkAttributes(where string, l Label, raw json.RawMessage) error {
	var m map[string]any
	if a := bytes.TrimSpace(raw); len(a) > 0 && !bytes.Equal(a, []byte("null")) {
		if json.Unmarshal(a, &m) != nil {
			return errs.Invalid("labels", "%s: attributes must be a JSON object", where)
		}
	}
	if len(l.Attributes) == 0 {
		return nil
	}
	for name, v := range m {
		i := slices.IndexFunc(l.Attributes, func(a AttributeSpec) bool { return a.Name == name })
		if i < 0 {
			return errs.Invalid("labels", "%s: attribute %q is not declared on label %q (declared: %s)", where, name,
				l.Name, attrNames(l.Attributes))
		}
		if err := checkValue(l.Attributes[i], v); err != nil {
			return errs.Invalid("labels", "%s: attribute %q of label %q %v", where, name, l.Name, err)
		}
	}
	for _, a := range l.Attributes {
		if _, ok := m[a.Name]; a.Required && !ok {
			return errs.Invalid("labels", "%s: attribute %q of label %q is required", where, a.Name, l.Name)
		}
	}
	return nil
}

// checkValue says how v, a decoded JSON value, is not a value of a.
func checkValue(a AttributeSpec, v any) error {
	switch a.Type {
	case AttrText:
		if _, ok := v.(string); !ok {
			return fmt.Errorf("is text: give a string, got %s", jsonText(v))
		}
	case AttrBoolean:
		if _, ok := v.(bool); !ok {
			return fmt.Errorf("is boolean: give true or false, got %s", jsonText(v))
		}
	case AttrSelect:
		s, ok := v.(string)
		if !ok || !slices.Contains(a.Values, s) {
			return fmt.Errorf("is one of %s, got %s", strings.Join(a.Values, ", "), jsonText(v))
		}
	case AttrNumber:
		f, ok := v.(float64)
		switch {
		case !ok:
			return fmt.Errorf("is a number, got %s", jsonText(v))
		case a.Min != nil && f < *a.Min:
			return fmt.Errorf("is %v, below its min %v", f, *a.Min)
		case a.Max != nil && f > *a.Max:
			return fmt.Errorf("is %v, above its max %v", f, *a.Max)
		}
	}
	return nil
}

func jsonText(v any) string {
	b, _ := json.Marshal(v)
	if len(b) > 60 {
		return string(b[:60]) + "..."
	}
	return string(b)
}

func attrNames(as []AttributeSpec) string {
	names := make([]string, len(as))
	for i, a := range as {
		names[i] = a.Name
	}
	return strings.Join(names, ", ")
}

// checkDeclared checks an annotation against what its label declares: its
// attributes, and a keypoints shape's point names against the skeleton.
func checkDeclared(where string, l Label, b Box) error {
	if err := checkAttributes(where, l, b.Attributes); err != nil {
		return err
	}
	if l.Skeleton != nil && b.Type == shape.Keypoints {
		for _, k := range b.Keypoints {
			if !slices.Contains(l.Skeleton.Names, k.Name) {
				return errs.Invalid("labels", "%s: keypoint %q is not a point of label %q (%s)", where, k.Name, l.Name,
					strings.Join(l.Skeleton.Names, ", "))
			}
		}
	}
	return nil
}

// checkSkeletonsTx refuses a skeleton that another project declares
// otherwise for the same label name: a name's skeleton is one, so lookups
// by label name (Skeleton) are unambiguous. projectSeq's own labels are
// not compared (a project may change its own).
func checkSkeletonsTx(ctx context.Context, tx *sql.Tx, projectSeq int64, where func(i int) string, labels []Label) error {
	for i, l := range labels {
		if l.Skeleton == nil {
			continue
		}
		var other string
		var col sql.NullString
		err := tx.QueryRowContext(ctx, `SELECT p.id, l.declaration FROM project_label l JOIN project p
			ON p.seq = l.project_seq WHERE l.name = ? AND l.project_seq <> ?
			AND json_extract(l.declaration, '$.keypoints') IS NOT NULL ORDER BY p.seq LIMIT 1`,
			l.Name, projectSeq).Scan(&other, &col)
		if errors.Is(err, sql.ErrNoRows) {
			continue
		}
		if err != nil {
			return err
		}
		theirs := Label{Name: l.Name}
		if err := theirs.setDeclaration(col); err != nil {
			return err
		}
		mine, _ := json.Marshal(l.Skeleton)
		their, _ := json.Marshal(theirs.Skeleton)
		if !bytes.Equal(mine, their) {
			return errs.New(errs.AlreadyExists, "labels", "%s: label %q declares another skeleton in project %s "+
				"(keypoints %s); a label name has one skeleton in every project: declare the same, or name the "+
				"label otherwise", where(i), l.Name, other, strings.Join(theirs.Skeleton.Names, ", "))
		}
	}
	return nil
}

// Skeleton is the keypoint declaration of a label name, nil when no
// project declares one; it is a shape.SkeletonOf. Every project declaring
// one for a name declares the same (see checkSkeletonsTx).
func (s *Service) Skeleton(ctx context.Context, label string) (*shape.Skeleton, error) {
	var col sql.NullString
	err := s.db.R.QueryRowContext(ctx, `SELECT declaration FROM project_label WHERE name = ?
		AND json_extract(declaration, '$.keypoints') IS NOT NULL LIMIT 1`, label).Scan(&col)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	l := Label{Name: label}
	if err := l.setDeclaration(col); err != nil {
		return nil, err
	}
	return l.Skeleton, nil
}

var _ shape.SkeletonOf = (*Service)(nil).Skeleton

// LabelChange is what PutLabel sets on a project's label.
type LabelChange struct {
	// Description replaces the label's description when not nil.
	Description *string
	// Attributes and Skeleton replace what the label declared; empty and
	// nil declare none (free attributes; no keypoint names).
	Attributes []AttributeSpec
	Skeleton   *shape.Skeleton
}

// PutLabel sets what a project's label declares, adding the label (after
// the others) when the project lacks it. The declaration is checked as
// Create Project checks it; annotations already stored are not rechecked,
// their next write is. It returns the label as stored.
func (s *Service) PutLabel(ctx context.Context, projectID, name string, ch LabelChange) (Label, error) {
	p, err := s.Project(ctx, projectID)
	if err != nil {
		return Label{}, err
	}
	l := Label{Name: strings.TrimSpace(name), Attributes: ch.Attributes, Skeleton: ch.Skeleton}
	i := slices.IndexFunc(p.Labels, func(o Label) bool { return o.Name == l.Name })
	if i >= 0 {
		l.Description = p.Labels[i].Description
	}
	if ch.Description != nil {
		l.Description = *ch.Description
	}
	where := fmt.Sprintf("label %q", l.Name)
	if err := checkLabel(where, l, nil); err != nil {
		return Label{}, err
	}
	decl, err := l.declarationJSON()
	if err != nil {
		return Label{}, err
	}
	err = s.db.Tx(ctx, func(tx *sql.Tx) error {
		if err := checkSkeletonsTx(ctx, tx, p.seq, func(int) string { return where }, []Label{l}); err != nil {
			return err
		}
		_, err := tx.ExecContext(ctx, `INSERT INTO project_label (project_seq, name, description, position, declaration)
			SELECT ?, ?, ?, coalesce(max(position), -1) + 1, ? FROM project_label WHERE project_seq = ?
			ON CONFLICT DO UPDATE SET description = excluded.description, declaration = excluded.declaration`,
			p.seq, l.Name, l.Description, decl, p.seq)
		return err
	})
	if err != nil {
		return Label{}, err
	}
	return l, nil
}

// withoutRequired is p with no declared attribute required, for writes that
// cannot carry attribute values (accepted suggestions).
func (p Project) withoutRequired() Project {
	labels := slices.Clone(p.Labels)
	for i, l := range labels {
		if slices.ContainsFunc(l.Attributes, func(a AttributeSpec) bool { return a.Required }) {
			as := slices.Clone(l.Attributes)
			for j := range as {
				as[j].Required = false
			}
			labels[i].Attributes = as
		}
	}
	p.Labels = labels
	return p
}

// DeclareSkeletons declares, on the project's labels of skeletons' names,
// the keypoints an import's files give (COCO's categories): a label with
// none gets it, one declaring the same keeps it, and one declaring another
// is an AlreadyExists error naming it, as is another project's other
// skeleton for the name; then nothing is declared. A label the project
// lacks is skipped (imports add their labels first).
func (s *Service) DeclareSkeletons(ctx context.Context, projectID string, skeletons map[string]shape.Skeleton) error {
	if len(skeletons) == 0 {
		return nil
	}
	p, err := s.Project(ctx, projectID)
	if err != nil {
		return err
	}
	var set []Label
	for _, l := range p.Labels {
		sk, ok := skeletons[l.Name]
		if !ok {
			continue
		}
		if err := sk.Check(); err != nil {
			return errs.Invalid("labels", "label %q: %v", l.Name, err)
		}
		mine, _ := json.Marshal(sk)
		if l.Skeleton != nil {
			if theirs, _ := json.Marshal(l.Skeleton); !bytes.Equal(mine, theirs) {
				return errs.New(errs.AlreadyExists, "labels", "label %q of project %s declares keypoints %s; the "+
					"import's declare %s", l.Name, p.ID, strings.Join(l.Skeleton.Names, ", "), strings.Join(sk.Names, ", "))
			}
			continue
		}
		l.Skeleton = &sk
		set = append(set, l)
	}
	return s.db.Tx(ctx, func(tx *sql.Tx) error {
		where := func(i int) string { return fmt.Sprintf("label %q", set[i].Name) }
		if err := checkSkeletonsTx(ctx, tx, p.seq, where, set); err != nil {
			return err
		}
		for _, l := range set {
			decl, err := l.declarationJSON()
			if err != nil {
				return err
			}
			if _, err := tx.ExecContext(ctx, `UPDATE project_label SET declaration = ? WHERE project_seq = ? AND name = ?`,
				decl, p.seq, l.Name); err != nil {
				return err
			}
		}
		return nil
	})
}
