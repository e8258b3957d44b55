package plandoc

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/zclconf/go-cty/cty"
	ctyjson "github.com/zclconf/go-cty/cty/json"

	"pushform/internal/testutil"
	"pushform/message"
	"pushform/planner"
	"pushform/state"
)

// fullPlan is a plan with every optional part of a change set: a prior
// content, windows, a move, pacing, earlier deliveries, local time, a
// rollout, a variant, a rename and a review.
func fullPlan() *planner.Plan {
	at := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	later := at.Add(time.Hour)
	badge := 3
	return &planner.Plan{
		FormatVersion: planner.FormatVersion, CreatedAt: at, Environment: "production",
		StateLineage: "lin-1", StateSerial: 7,
		Changes: []*planner.Change{
			{
				Address: "badge.reset", Action: planner.ActionUpdate, Kind: message.KindBadge, TargetKind: message.TargetDevices,
				Content: message.Content{BadgeCount: &badge}, Targets: planner.TargetCounts{Total: 1, Replace: 1, Send: 1},
				Send: []string{"d1"},
			},
			{
				Address: "campaign.spring.notification.a.variant.b", Action: planner.ActionReplace, Kind: message.KindNotification,
				TargetKind: message.TargetUsers, Fingerprint: "fp",
				Content:   message.Content{Title: "Spring", Body: "20% off", OpenToURL: "https://shop.example.com", Tag: "spring"},
				Prior:     &message.Content{Title: "Sprng", Body: "20% off", Tag: "spring"},
				SendAfter: &at, SendBefore: &later, MovedFrom: "notification.a", Paces: []string{"campaign.spring"},
				Targets: planner.TargetCounts{Total: 4, Replace: 2, AlreadyDelivered: 1, Repeat: 1, Staged: 1, Send: 2},
				Send:    []string{"u1", "u2"},
				Earlier: []planner.EarlierDelivery{{Address: "notification.old", RequestID: "req-1", Time: at, Outcome: state.Delivered, Forgotten: true}},
				Local: &planner.Local{DeliverAtLocal: "09:00", QuietHours: "21:00-08:00", Waves: []planner.Wave{{At: at, Send: 2, Waiting: 1}},
					NextWave: &later, DefaultZone: 1, Zones: 2},
				Rollout: &planner.RolloutStatus{State: planner.RolloutSending, Stages: []planner.StageStatus{{Percent: "50%", Size: 2, Send: 2}, {Percent: "100%", Size: 2}},
					Current: -1, Sends: 0, Wait: planner.Duration(30 * time.Minute), MaxFailureRate: 0.02, Salt: "s"},
				Variant:  &planner.VariantInfo{Of: "campaign.spring.notification.a", Name: "b", Weight: 50, Share: 0.5},
				Warnings: []string{"careful"},
			},
			{Address: "notification.gone", Action: planner.ActionForget, Kind: message.KindNotification, TargetKind: message.TargetTopics,
				Content: message.Content{Title: "t", Body: "b"}, Targets: planner.TargetCounts{Forget: 2}},
		},
		Batches:        []planner.Batch{{Parts: []planner.Part{{Change: 0, From: 0, To: 1}, {Change: 1, From: 0, To: 2}}}},
		Renames:        []planner.Rename{{From: "notification.x", To: "notification.y", Targets: 3, Same: true}},
		Pacing:         []planner.Pace{{Group: "campaign.spring", Count: 600, Per: time.Minute, Targets: 2, Requests: 1, Duration: time.Second}},
		AwaitingReview: []planner.Review{{Address: "notification.z", Action: planner.ActionCreate, Why: "new address"}},
		Summary:        planner.Summary{Replace: 1, Update: 1, Forget: 1, Targets: 3, Requests: 1, Reach: &planner.Reach{Users: 2, Devices: 3, NewUsers: 1}},
	}
}

// TestValueIsTheJSON: the cty object a condition reads is the JSON
// document plan --json prints, decoded with the fixed type.
func TestValueIsTheJSON(t *testing.T) {
	for name, p := range map[string]*planner.Plan{"full": fullPlan(), "empty": {FormatVersion: "1", Environment: "test"}} {
		t.Run(name, func(t *testing.T) {
			d := New(p)
			d.Policies = []Policy{{Name: "p", Enforcement: "deny", Result: Overridden, File: "main.hcl", Line: 3, Checked: 1,
				Failures: []Failure{{Message: "no"}}, Override: &Override{Policy: "p", Reason: "ok"}}}
			doc, err := json.Marshal(d)
			if err != nil {
				t.Fatal(err)
			}
			testutil.ValidatePlanJSON(t, doc)
			fromJSON, err := ctyjson.Unmarshal(doc, PlanType)
			if err != nil {
				t.Fatalf("decoding the JSON with PlanType: %v", err)
			}
			if v := d.Value(); !v.RawEquals(fromJSON) {
				t.Errorf("Value differs from the JSON:\n%#v\n%#v", v, fromJSON)
			}
			for i := range d.Changes {
				if c := d.Changes[i].Value(); !c.RawEquals(fromJSON.GetAttr("changes").Index(ctyNum(i))) {
					t.Errorf("change %d differs from the JSON", i)
				}
			}
		})
	}
}

// TestEveryKeyPresent: a plan with nothing optional still has every key,
// null or empty.
func TestEveryKeyPresent(t *testing.T) {
	p := &planner.Plan{FormatVersion: "1", Environment: "test", Changes: []*planner.Change{{Address: "notification.a", Action: planner.ActionNoOp}}}
	doc, err := json.Marshal(New(p))
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(doc, &m); err != nil {
		t.Fatal(err)
	}
	c := m["changes"].([]any)[0].(map[string]any)
	for _, k := range []string{"rollout", "local", "variant", "prior", "send_after", "moved_from"} {
		if v, ok := c[k]; !ok || v != nil {
			t.Errorf("change.%s = %v (present %v), want null", k, v, ok)
		}
	}
	for _, k := range []string{"paces", "earlier", "warnings"} {
		if v, ok := c[k].([]any); !ok || len(v) != 0 {
			t.Errorf("change.%s = %v, want []", k, c[k])
		}
	}
	content := c["content"].(map[string]any)
	if v, ok := content["open_to_url"]; !ok || v != nil {
		t.Errorf("content.open_to_url = %v (present %v), want null", v, ok)
	}
	if v, ok := m["state_lineage"]; !ok || v != nil {
		t.Errorf("state_lineage = %v (present %v), want null", v, ok)
	}
}

// TestSendsNow: exactly the actions the issue names send.
func TestSendsNow(t *testing.T) {
	var got []string
	for _, a := range planner.Actions() {
		if planner.SendsNow(a) {
			got = append(got, string(a))
		}
	}
	sort.Strings(got)
	want := []string{"create", "repeat", "replace", "resend", "retry", "send-new", "update"}
	if !slices.Equal(got, want) {
		t.Errorf("sending actions %v, want %v", got, want)
	}
}

// TestSchemaDescribesEveryKey walks the Go types of the document and the
// schema together: every struct's keys are exactly the properties of its
// schema object, all required, none additional.
func TestSchemaDescribesEveryKey(t *testing.T) {
	schema := testutil.ReadPlanSchema(t)
	defs := schema["$defs"].(map[string]any)
	resolve := func(s map[string]any) map[string]any {
		for {
			if ref, ok := s["$ref"].(string); ok {
				s = defs[strings.TrimPrefix(ref, "#/$defs/")].(map[string]any)
				continue
			}
			if alts, ok := s["anyOf"].([]any); ok {
				s = alts[0].(map[string]any)
				continue
			}
			if s["type"] == "array" || slices.Contains(asList(s["type"]), "array") {
				s = s["items"].(map[string]any)
				continue
			}
			return s
		}
	}
	var walk func(path string, typ reflect.Type, s map[string]any)
	walk = func(path string, typ reflect.Type, s map[string]any) {
		for typ.Kind() == reflect.Pointer || typ.Kind() == reflect.Slice {
			typ = typ.Elem()
		}
		if typ.Kind() != reflect.Struct || typ == timeType {
			return
		}
		s = resolve(s)
		props, _ := s["properties"].(map[string]any)
		if s["additionalProperties"] != false {
			t.Errorf("%s: the schema allows additional properties", path)
		}
		required := asList(s["required"])
		var names []string
		for _, f := range fields(typ) {
			names = append(names, f.name)
			ps, ok := props[f.name].(map[string]any)
			if !ok {
				t.Errorf("%s.%s: not in the schema", path, f.name)
				continue
			}
			if !slices.Contains(required, f.name) {
				t.Errorf("%s.%s: not required by the schema", path, f.name)
			}
			if d, _ := ps["description"].(string); d == "" && ps["$ref"] == nil && ps["items"] == nil {
				t.Errorf("%s.%s: no description in the schema", path, f.name)
			}
			walk(path+"."+f.name, typ.Field(f.index).Type, ps)
		}
		for name := range props {
			if !slices.Contains(names, name) {
				t.Errorf("%s.%s: in the schema, not in the document", path, name)
			}
		}
	}
	walk("plan", reflect.TypeFor[Document](), schema)

	// The schema's actions are the planner's.
	change := defs["change"].(map[string]any)["properties"].(map[string]any)
	enum := asList(change["action"].(map[string]any)["enum"])
	for _, a := range planner.Actions() {
		if !slices.Contains(enum, string(a)) {
			t.Errorf("action %q is not in the schema's enum", a)
		}
	}
}

func asList(v any) []string {
	var out []string
	switch v := v.(type) {
	case string:
		out = append(out, v)
	case []any:
		for _, e := range v {
			if s, ok := e.(string); ok {
				out = append(out, s)
			}
		}
	}
	return out
}

func ctyNum(i int) cty.Value { return cty.NumberIntVal(int64(i)) }

// TestReferencePage: docs/plan-json.md has a section per object of the
// schema (plan and each of $defs), whose table names every key.
func TestReferencePage(t *testing.T) {
	page, err := os.ReadFile(filepath.Join(filepath.Dir(testutil.PlanSchemaPath()), "plan-json.md"))
	if err != nil {
		t.Fatal(err)
	}
	sections := map[string]string{}
	for _, part := range strings.Split("\n"+string(page), "\n## ")[1:] {
		name, body, _ := strings.Cut(part, "\n")
		sections[name] = body
	}
	schema := testutil.ReadPlanSchema(t)
	objects := map[string]map[string]any{"plan": schema}
	for name, d := range schema["$defs"].(map[string]any) {
		objects[name] = d.(map[string]any)
	}
	for name, obj := range objects {
		body, ok := sections[name]
		if !ok {
			t.Errorf("docs/plan-json.md has no section %q", "## "+name)
			continue
		}
		for key := range obj["properties"].(map[string]any) {
			if !strings.Contains(body, "| `"+key+"` |") {
				t.Errorf("docs/plan-json.md, ## %s: no row for %s", name, key)
			}
		}
	}
}
