package views

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"pushform/config"
	"pushform/executor"
	"pushform/state"
)

// TestEveryOutputNamesTheService: the human plan's first line, the
// markdown header, plan JSON's service object (exactly kind and url) and
// apply's human summary and JSON lines name the service; production
// against the embedded sandbox is warned about in each.
func TestEveryOutputNamesTheService(t *testing.T) {
	base := &state.Service{Kind: state.KindBaseURL, URL: "https://push.example.com/v1"}
	sb := &state.Service{Kind: state.KindSandbox, Sandbox: "sandbox.hcl"}
	for _, tt := range []struct {
		name     string
		svc      *state.Service
		env      string
		human    string
		md       string
		json     string
		warnings bool
	}{
		{"base URL", base, "production", "Service: https://push.example.com/v1, environment production\n",
			"**Service:** `https://push.example.com/v1`", `{"kind":"base_url","url":"https://push.example.com/v1"}`, false},
		{"sandbox", sb, "test", "Service: embedded sandbox (sandbox.hcl), environment test\n",
			"**Service:** embedded sandbox (`sandbox.hcl`)", `{"kind":"sandbox","url":null}`, false},
		{"production in the sandbox", sb, "production", "Service: embedded sandbox (sandbox.hcl), environment production\n",
			"**Service:** embedded sandbox (`sandbox.hcl`)", `{"kind":"sandbox","url":null}`, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			p := scenario(t)
			p.Service, p.Environment = tt.svc, tt.env
			const warning = `environment "production" runs against the embedded sandbox (sandbox.hcl): nothing reaches a device`
			var human, md, js bytes.Buffer
			if err := NewPlanHuman(&human, false).Plan(p); err != nil {
				t.Fatal(err)
			}
			if err := NewPlanMarkdown(&md, 0).Plan(p); err != nil {
				t.Fatal(err)
			}
			if err := NewPlanJSON(&js, false).Plan(p); err != nil {
				t.Fatal(err)
			}
			if !strings.HasPrefix(human.String(), tt.human+"\n") {
				t.Errorf("human plan starts %q, want %q", human.String()[:min(120, human.Len())], tt.human)
			}
			if !strings.Contains(md.String(), tt.md) {
				t.Errorf("markdown lacks %q:\n%s", tt.md, md.String()[:min(400, md.Len())])
			}
			var doc struct {
				Service  json.RawMessage `json:"service"`
				Warnings []string        `json:"warnings"`
			}
			if err := json.Unmarshal(js.Bytes(), &doc); err != nil {
				t.Fatal(err)
			}
			if string(doc.Service) != tt.json {
				t.Errorf("plan JSON service %s, want %s", doc.Service, tt.json)
			}
			var ah, aj bytes.Buffer
			res := &executor.Result{Counts: executor.Counts{Delivered: 5}, Requests: 1, Sent: 1}
			NewApplyHuman(&ah, &ah, false, false, time.Now).Finish(p, res, time.Second, &config.Config{})
			NewApplyJSON(&aj).WithService(tt.svc, tt.env).Finish(p, res, time.Second, &config.Config{})
			lines := strings.Split(strings.TrimSpace(aj.String()), "\n")
			if len(lines) != 3 || !strings.HasPrefix(lines[1], `{"type":"service","service":`+tt.json+`,"environment":"`+tt.env+`"`) ||
				!strings.HasSuffix(lines[2], `"service":`+tt.json+`}`) {
				t.Errorf("apply --json does not name the service in its service line and summary:\n%s", aj.String())
			}
			if !strings.Contains(ah.String(), "  Sent through "+tt.svc.String()+".\n") {
				t.Errorf("apply summary does not name the service:\n%s", ah.String())
			}
			var line struct{ Warnings []string }
			if err := json.Unmarshal([]byte(lines[1]), &line); err != nil || line.Warnings == nil {
				t.Fatalf("service line %s: %v", lines[1], err)
			}
			outputs := map[string]string{"human plan": human.String(), "markdown": md.String(), "plan JSON": strings.Join(doc.Warnings, "\n"),
				"apply summary": ah.String(), "apply JSON": strings.Join(line.Warnings, "\n")}
			for name, out := range outputs {
				if got := strings.Contains(out, warning); got != tt.warnings {
					t.Errorf("%s: warns %v, want %v:\n%s", name, got, tt.warnings, out)
				}
			}
		})
	}
}
