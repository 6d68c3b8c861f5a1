package format

import (
	"reflect"
	"testing"
)

// TestYAMLNames reads names: as Ultralytics and Roboflow write data.yaml.
func TestYAMLNames(t *testing.T) {
	want := []string{"person", "traffic light", "car"}
	for _, doc := range []string{
		"path: ../datasets\ntrain: images/train\nnames: ['person', 'traffic light', car]\nnc: 3\n",
		"nc: 3\nnames: [person,\n  traffic light, \"car\"]\n",
		"train: images/train\nnames:\n  0: person\n  1: traffic light # lights\n  2: car\ndownload: x\n",
		"names:\n- person\n- traffic light\n- car\nnc: 3\n",
	} {
		if got := yamlNames(doc); !reflect.DeepEqual(got, want) {
			t.Errorf("yamlNames(%q) = %q, want %q", doc, got, want)
		}
	}
}
