package statefile

import (
	"bytes"
	"maps"
	"testing"
)

// TestAcceptedShapesFormat: format 6 keeps the accepted shapes; a format-5
// snapshot has none, which the planner reads as a state from before them.
func TestAcceptedShapesFormat(t *testing.T) {
	s := fidelityState()
	s.Accepted = map[string]string{"a": "shape-1", `notification.o["k"]`: "shape-2"}
	for _, tc := range []struct {
		version int
		want    map[string]string
	}{{6, s.Accepted}, {5, nil}} {
		var buf bytes.Buffer
		if err := encode(&buf, s, tc.version); err != nil {
			t.Fatal(err)
		}
		for _, compact := range []bool{false, true} {
			back, err := decode(bytes.NewReader(buf.Bytes()), compact)
			if err != nil {
				t.Fatalf("format %d: %v", tc.version, err)
			}
			if !maps.Equal(back.Accepted, tc.want) || (tc.want == nil) != (back.Accepted == nil) {
				t.Errorf("format %d (compact %v): accepted %v, want %v", tc.version, compact, back.Accepted, tc.want)
			}
		}
	}
}
