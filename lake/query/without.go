package query

// Without returns e with its top-level terms on field taken out, and those
// terms: what a disjunctive facet counts by (the values of field one may
// still add, the usual faceted search). A term is a comparison or IN list on
// field, or the NOT of one (Tags != x). Terms elsewhere (under OR, inside
// annotation(...), nested in parentheses with other fields) stay, since
// taking them out would change what the rest selects; when e is itself an
// OR nothing is taken out. field is a canonical name (annotation.label,
// Tags, collection); a rest of no terms is nil (every file).
func Without(e Expr, field string) (rest Expr, left []Expr) {
	on := func(x Expr) bool {
		if n, ok := x.(Not); ok {
			x = n.X
		}
		var f Field
		switch x := x.(type) {
		case Compare:
			f = x.Field
		case In:
			f = x.Field
		default:
			return false
		}
		return f.Name == field && f.Key == "" && f.Arg == nil
	}
	and, ok := e.(And)
	if !ok {
		if e != nil && on(e) {
			return nil, []Expr{e}
		}
		return e, nil
	}
	var keep []Expr
	for _, x := range and.X {
		if on(x) {
			left = append(left, x)
		} else {
			keep = append(keep, x)
		}
	}
	switch len(keep) {
	case 0:
		return nil, left
	case 1:
		return keep[0], left
	}
	return And{X: keep}, left
}
