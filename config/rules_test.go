package config

import (
	"strings"
	"testing"

	"github.com/hashicorp/hcl/v2"

	"pushform/internal/testutil"
)

const svc = testutil.ServiceTest

// load writes files into a temporary directory and loads it.
func load(t *testing.T, files map[string]string, opts Options) (*Config, hcl.Diagnostics) {
	t.Helper()
	return NewLoader().Load(testutil.WriteFiles(t, files), opts)
}

func mustLoad(t *testing.T, files map[string]string, opts Options) *Config {
	t.Helper()
	cfg, diags := load(t, files, opts)
	if diags.HasErrors() {
		t.Fatalf("unexpected errors: %s", diags.Error())
	}
	return cfg
}

func describe(diags hcl.Diagnostics) string {
	var b strings.Builder
	for _, d := range diags {
		sev := "error"
		if d.Severity == hcl.DiagWarning {
			sev = "warning"
		}
		pos := "-"
		if d.Subject != nil {
			pos = rangePos(*d.Subject)
		}
		b.WriteString("\n  " + sev + " " + pos + " " + d.Summary + ": " + d.Detail)
	}
	return b.String()
}

// TestRules checks each validation rule: the diagnostic's severity, summary,
// file and line.
func TestRules(t *testing.T) {
	type want struct {
		severity hcl.DiagnosticSeverity
		summary  string
		file     string // "" for no source location
		line     int
	}
	errAt := func(summary, file string, line int) want { return want{hcl.DiagError, summary, file, line} }
	warnAt := func(summary, file string, line int) want { return want{hcl.DiagWarning, summary, file, line} }
	msg := func(body string) map[string]string {
		return map[string]string{"main.hcl": svc, "msg.hcl": body}
	}
	tests := []struct {
		name  string
		files map[string]string
		opts  Options
		want  want
	}{
		// service
		{"no service block", map[string]string{"a.hcl": "topic \"t\" {}\n"}, Options{}, errAt("Missing service block", "a.hcl", 1)},
		{"duplicate service", map[string]string{"a.hcl": svc, "b.hcl": "\n" + svc}, Options{}, errAt("Duplicate service block", "b.hcl", 2)},
		{"unknown service attribute", map[string]string{"main.hcl": "service {\n  environment = \"test\"\n  colour = 1\n}\n"}, Options{}, errAt("Unsupported argument", "main.hcl", 3)},
		{"unknown block", map[string]string{"main.hcl": svc + "resource \"x\" {}\n"}, Options{}, errAt("Unsupported block type", "main.hcl", 4)},
		{"missing environment", map[string]string{"main.hcl": "\nservice {}\n"}, Options{}, errAt("Missing environment", "main.hcl", 2)},
		{"invalid environment", map[string]string{"main.hcl": "service {\n  environment = \"staging\"\n}\n"}, Options{}, errAt("Invalid environment", "main.hcl", 2)},
		{"environment from variable", map[string]string{"main.hcl": "variable \"env\" { default = \"prod\" }\nservice {\n  environment = var.env\n}\n"}, Options{}, errAt("Invalid environment", "main.hcl", 3)},
		{"api_key attribute", map[string]string{"main.hcl": "service {\n  environment = \"test\"\n  api_key = \"abc\"\n}\n"}, Options{}, errAt("API key in configuration", "main.hcl", 3)},
		{"api_key_env holds a key", map[string]string{"main.hcl": "service {\n  environment = \"test\"\n  api_key_env = \"sk_live_4eC39HqLyjWDarjtT1zdp7dc\"\n}\n"}, Options{}, errAt("API key in configuration", "main.hcl", 3)},
		{"api_key_env lower-case key", map[string]string{"main.hcl": "service {\n  environment = \"test\"\n  api_key_env = \"sk_live_abcdefghijklmnopqrstuvwxyz123456\"\n}\n"}, Options{}, errAt("API key in configuration", "main.hcl", 3)},
		{"api_key_env hex key", map[string]string{"main.hcl": "service {\n  environment = \"test\"\n  api_key_env = \"3f9a0c1d2e4b5a6978877665544332211\"\n}\n"}, Options{}, errAt("API key in configuration", "main.hcl", 3)},
		{"api_key_env not a name", map[string]string{"main.hcl": "service {\n  environment = \"test\"\n  api_key_env = \"MY-KEY\"\n}\n"}, Options{}, errAt("Invalid api_key_env", "main.hcl", 3)},
		{"base_url relative", map[string]string{"main.hcl": "service {\n  environment = \"test\"\n  base_url = \"push.example.com\"\n}\n"}, Options{}, errAt("Invalid base_url", "main.hcl", 3)},
		{"base_url plain http", map[string]string{"main.hcl": "service {\n  environment = \"test\"\n  base_url = \"http://push.example.com/v1\"\n}\n"}, Options{}, errAt("Invalid base_url", "main.hcl", 3)},
		{"base_url credentials", map[string]string{"main.hcl": "service {\n  environment = \"test\"\n  base_url = \"https://u:p@push.example.com/v1\"\n}\n"}, Options{}, errAt("Invalid base_url", "main.hcl", 3)},
		{"sandbox seed missing", map[string]string{"main.hcl": "service {\n  environment = \"test\"\n  sandbox = \"seed.hcl\"\n}\n"}, Options{}, errAt("Invalid sandbox seed file", "main.hcl", 3)},
		{"sandbox outside dir", map[string]string{"main.hcl": "service {\n  environment = \"test\"\n  sandbox = \"../seed.hcl\"\n}\n"}, Options{}, errAt("Invalid sandbox seed file", "main.hcl", 3)},
		{"sandbox and base_url", map[string]string{"main.hcl": "service {\n  environment = \"test\"\n  base_url = \"https://x.example\"\n  sandbox = \"s.hcl\"\n}\n", "s.hcl": ""}, Options{}, errAt("Conflicting service settings", "main.hcl", 4)},

		// targets
		{"missing target", msg("\nnotification \"n\" {\n  title = \"t\"\n  body = \"b\"\n}\n"), Options{}, errAt("Missing target", "msg.hcl", 2)},
		{"conflicting targets", msg("notification \"n\" {\n  user_ids = [\"u\"]\n  topics = [\"x\"]\n  title = \"t\"\n  body = \"b\"\n}\n"), Options{}, errAt("Conflicting targets", "msg.hcl", 3)},
		{"empty target list", msg("notification \"n\" {\n  user_ids = []\n  title = \"t\"\n  body = \"b\"\n}\n"), Options{}, errAt("Empty target list", "msg.hcl", 2)},
		{"empty id", msg("notification \"n\" {\n  user_ids = [\"a\",\n    \"\"]\n  title = \"t\"\n  body = \"b\"\n}\n"), Options{}, errAt("Empty id", "msg.hcl", 3)},
		{"null id", msg("notification \"n\" {\n  user_ids = [null]\n  title = \"t\"\n  body = \"b\"\n}\n"), Options{}, errAt("Invalid id", "msg.hcl", 2)},
		{"non-string id", msg("notification \"n\" {\n  user_ids = [[\"a\"]]\n  title = \"t\"\n  body = \"b\"\n}\n"), Options{}, errAt("Invalid id", "msg.hcl", 2)},
		{"duplicate id", msg("notification \"n\" {\n  device_ids = [\"a\", \"a\"]\n  title = \"t\"\n  body = \"b\"\n}\n"), Options{}, warnAt("Duplicate id", "msg.hcl", 2)},
		{"ids not a list", msg("notification \"n\" {\n  user_ids = \"alice\"\n  title = \"t\"\n  body = \"b\"\n}\n"), Options{}, errAt("Invalid user_ids", "msg.hcl", 2)},
		{"undeclared topic", msg("notification \"n\" {\n  topics = [\"dealz\"]\n  title = \"t\"\n  body = \"b\"\n}\n"), Options{}, warnAt("Undeclared topic", "msg.hcl", 2)},
		{"undeclared data source", msg("notification \"n\" {\n  user_ids = data.recipients.all.user_ids\n  title = \"t\"\n  body = \"b\"\n}\n"), Options{}, errAt("Reference to undeclared data source", "msg.hcl", 2)},

		// content
		{"missing body", msg("notification \"n\" {\n  user_ids = [\"u\"]\n  title = \"t\"\n}\n"), Options{}, errAt("Missing body", "msg.hcl", 3)},
		{"missing title", msg("notification \"n\" {\n  user_ids = [\"u\"]\n  body = \"b\"\n}\n"), Options{}, errAt("Missing title", "msg.hcl", 3)},
		{"missing content", msg("notification \"n\" {\n  user_ids = [\"u\"]\n}\n"), Options{}, errAt("Missing content", "msg.hcl", 1)},
		{"empty title", msg("notification \"n\" {\n  user_ids = [\"u\"]\n  title = \" \"\n  body = \"b\"\n}\n"), Options{}, errAt("Empty title", "msg.hcl", 3)},
		{"title not a string", msg("notification \"n\" {\n  user_ids = [\"u\"]\n  title = [\"t\"]\n  body = \"b\"\n}\n"), Options{}, errAt("Incorrect attribute value type", "msg.hcl", 3)},
		{"badge without count", msg("badge \"b\" {\n  device_ids = [\"d\"]\n}\n"), Options{}, errAt("Missing badge_count", "msg.hcl", 1)},
		{"badge with title", msg("badge \"b\" {\n  device_ids = [\"d\"]\n  badge_count = 1\n  title = \"t\"\n}\n"), Options{}, errAt("Unsupported argument in badge block", "msg.hcl", 4)},
		{"badge with tag", msg("badge \"b\" {\n  device_ids = [\"d\"]\n  badge_count = 1\n  tag = \"t\"\n}\n"), Options{}, errAt("Unsupported argument in badge block", "msg.hcl", 4)},
		{"negative badge_count", msg("badge \"b\" {\n  device_ids = [\"d\"]\n  badge_count = -1\n}\n"), Options{}, errAt("Invalid badge_count", "msg.hcl", 3)},
		{"fractional badge_count", msg("badge \"b\" {\n  device_ids = [\"d\"]\n  badge_count = 1.5\n}\n"), Options{}, errAt("Invalid badge_count", "msg.hcl", 3)},
		{"huge badge_count", msg("badge \"b\" {\n  device_ids = [\"d\"]\n  badge_count = 1e40\n}\n"), Options{}, errAt("Invalid badge_count", "msg.hcl", 3)},
		{"relative open_to_url", msg("notification \"n\" {\n  user_ids = [\"u\"]\n  title = \"t\"\n  body = \"b\"\n  open_to_url = \"/sale\"\n}\n"), Options{}, errAt("Invalid open_to_url", "msg.hcl", 5)},
		{"ftp open_to_url", msg("notification \"n\" {\n  user_ids = [\"u\"]\n  title = \"t\"\n  body = \"b\"\n  open_to_url = \"ftp://x.example/a\"\n}\n"), Options{}, errAt("Invalid open_to_url", "msg.hcl", 5)},
		{"empty tag", msg("notification \"n\" {\n  user_ids = [\"u\"]\n  title = \"t\"\n  body = \"b\"\n  tag = \"\"\n}\n"), Options{}, errAt("Empty tag", "msg.hcl", 5)},
		{"bad send_after", msg("notification \"n\" {\n  user_ids = [\"u\"]\n  title = \"t\"\n  body = \"b\"\n  send_after = \"tomorrow\"\n}\n"), Options{}, errAt("Invalid send_after", "msg.hcl", 5)},
		{"unknown message attribute", msg("notification \"n\" {\n  user_ids = [\"u\"]\n  title = \"t\"\n  body = \"b\"\n  sound = \"ping\"\n}\n"), Options{}, errAt("Unsupported argument", "msg.hcl", 5)},

		// frequency caps, rates, windows, audience guards
		{"frequency_cap without per", msg("\nfrequency_cap {\n  max = 3\n}\n"), Options{}, errAt("Missing required argument", "msg.hcl", 2)},
		{"frequency_cap max zero", msg("frequency_cap {\n  max = 0\n  per = \"24h\"\n}\n"), Options{}, errAt("Invalid max", "msg.hcl", 2)},
		{"frequency_cap max fraction", msg("frequency_cap {\n  max = 1.5\n  per = \"24h\"\n}\n"), Options{}, errAt("Invalid max", "msg.hcl", 2)},
		{"frequency_cap bad per", msg("frequency_cap {\n  max = 3\n  per = \"daily\"\n}\n"), Options{}, errAt("Invalid per", "msg.hcl", 3)},
		{"frequency_cap zero per", msg("frequency_cap {\n  max = 3\n  per = \"0s\"\n}\n"), Options{}, errAt("Invalid per", "msg.hcl", 3)},
		{"frequency_cap negative per", msg("frequency_cap {\n  max = 3\n  per = \"-24h\"\n}\n"), Options{}, errAt("Invalid per", "msg.hcl", 3)},
		{"frequency_cap per from data", msg("data \"recipients\" \"r\" {}\nfrequency_cap {\n  max = 3\n  per = data.recipients.r.user_ids[0]\n}\n"), Options{}, errAt("Value depends on a data source", "msg.hcl", 4)},
		{"two frequency_caps", msg("frequency_cap {\n  max = 3\n  per = \"24h\"\n}\nfrequency_cap {\n  max = 1\n  per = \"1h\"\n}\n"), Options{}, errAt("Duplicate frequency_cap block", "msg.hcl", 5)},
		{"two frequency_caps in campaign", msg("campaign \"c\" {\n  frequency_cap {\n    max = 3\n    per = \"24h\"\n  }\n  frequency_cap {\n    max = 1\n    per = \"1h\"\n  }\n}\n"), Options{}, errAt("Duplicate frequency_cap block", "msg.hcl", 6)},
		{"campaign frequency_cap bad max", msg("campaign \"c\" {\n  frequency_cap {\n    max = -1\n    per = \"24h\"\n  }\n}\n"), Options{}, errAt("Invalid max", "msg.hcl", 3)},
		{"campaign bad send_rate", msg("campaign \"c\" {\n  send_rate = \"fast\"\n}\n"), Options{}, errAt("Invalid send_rate", "msg.hcl", 2)},
		{"campaign zero send_rate", msg("campaign \"c\" {\n  send_rate = \"0/minute\"\n}\n"), Options{}, errAt("Invalid send_rate", "msg.hcl", 2)},
		{"campaign send_rate per day", msg("campaign \"c\" {\n  send_rate = \"100/day\"\n}\n"), Options{}, errAt("Invalid send_rate", "msg.hcl", 2)},
		{"campaign zero max_targets", msg("campaign \"c\" {\n  max_targets = 0\n}\n"), Options{}, errAt("Invalid max_targets", "msg.hcl", 2)},
		{"campaign max_targets string", msg("campaign \"c\" {\n  max_targets = \"many\"\n}\n"), Options{}, errAt("Incorrect attribute value type", "msg.hcl", 2)},
		{"message bad send_rate", msg("notification \"n\" {\n  user_ids = [\"u\"]\n  title = \"t\"\n  body = \"b\"\n  send_rate = \"-3/second\"\n}\n"), Options{}, errAt("Invalid send_rate", "msg.hcl", 5)},
		{"message negative max_targets", msg("notification \"n\" {\n  user_ids = [\"u\"]\n  title = \"t\"\n  body = \"b\"\n  max_targets = -1\n}\n"), Options{}, errAt("Invalid max_targets", "msg.hcl", 5)},
		{"max_targets uses each", msg("notification \"n\" {\n  for_each = { a = 1 }\n  user_ids = [\"u\"]\n  badge_count = 1\n  max_targets = each.value\n}\n"), Options{}, errAt("Invalid reference to each", "msg.hcl", 5)},
		{"enabled not a bool", msg("notification \"n\" {\n  user_ids = [\"u\"]\n  title = \"t\"\n  body = \"b\"\n  enabled = \"paused\"\n}\n"), Options{}, errAt("Incorrect attribute value type", "msg.hcl", 5)},
		{"enabled a number", msg("badge \"b\" {\n  device_ids = [\"d\"]\n  badge_count = 1\n  enabled = 0\n}\n"), Options{}, errAt("Incorrect attribute value type", "msg.hcl", 4)},
		{"campaign enabled not a bool", msg("campaign \"c\" {\n  enabled = [true]\n}\n"), Options{}, errAt("Incorrect attribute value type", "msg.hcl", 2)},
		{"campaign enabled from data", msg("data \"recipients\" \"r\" {}\ncampaign \"c\" {\n  enabled = length(data.recipients.r.user_ids) > 0\n}\n"), Options{}, errAt("Value depends on a data source", "msg.hcl", 3)},
		{"bad repeat_after", msg("notification \"n\" {\n  user_ids = [\"u\"]\n  title = \"t\"\n  body = \"b\"\n  repeat_after = \"weekly\"\n}\n"), Options{}, errAt("Invalid repeat_after", "msg.hcl", 5)},
		{"zero repeat_after", msg("badge \"b\" {\n  device_ids = [\"d\"]\n  badge_count = 1\n  repeat_after = \"0d\"\n}\n"), Options{}, errAt("Invalid repeat_after", "msg.hcl", 4)},
		{"negative repeat_after", msg("notification \"n\" {\n  user_ids = [\"u\"]\n  title = \"t\"\n  body = \"b\"\n  repeat_after = \"-1h\"\n}\n"), Options{}, errAt("Invalid repeat_after", "msg.hcl", 5)},
		{"repeat_after a number", msg("notification \"n\" {\n  user_ids = [\"u\"]\n  title = \"t\"\n  body = \"b\"\n  repeat_after = [7]\n}\n"), Options{}, errAt("Incorrect attribute value type", "msg.hcl", 5)},
		{"repeat_after per instance", msg("notification \"n\" {\n  for_each = { a = \"1h\", b = \"soon\" }\n  user_ids = [each.key]\n  title = \"t\"\n  body = \"b\"\n  repeat_after = each.value\n}\n"), Options{}, errAt("Invalid repeat_after", "msg.hcl", 6)},
		{"campaign bad repeat_after", msg("campaign \"c\" {\n  repeat_after = \"7 days\"\n}\n"), Options{}, errAt("Invalid repeat_after", "msg.hcl", 2)},
		{"campaign zero repeat_after", msg("campaign \"c\" {\n  repeat_after = \"0s\"\n}\n"), Options{}, errAt("Invalid repeat_after", "msg.hcl", 2)},
		{"bad send_before", msg("notification \"n\" {\n  user_ids = [\"u\"]\n  title = \"t\"\n  body = \"b\"\n  send_before = \"2026-13-01\"\n}\n"), Options{}, errAt("Invalid send_before", "msg.hcl", 5)},
		{"window ends before it starts", msg("notification \"n\" {\n  user_ids = [\"u\"]\n  title = \"t\"\n  body = \"b\"\n  send_after = \"2026-11-27T20:00:00Z\"\n  send_before = \"2026-11-27T08:00:00Z\"\n}\n"), Options{}, errAt("Invalid delivery window", "msg.hcl", 6)},
		{"empty window", msg("notification \"n\" {\n  user_ids = [\"u\"]\n  title = \"t\"\n  body = \"b\"\n  send_after = \"2026-11-27T20:00:00+01:00\"\n  send_before = \"2026-11-27T19:00:00Z\"\n}\n"), Options{}, errAt("Invalid delivery window", "msg.hcl", 6)},
		{"badge with shared_tag", msg("badge \"b\" {\n  device_ids = [\"d\"]\n  badge_count = 1\n  shared_tag = true\n}\n"), Options{}, errAt("Unsupported argument in badge block", "msg.hcl", 4)},
		{"shared_tag without tag", msg("notification \"n\" {\n  user_ids = [\"u\"]\n  title = \"t\"\n  body = \"b\"\n  shared_tag = true\n}\n"), Options{}, warnAt("shared_tag without tag", "msg.hcl", 5)},
		{"shared_tag not a bool", msg("notification \"n\" {\n  user_ids = [\"u\"]\n  title = \"t\"\n  body = \"b\"\n  tag = \"x\"\n  shared_tag = \"yes\"\n}\n"), Options{}, errAt("Incorrect attribute value type", "msg.hcl", 6)},
		{"list over max_targets", msg("notification \"n\" {\n  user_ids = [\"a\", \"b\", \"c\"]\n  title = \"t\"\n  body = \"b\"\n  max_targets = 2\n}\n"), Options{}, errAt("Audience over max_targets", "msg.hcl", 5)},
		{"for_each over max_targets", msg("notification \"n\" {\n  for_each = toset([\"a\", \"b\", \"c\"])\n  user_ids = [each.key]\n  badge_count = 1\n  max_targets = 2\n}\n"), Options{}, errAt("Audience over max_targets", "msg.hcl", 5)},
		{"campaign over max_targets", msg("campaign \"c\" {\n  max_targets = 2\n  badge \"a\" {\n    device_ids = [\"d1\", \"d2\"]\n    badge_count = 1\n  }\n  badge \"b\" {\n    device_ids = [\"d1\"]\n    badge_count = 0\n  }\n}\n"), Options{}, errAt("Audience over max_targets", "msg.hcl", 2)},
		{"recipients over max_targets", msg("data \"recipients\" \"r\" {}\nnotification \"n\" {\n  user_ids = data.recipients.r.user_ids\n  title = \"t\"\n  body = \"b\"\n  max_targets = 1\n}\n"), Options{Recipients: map[string][]string{"r": {"a", "b"}}}, errAt("Audience over max_targets", "msg.hcl", 6)},

		// blocks and names
		{"duplicate notification", msg("notification \"n\" {\n  user_ids = [\"u\"]\n  badge_count = 1\n}\nnotification \"n\" {\n  user_ids = [\"u\"]\n  badge_count = 1\n}\n"), Options{}, errAt("Duplicate notification block", "msg.hcl", 5)},
		{"duplicate in campaign", msg("campaign \"c\" {\n  badge \"n\" {\n    user_ids = [\"u\"]\n    badge_count = 1\n  }\n  badge \"n\" {\n    user_ids = [\"u\"]\n    badge_count = 1\n  }\n}\n"), Options{}, errAt("Duplicate badge block", "msg.hcl", 6)},
		{"duplicate campaign", msg("campaign \"c\" {}\ncampaign \"c\" {}\n"), Options{}, errAt("Duplicate campaign block", "msg.hcl", 2)},
		{"duplicate topic", msg("topic \"t\" {}\ntopic \"t\" {}\n"), Options{}, errAt("Duplicate topic block", "msg.hcl", 2)},
		{"duplicate variable", msg("variable \"v\" { default = 1 }\nvariable \"v\" { default = 1 }\n"), Options{}, errAt("Duplicate variable block", "msg.hcl", 2)},
		{"duplicate data source", msg("data \"recipients\" \"a\" {}\ndata \"recipients\" \"a\" {}\n"), Options{}, errAt("Duplicate data source", "msg.hcl", 2)},
		{"duplicate local", msg("locals { a = 1 }\nlocals { a = 2 }\n"), Options{}, errAt("Duplicate local value", "msg.hcl", 2)},
		{"unknown data source", msg("data \"users\" \"a\" {}\n"), Options{}, errAt("Unsupported data source", "msg.hcl", 1)},
		{"data source arguments", msg("data \"recipients\" \"a\" {\n  filter = 1\n}\n"), Options{}, errAt("Unsupported argument", "msg.hcl", 2)},
		{"invalid block name", msg("notification \"a b\" {\n  user_ids = [\"u\"]\n  badge_count = 1\n}\n"), Options{}, errAt("Invalid notification name", "msg.hcl", 1)},
		{"unknown campaign block", msg("campaign \"c\" {\n  email \"e\" {}\n}\n"), Options{}, errAt("Unsupported block type", "msg.hcl", 2)},

		// for_each
		{"for_each list", msg("notification \"n\" {\n  for_each = [\"a\"]\n  user_ids = [each.key]\n  badge_count = 1\n}\n"), Options{}, errAt("Invalid for_each argument", "msg.hcl", 2)},
		{"for_each data", msg("data \"recipients\" \"r\" {}\nnotification \"n\" {\n  for_each = toset(data.recipients.r.user_ids)\n  user_ids = [each.key]\n  badge_count = 1\n}\n"), Options{}, errAt("Invalid for_each argument", "msg.hcl", 3)},
		{"for_each set of numbers", msg("notification \"n\" {\n  for_each = toset([1])\n  user_ids = [\"u\"]\n  badge_count = 1\n}\n"), Options{}, errAt("Invalid for_each argument", "msg.hcl", 2)},
		{"for_each string", msg("notification \"n\" {\n  for_each = \"a\"\n  user_ids = [\"u\"]\n  badge_count = 1\n}\n"), Options{}, errAt("Invalid for_each argument", "msg.hcl", 2)},
		{"each without for_each", msg("notification \"n\" {\n  user_ids = [\"u\"]\n  title = each.key\n  body = \"b\"\n}\n"), Options{}, errAt("Unknown variable", "msg.hcl", 3)},

		// variables and locals
		{"required variable", msg("\nvariable \"v\" { type = string }\n"), Options{}, errAt("No value for required variable", "msg.hcl", 2)},
		{"bad variable type", msg("variable \"v\" { type = strin }\n"), Options{}, errAt("Invalid type specification", "msg.hcl", 1)},
		{"default of wrong type", msg("variable \"v\" {\n  type = number\n  default = \"x\"\n}\n"), Options{}, errAt("Invalid default value for variable", "msg.hcl", 3)},
		{"undeclared --var", msg(""), Options{Vars: []string{"nope=1"}}, errAt("Value for undeclared variable", "", 0)},
		{"malformed --var", msg(""), Options{Vars: []string{"nope"}}, errAt("Invalid --var option", "", 0)},
		{"--var of wrong type", msg("variable \"n\" { type = number }\n"), Options{Vars: []string{"n=abc"}}, errAt("Invalid value for variable", "", 0)},
		{"undeclared in var file", map[string]string{"main.hcl": svc, "vals.tfvars": "\nnope = 1\n"}, Options{VarFiles: []string{"vals.tfvars"}}, warnAt("Value for undeclared variable", "vals.tfvars", 2)},
		{"missing var file", msg(""), Options{VarFiles: []string{"nope.tfvars"}}, errAt("Cannot read variables file", "", 0)},
		{"local cycle", msg("locals {\n  a = local.b\n  b = local.a\n}\n"), Options{}, errAt("Cycle in local values", "msg.hcl", 2)},
		{"undeclared local", msg("locals {\n  a = local.nope\n}\n"), Options{}, errAt("Reference to undeclared local value", "msg.hcl", 2)},
		{"undeclared variable", msg("locals {\n  a = var.nope\n}\n"), Options{}, errAt("Unsupported attribute", "msg.hcl", 2)},

		// functions and files
		{"file outside dir", msg("locals {\n  a = file(\"../etc/passwd\")\n}\n"), Options{}, errAt("Error in function call", "msg.hcl", 2)},
		{"file missing", msg("locals {\n  a = file(\"nope.csv\")\n}\n"), Options{}, errAt("Error in function call", "msg.hcl", 2)},
		{"unknown function", msg("locals {\n  a = shell(\"ls\")\n}\n"), Options{}, errAt("Call to unknown function", "msg.hcl", 2)},
		{"huge range", msg("locals {\n  a = range(1e9)\n}\n"), Options{}, errAt("Error in function call", "msg.hcl", 2)},
		{"syntax error", msg("notification \"n\" {\n  title = \n}\n"), Options{}, errAt("Invalid expression", "msg.hcl", 2)},
		{"NUL byte", msg("locals {\n  a = \"\x00\"\n}\n"), Options{}, errAt("Invalid character in configuration file", "msg.hcl", 2)},
		{"deep nesting", msg("locals {\n  a = " + strings.Repeat("[", MaxNesting+1) + "\n}\n"), Options{}, errAt("Configuration nested too deeply", "msg.hcl", 2)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, diags := load(t, tt.files, tt.opts)
			for _, d := range diags {
				if d.Severity != tt.want.severity || d.Summary != tt.want.summary {
					continue
				}
				file, line := "", 0
				if d.Subject != nil {
					file, line = d.Subject.Filename, d.Subject.Start.Line
				}
				if file == tt.want.file && line == tt.want.line {
					return
				}
			}
			t.Errorf("want %q at %s:%d; got:%s", tt.want.summary, tt.want.file, tt.want.line, describe(diags))
		})
	}
}

// TestValidConfigsHaveNoDiagnostics guards against rules that fire on good input.
func TestValidConfigsHaveNoDiagnostics(t *testing.T) {
	tests := map[string]string{
		"loopback http":           "service {\n  environment = \"production\"\n  base_url = \"http://127.0.0.1:8787/v1\"\n  api_key_env = \"PUSH_KEY_2\"\n}\n",
		"declared topic":          svc + "topic \"deals\" {}\nnotification \"n\" {\n  topics = [topic.deals.name]\n  title = \"t\"\n  body = \"b\"\n}\n",
		"badge-only notification": svc + "notification \"n\" {\n  user_ids = [\"u\"]\n  badge_count = 0\n}\n",
		"empty list from data":    svc + "data \"recipients\" \"r\" {}\nnotification \"n\" {\n  user_ids = setsubtract(data.recipients.r.user_ids, [\"bob\"])\n  title = \"t\"\n  body = \"b\"\n}\n",
		"send_after":              svc + "notification \"n\" {\n  user_ids = [\"u\"]\n  title = \"t\"\n  body = \"b\"\n  send_after = \"2026-05-01T09:00:00+02:00\"\n}\n",
		"guards": svc + `
frequency_cap {
  max = 3
  per = "1d"
}
data "recipients" "r" {}
campaign "bf" {
  send_rate   = "10000/minute"
  max_targets = 2000000
  frequency_cap {
    max = 1
    per = "12h"
  }
  notification "doors" {
    user_ids    = data.recipients.r.user_ids
    title       = "Doors open"
    body        = "Now"
    send_after  = "2026-11-27T08:00:00Z"
    send_before = "2026-11-27T20:00:00Z"
    send_rate   = "600/minute"
    max_targets = 50000
    tag         = "bf-2026"
    shared_tag  = true
    enabled      = true
    repeat_after = "7d"
  }
}
notification "late" {
  user_ids    = ["u"]
  title       = "t"
  body        = "b"
  send_before = "2026-11-27T20:00:00Z"
  max_targets = 1
}
`,
	}
	for name, src := range tests {
		t.Run(name, func(t *testing.T) {
			_, diags := load(t, map[string]string{"main.hcl": src}, Options{Recipients: map[string][]string{"r": {}}})
			if len(diags) > 0 {
				t.Errorf("diagnostics:%s", describe(diags))
			}
		})
	}
}

// TestAllProblemsInOneRun checks that decoding goes on after errors, across files.
func TestAllProblemsInOneRun(t *testing.T) {
	_, diags := load(t, map[string]string{
		"a.hcl": "service {\n  environment = \"staging\"\n}\n",
		"b.hcl": "notification \"n\" {\n  user_ids = []\n  title = \"t\"\n}\n",
		"c.hcl": "badge \"b\" {\n  device_ids = [\"d\"]\n  badge_count = -2\n}\n",
		"d.hcl": "notification \"broken\" {\n",
	}, Options{})
	files := map[string]bool{}
	for _, d := range diags {
		if d.Subject != nil {
			files[d.Subject.Filename] = true
		}
	}
	for _, f := range []string{"a.hcl", "b.hcl", "c.hcl", "d.hcl"} {
		if !files[f] {
			t.Errorf("no diagnostic in %s:%s", f, describe(diags))
		}
	}
	if n := len(diags.Errs()); n < 5 {
		t.Errorf("got %d errors, want at least 5:%s", n, describe(diags))
	}
}

func TestEveryDiagnosticHasASubject(t *testing.T) {
	_, diags := load(t, map[string]string{
		"main.hcl": "service {\n  api_key = \"x\"\n}\nvariable \"v\" {}\nlocals { a = local.a }\nnotification \"n\" {\n  user_ids = [\"\"]\n}\nbadge \"b\" {\n  title = 1\n}\n",
	}, Options{})
	if len(diags) < 5 {
		t.Fatalf("too few diagnostics:%s", describe(diags))
	}
	for _, d := range diags {
		if d.Subject == nil || d.Subject.Filename == "" || d.Subject.Start.Line == 0 {
			t.Errorf("diagnostic %q has no subject", d.Summary)
		}
	}
}

func TestLimits(t *testing.T) {
	big := make([]byte, MaxFileSize+1)
	_, diags := ParseSource("big.hcl", big)
	if !diags.HasErrors() || diags[0].Summary != "Configuration file too large" {
		t.Errorf("oversized file: %s", diags.Error())
	}
}
