package backend_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"

	"pushform/backend"
	"pushform/config"
)

// block parses a backend block as config keeps it: type and body.
func block(t *testing.T, src string) *config.Backend {
	t.Helper()
	f, diags := hclsyntax.ParseConfig([]byte(src), "b.hcl", hcl.InitialPos)
	if diags.HasErrors() {
		t.Fatal(diags.Error())
	}
	b := f.Body.(*hclsyntax.Body).Blocks[0]
	return &config.Backend{Type: b.Labels[0], Body: b.Body, TypeRange: b.LabelRanges[0], DeclRange: b.DefRange(), Pos: config.Pos{Filename: "b.hcl", Line: 1, Column: 1}}
}

func TestOpenStateErrors(t *testing.T) {
	ctx := context.Background()
	for _, tt := range []struct {
		name string
		o    backend.StateOptions
		want string
	}{
		{"--state with pg", backend.StateOptions{Path: "x.state", Backend: block(t, "backend \"pg\" {}\n")},
			`--state names a local state file, but the configuration keeps its state in PostgreSQL (backend "pg")`},
		{"no connection string", backend.StateOptions{Backend: block(t, "backend \"pg\" {\n  conn_str_env = \"TEAM_PG\"\n}\n")},
			`environment variable TEAM_PG is empty: it must hold the postgres:// URL of the database that keeps the state (backend "pg" at b.hcl:1)`},
		// A block loaded without the registry is checked when opened.
		{"unknown type", backend.StateOptions{Backend: block(t, "backend \"s3\" {}\n")},
			`backend "s3" (b.hcl:1): b.hcl:1,9-13: Unsupported backend type; There is no backend type "s3"; the known types are: pg.`},
		{"bad attribute", backend.StateOptions{Backend: block(t, "backend \"pg\" {\n  lock_timeout = \"never\"\n}\n")},
			`Invalid lock_timeout`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := backend.OpenState(ctx, tt.o)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v\nwant %s", err, tt.want)
			}
		})
	}
}

// Without a block the state is the local file in the configuration
// directory, or the --state path.
func TestOpenStateLocal(t *testing.T) {
	dir := t.TempDir()
	be, err := backend.OpenState(context.Background(), backend.StateOptions{ConfigDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	if !backend.IsLocal(be) || be.String() != filepath.Join(dir, backend.DefaultStateFile) || be.Dir() != dir {
		t.Errorf("state %s in %s; want the local file in %s", be, be.Dir(), dir)
	}
	be, err = backend.OpenState(context.Background(), backend.StateOptions{ConfigDir: dir, Path: filepath.Join(dir, "st", "a.state")})
	if err != nil || be.String() != filepath.Join(dir, "st", "a.state") || be.Dir() != filepath.Join(dir, "st") {
		t.Errorf("--state: %v, %v", be, err)
	}
}
