package backend

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/hashicorp/hcl/v2"

	"pushform/config"
	"pushform/secret"
)

// A Type is one kind of state backend, named by the label of its block
// (backend "pg" { ... }): it declares and decodes its own block schema and
// opens the state the block describes. A new backend is a package with its
// state manager and a Type, plus one line in Builtins.
type Type interface {
	// Decode checks the body of a backend block of this type and returns
	// what opens it; the Opener is nil when diags has errors. Values are
	// literals: the backend is opened before anything is evaluated.
	Decode(b *config.Backend) (Opener, hcl.Diagnostics)
}

// An Opener opens the state a decoded backend block describes.
type Opener interface {
	Open(ctx context.Context, env OpenEnv) (State, error)
}

// OpenEnv is what an Opener may read from outside the configuration.
type OpenEnv struct {
	// ConfigDir is the configuration directory.
	ConfigDir string
	// Getenv looks up environment variables (connection strings); never
	// nil.
	Getenv func(string) string
	// Secrets are the run's other secrets (the API key), to be taken out
	// of the backend's messages; nil redacts nothing more.
	Secrets *secret.Set
}

// Registry maps backend types (block labels) to their Type. It is a plain
// value: Builtins makes one, a test or another front end adds to its copy.
type Registry map[string]Type

// Builtins returns a new registry of the backends pushform ships with.
func Builtins() Registry {
	return Registry{
		"pg": PG{},
	}
}

var _ config.BackendTypes = Registry(nil)

// Types lists the registered types, sorted.
func (r Registry) Types() []string {
	out := make([]string, 0, len(r))
	for k := range r {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// CheckBackend implements config.BackendTypes.
func (r Registry) CheckBackend(b *config.Backend) hcl.Diagnostics {
	_, diags := r.Decode(b)
	return diags
}

// Decode decodes b with its type's schema; an unknown type is a diagnostic
// listing the known ones.
func (r Registry) Decode(b *config.Backend) (Opener, hcl.Diagnostics) {
	t, ok := r[b.Type]
	if !ok {
		return nil, hcl.Diagnostics{{Severity: hcl.DiagError, Summary: "Unsupported backend type",
			Detail:  fmt.Sprintf("There is no backend type %s; the known types are: %s. Without a backend block the state is a local file.", config.QuoteValue(b.Type), strings.Join(r.Types(), ", ")),
			Subject: b.TypeRange.Ptr()}}
	}
	return t.Decode(b)
}

// open decodes and opens b: the configuration was checked when loaded,
// so a diagnostic here means it was loaded without this registry.
func (r Registry) open(ctx context.Context, b *config.Backend, env OpenEnv) (State, error) {
	o, diags := r.Decode(b)
	if diags.HasErrors() {
		return nil, fmt.Errorf("backend %q (%s): %s", b.Type, b.Pos, diags.Error())
	}
	return o.Open(ctx, env)
}
