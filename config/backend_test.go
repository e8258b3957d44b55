package config

import (
	"reflect"
	"strings"
	"testing"
)

func TestBackend(t *testing.T) {
	tests := []struct {
		name string
		src  string
		want *Backend // nil: no backend
	}{
		{"none", "", nil},
		{"defaults", "backend \"pg\" {}\n", &Backend{Type: "pg", ConnStrEnv: DefaultConnStrEnv, SchemaName: DefaultSchemaName, StateName: DefaultStateName}},
		{"all set", "backend \"pg\" {\n  conn_str_env = \"TEAM_PG\"\n  schema_name  = \"push_2026\"\n  state_name   = \"Marketing EU\"\n}\n",
			&Backend{Type: "pg", ConnStrEnv: "TEAM_PG", SchemaName: "push_2026", StateName: "Marketing EU"}},
		{"longest names", "backend \"pg\" {\n  schema_name = \"" + strings.Repeat("s", 63) + "\"\n  state_name = \"" + strings.Repeat("é", MaxStateNameLength) + "\"\n}\n",
			&Backend{Type: "pg", ConnStrEnv: DefaultConnStrEnv, SchemaName: strings.Repeat("s", 63), StateName: strings.Repeat("é", MaxStateNameLength)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := mustLoad(t, map[string]string{"main.hcl": svc, "backend.hcl": tt.src}, Options{})
			if tt.want != nil {
				tt.want.Pos = Pos{Filename: "backend.hcl", Line: 1, Column: 1}
			}
			if !reflect.DeepEqual(cfg.Backend, tt.want) {
				t.Errorf("backend = %+v, want %+v", cfg.Backend, tt.want)
			}
		})
	}
}

func TestBackendRules(t *testing.T) {
	const pw = "s3cr3t-Pa55"
	tests := []struct {
		name, src, summary string
		line               int
	}{
		{"unknown type", "backend \"s3\" {}\n", "Unsupported backend type", 1},
		{"two backends", "backend \"pg\" {}\n\nbackend \"pg\" {}\n", "Duplicate backend block", 3},
		{"unknown argument", "backend \"pg\" {\n  conn_str = \"x\"\n}\n", "Unsupported argument", 2},
		{"connection URL", "backend \"pg\" {\n  conn_str_env = \"postgres://u:" + pw + "@db.example.com/push\"\n}\n", "Connection string in configuration", 2},
		{"connection URL without password", "backend \"pg\" {\n  conn_str_env = \"postgres://db.example.com/push\"\n}\n", "Connection string in configuration", 2},
		{"key=value connection string", "backend \"pg\" {\n  conn_str_env = \"host=db password=" + pw + "\"\n}\n", "Connection string in configuration", 2},
		{"key-looking name", "backend \"pg\" {\n  conn_str_env = \"pg_4eC39HqLyjWDarjtT1zdp7dc\"\n}\n", "Connection string in configuration", 2},
		{"name with a dash", "backend \"pg\" {\n  conn_str_env = \"MY-PG\"\n}\n", "Invalid conn_str_env", 2},
		{"empty name", "backend \"pg\" {\n  conn_str_env = \"\"\n}\n", "Invalid conn_str_env", 2},
		{"variable", "variable \"v\" { default = \"X\" }\nbackend \"pg\" {\n  conn_str_env = var.v\n}\n", "Variables not allowed", 3},
		{"upper-case schema", "backend \"pg\" {\n  schema_name = \"Push\"\n}\n", "Invalid schema_name", 2},
		{"schema with digit first", "backend \"pg\" {\n  schema_name = \"1push\"\n}\n", "Invalid schema_name", 2},
		{"quoted schema", "backend \"pg\" {\n  schema_name = \"push; drop table x\"\n}\n", "Invalid schema_name", 2},
		{"long schema", "backend \"pg\" {\n  schema_name = \"" + strings.Repeat("s", 64) + "\"\n}\n", "Invalid schema_name", 2},
		{"system schema", "backend \"pg\" {\n  schema_name = \"pg_catalog\"\n}\n", "Invalid schema_name", 2},
		{"empty state name", "backend \"pg\" {\n  state_name = \" \"\n}\n", "Invalid state_name", 2},
		{"state name with escape", "backend \"pg\" {\n  state_name = \"a\\u001b[2J\"\n}\n", "Invalid state_name", 2},
		{"state name with bidi override", "backend \"pg\" {\n  state_name = \"a\\u202eb\"\n}\n", "Invalid state_name", 2},
		{"long state name", "backend \"pg\" {\n  state_name = \"" + strings.Repeat("x", MaxStateNameLength+1) + "\"\n}\n", "Invalid state_name", 2},
		{"state name number", "backend \"pg\" {\n  state_name = [1]\n}\n", "Incorrect attribute value type", 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg, diags := load(t, map[string]string{"main.hcl": svc, "backend.hcl": tt.src}, Options{})
			found := false
			for _, d := range diags {
				if d.Summary == tt.summary && d.Subject != nil && d.Subject.Filename == "backend.hcl" && d.Subject.Start.Line == tt.line {
					found = true
				}
				if strings.Contains(d.Summary+d.Detail, pw) {
					t.Errorf("diagnostic quotes the password: %s", d.Detail)
				}
			}
			if !found {
				t.Errorf("want %q at backend.hcl:%d; got:%s", tt.summary, tt.line, describe(diags))
			}
			if tt.name != "two backends" && cfg.Backend != nil {
				t.Errorf("an invalid backend was kept: %+v", cfg.Backend)
			}
		})
	}
}
