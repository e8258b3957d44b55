package views

import (
	"os"
	"path/filepath"
	"testing"

	"pushform/internal/testutil"
)

// TestPlanGoldensMatchSchema validates the plan --json goldens (guards,
// local time, rollouts, variants, ...) against docs/plan-json.schema.json.
func TestPlanGoldensMatchSchema(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "plan*.json"))
	if err != nil || len(files) < 4 {
		t.Fatalf("plan goldens: %v %v", files, err)
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			doc, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			testutil.ValidatePlanJSON(t, doc)
		})
	}
}
