package backend_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/hcl/v2"

	"pushform/backend"
	"pushform/config"
	"pushform/state"
)

// nopType is a backend type that decodes nothing.
type nopType struct{}

func (nopType) Decode(*config.Backend) (backend.Opener, hcl.Diagnostics) { return nil, nil }

// TestRegistryIsAPlainValue: Builtins hands out a new map each time, so a
// test or front end adding a type changes only its own copy; Types lists
// what it holds, sorted; an unknown type's diagnostic lists them.
func TestRegistryIsAPlainValue(t *testing.T) {
	reg := backend.Builtins()
	reg["zz"] = nopType{}
	reg["aa"] = nopType{}
	if got := reg.Types(); !slices.Equal(got, []string{"aa", "pg", "zz"}) {
		t.Errorf("Types() = %v, want [aa pg zz]", got)
	}
	if got := backend.Builtins().Types(); !slices.Equal(got, []string{"pg"}) {
		t.Errorf("a fresh Builtins() = %v: adding to a copy changed it", got)
	}
	_, diags := reg.Decode(block(t, "backend \"s3\" {}\n"))
	if !diags.HasErrors() || !strings.Contains(diags.Error(), "the known types are: aa, pg, zz.") {
		t.Errorf("unknown type: %v", diags)
	}
	if diags := reg.CheckBackend(block(t, "backend \"zz\" {}\n")); diags.HasErrors() {
		t.Errorf("a registered type: %v", diags)
	}
}

// TestLock: a held lock refuses at once without a timeout, saying how to
// wait; with one it waits, and takes the lock once it is free.
func TestLock(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	open := func() backend.State {
		be, err := backend.OpenState(ctx, backend.StateOptions{ConfigDir: dir})
		if err != nil {
			t.Fatal(err)
		}
		return be
	}
	holder, other := open(), open()
	id, err := backend.Lock(ctx, holder, "apply", 0)
	if err != nil {
		t.Fatal(err)
	}
	var le *state.LockError
	_, err = backend.Lock(ctx, other, "plan", 0)
	if !errors.As(err, &le) || !strings.Contains(err.Error(), "--lock-timeout waits for it") {
		t.Errorf("no timeout: err = %v; want a LockError naming --lock-timeout", err)
	}
	_, err = backend.Lock(ctx, other, "plan", time.Millisecond)
	if !errors.As(err, &le) || strings.Contains(err.Error(), "--lock-timeout") {
		t.Errorf("after waiting: err = %v; want a LockError without the hint", err)
	}
	if err := holder.Unlock(id); err != nil {
		t.Fatal(err)
	}
	id, err = backend.Lock(ctx, other, "plan", time.Minute)
	if err != nil {
		t.Fatalf("a free lock: %v", err)
	}
	if err := other.Unlock(id); err != nil {
		t.Fatal(err)
	}
}
