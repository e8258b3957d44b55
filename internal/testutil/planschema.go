package testutil

import (
	"bytes"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// PlanSchemaPath is docs/plan-json.schema.json, the JSON Schema of plan
// --json, found from this file's place in the repository.
func PlanSchemaPath() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..", "docs", "plan-json.schema.json")
}

var planSchema = sync.OnceValues(func() (*jsonschema.Schema, error) {
	c := jsonschema.NewCompiler()
	c.AssertFormat()
	return c.Compile(PlanSchemaPath())
})

// ValidatePlanJSON fails t unless doc (one plan --json document) is valid
// against docs/plan-json.schema.json.
func ValidatePlanJSON(t testing.TB, doc []byte) {
	t.Helper()
	s, err := planSchema()
	if err != nil {
		t.Fatalf("compiling %s: %v", PlanSchemaPath(), err)
	}
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(doc))
	if err != nil {
		t.Fatalf("plan --json is not JSON: %v\n%s", err, doc)
	}
	if err := s.Validate(v); err != nil {
		t.Errorf("plan --json does not match %s:\n%v", filepath.Base(PlanSchemaPath()), err)
	}
}

// ReadPlanSchema returns the schema document, parsed, for tests that walk
// it.
func ReadPlanSchema(t testing.TB) map[string]any {
	t.Helper()
	f, err := os.Open(PlanSchemaPath())
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	v, err := jsonschema.UnmarshalJSON(f)
	if err != nil {
		t.Fatal(err)
	}
	return v.(map[string]any)
}
