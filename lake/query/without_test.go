package query

import (
	"fmt"
	"testing"
)

func TestWithout(t *testing.T) {
	for _, c := range []struct{ q, field, rest, left string }{
		{"annotation.label IN (bus, car)", "annotation.label", "<nil>", "[annotation.label IN (bus, car)]"},
		{"annotation.label IN (bus, car) AND collection = voc", "annotation.label", "collection = voc", "[annotation.label IN (bus, car)]"},
		{"collection = voc AND width > 10 AND collection != coco", "collection", "width > 10", "[collection = voc collection != coco]"},
		{"annotation.label = dog AND Tags = x AND width > 1", "annotation.label", "Tags = x AND width > 1", "[annotation.label = dog]"},
		{"collection = voc OR width > 10", "collection", "collection = voc OR width > 10", "[]"},
		{"(collection = voc OR width > 10) AND Tags = a", "collection", "(collection = voc OR width > 10) AND Tags = a", "[]"},
		{"annotation(label = dog) AND annotation.count(dog) > 1", "annotation.label", "annotation(label = dog) AND annotation.count(dog) > 1", "[]"},
		{"metadata.collection = a", "collection", "metadata.collection = a", "[]"},
		{"", "collection", "<nil>", "[]"},
	} {
		e, err := Parse(c.q)
		if err != nil {
			t.Fatal(err)
		}
		rest, left := Without(e, c.field)
		r := "<nil>"
		if rest != nil {
			r = rest.String()
		}
		if l := fmt.Sprint(left); r != c.rest || (l != c.left && !(l == "[]" && c.left == "[]")) {
			t.Errorf("Without(%q, %s) = %q, %s; want %q, %s", c.q, c.field, r, l, c.rest, c.left)
		}
	}
}
