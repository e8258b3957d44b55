package operation

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"pushform/state"
	"pushform/state/local"
	"pushform/state/statetest"
	"pushform/views"
)

// stateDir returns a directory holding the sample state at pushform.state,
// and the options of an operation on it (op names it) with its warnings
// written to warn.
func stateDir(t *testing.T, op string) (string, Options, *bytes.Buffer) {
	t.Helper()
	dir := t.TempDir()
	if err := local.NewFile(filepath.Join(dir, "pushform.state")).Persist(statetest.Sample()); err != nil {
		t.Fatal(err)
	}
	var warn bytes.Buffer
	at := time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)
	return dir, Options{Operation: op, Dir: dir, Clock: func() time.Time { return at }, Warnings: views.NewWarnings(&warn)}, &warn
}

// TestStateEdits: the operations on the state return what they did as
// data, and refuse, changing nothing, what names no address.
func TestStateEdits(t *testing.T) {
	const announce, reset = "campaign.spring_sale.notification.announce", "campaign.c.badge.reset"
	ctx := context.Background()
	for _, tt := range []struct {
		name    string
		run     func(o Options) (any, error)
		want    any    // the result, when it succeeds
		wantErr string // or the error
		after   []string
	}{
		{"list", func(o Options) (any, error) {
			r, err := StateList(ctx, o)
			if err != nil {
				return nil, err
			}
			return r.State.Addresses(), nil
		}, []string{reset, announce}, "", []string{reset, announce}},
		{"show", func(o Options) (any, error) {
			m, err := StateShow(ctx, o, reset)
			if err != nil {
				return nil, err
			}
			return m.Fingerprint, nil
		}, "fp-2", "", []string{reset, announce}},
		{"show unknown", func(o Options) (any, error) { return StateShow(ctx, o, "notification.nope") },
			nil, "no address notification.nope in the state", []string{reset, announce}},
		{"rm", func(o Options) (any, error) { return StateRemove(ctx, o, []string{reset, reset}) },
			&RemoveResult{Removed: []string{reset}, Serial: 2}, "", []string{announce}},
		{"rm unknown", func(o Options) (any, error) { return StateRemove(ctx, o, []string{reset, "notification.nope"}) },
			nil, "no address notification.nope in the state; nothing was removed", []string{reset, announce}},
		{"mv", func(o Options) (any, error) { return StateMove(ctx, o, reset, "campaign.c.badge.zero") },
			&MoveResult{Items: []state.Item{{Address: reset, To: "campaign.c.badge.zero"}}, Serial: 2}, "", []string{"campaign.c.badge.zero", announce}},
		{"mv across kinds", func(o Options) (any, error) { return StateMove(ctx, o, reset, "notification.zero") },
			nil, "a notification moves to a notification, a badge to a badge; nothing was moved", []string{reset, announce}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir, o, _ := stateDir(t, "state "+tt.name)
			got, err := tt.run(o)
			switch {
			case tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)):
				t.Fatalf("err %v; want %q", err, tt.wantErr)
			case tt.wantErr == "" && err != nil:
				t.Fatal(err)
			case tt.wantErr == "" && !jsonEqual(got, tt.want):
				t.Errorf("result %+v; want %+v", got, tt.want)
			}
			s, err := local.NewFile(filepath.Join(dir, "pushform.state")).Read()
			if err != nil {
				t.Fatal(err)
			}
			if addrs := s.Addresses(); !slices.Equal(addrs, tt.after) {
				t.Errorf("state after: %v; want %v", addrs, tt.after)
			}
		})
	}
}

// jsonEqual compares results by their JSON, as a front end would read them.
func jsonEqual(a, b any) bool {
	ja, err1 := json.Marshal(a)
	jb, err2 := json.Marshal(b)
	return err1 == nil && err2 == nil && bytes.Equal(ja, jb)
}

// TestStateEditWarnsOfStaleLock: an edit under the lock says, through
// Options.Warnings, who left the lock info behind, and goes on.
func TestStateEditWarnsOfStaleLock(t *testing.T) {
	dir, o, warn := stateDir(t, "state rm")
	f := local.NewFile(filepath.Join(dir, "pushform.state"))
	info := state.LockInfo{ID: "abc123", Who: "ci@runner", Operation: "apply", Pid: 99999, Created: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)}
	data, _ := json.Marshal(info)
	if err := os.WriteFile(f.LockInfoPath(), data, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := StateRemove(context.Background(), o, []string{"campaign.c.badge.reset"}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(warn.String(), "ci@runner (pid 99999) running apply since 2026-01-02T03:04:05Z, lock id abc123") {
		t.Errorf("warnings %q; want the stale lock's holder", warn)
	}
}

// TestStatePruneResult: prune reads the configuration, drops what is
// older than Before, says how many, and refuses a time in the future
// without Force.
func TestStatePruneResult(t *testing.T) {
	dir, o, _ := stateDir(t, "state prune")
	if err := os.WriteFile(filepath.Join(dir, "main.hcl"), []byte("service {\n  environment = \"test\"\n}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	// Three deliveries on 2026-05-01 of an address forgotten since: the
	// ledger keeps them.
	intent, outcome := statetest.BatchEntries(1, 3)
	forget := state.Entry{Type: state.EntryForget, Time: outcome.Time.Add(time.Hour), Items: []state.Item{{Address: outcome.Items[0].Address}}}
	if err := local.NewFile(filepath.Join(dir, "pushform.state")).Append(intent, outcome, forget); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	future := time.Date(2027, 1, 1, 0, 0, 0, 0, time.UTC)
	if _, err := StatePrune(ctx, o, PruneOptions{Before: future, BeforeText: "2027-01-01"}); err == nil || !strings.Contains(err.Error(), "is in the future") {
		t.Fatalf("a future time: err %v", err)
	}
	for _, tt := range []struct {
		before  time.Time
		dropped int
		serial  uint64
	}{
		{time.Date(2026, 5, 1, 0, 0, 0, 0, time.UTC), 0, 1}, // nothing that old: nothing saved
		{time.Date(2026, 5, 2, 0, 0, 0, 0, time.UTC), 3, 2},
	} {
		res, err := StatePrune(ctx, o, PruneOptions{Before: tt.before, BeforeText: tt.before.Format(time.DateOnly)})
		if err != nil {
			t.Fatal(err)
		}
		if res.Dropped != tt.dropped || res.Serial != tt.serial || !res.Before.Equal(tt.before) {
			t.Errorf("before %s: result %+v; want %d dropped, serial %d", tt.before, res, tt.dropped, tt.serial)
		}
	}
}
