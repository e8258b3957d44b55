package backend

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"pushform/config"
	"pushform/planner"
	"pushform/state"
)

func openLocal(t *testing.T, dir string, env string) (*Session, error) {
	t.Helper()
	be, err := OpenState(context.Background(), StateOptions{ConfigDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	cfg := &config.Config{Dir: dir, Service: config.Service{Environment: env}}
	return Open(context.Background(), cfg, be, SessionOptions{Operation: "test"})
}

func TestOpenRefusesOtherEnvironment(t *testing.T) {
	dir := t.TempDir()
	s, err := openLocal(t, dir, "test")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Recorder("test"); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	_, err = openLocal(t, dir, "production")
	if err == nil || !strings.Contains(err.Error(), `belongs to environment "test" but the configuration declares "production"`) {
		t.Fatalf("err = %v", err)
	}
	// The refused run released the lock.
	s, err = openLocal(t, dir, "test")
	if err != nil {
		t.Fatalf("lock not released by the refused run: %v", err)
	}
	s.Close()
}

func TestCheckPlan(t *testing.T) {
	dir := t.TempDir()
	s, err := openLocal(t, dir, "test")
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	fresh := &planner.Plan{Environment: "test"}
	if err := s.CheckPlan(fresh); err != nil {
		t.Fatalf("plan made before any state, none exists: %v", err)
	}
	if _, err := s.Recorder("test"); err != nil {
		t.Fatal(err)
	}
	st := s.State
	tests := []struct {
		name string
		p    planner.Plan
		want string // "" means accepted
	}{
		{"current", planner.Plan{Environment: "test", StateLineage: st.Lineage, StateSerial: st.Serial}, ""},
		{"other environment", planner.Plan{Environment: "production", StateLineage: st.Lineage, StateSerial: st.Serial}, `for environment "production"`},
		{"made before the state", planner.Plan{Environment: "test"}, "before any state existed"},
		{"other lineage", planner.Plan{Environment: "test", StateLineage: "x", StateSerial: st.Serial}, "another state"},
		{"stale", planner.Plan{Environment: "test", StateLineage: st.Lineage, StateSerial: st.Serial - 1}, "stale"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := s.CheckPlan(&tt.p)
			if tt.want == "" && err != nil || tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)) {
				t.Fatalf("CheckPlan = %v; want %q", err, tt.want)
			}
		})
	}
}

func TestRecorderPersist(t *testing.T) {
	dir := t.TempDir()
	s, err := openLocal(t, dir, "test")
	if err != nil {
		t.Fatal(err)
	}
	rec, err := s.Recorder("test")
	if err != nil {
		t.Fatal(err)
	}
	if err := rec.Record(state.Entry{Type: state.EntryIntent, Items: []state.Item{{Address: "notification.a", Targets: []string{"u1"}}}}); err != nil {
		t.Fatal(err)
	}
	if err := s.Persist(); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	got, err := (localStateAt(filepath.Join(dir, DefaultStateFile))).Read()
	if err != nil || got == nil || got.Messages["notification.a"] == nil || got.Serial != 2 {
		t.Fatalf("persisted state = %+v, %v", got, err)
	}
}

func localStateAt(path string) State {
	be, _ := OpenState(context.Background(), StateOptions{Path: path})
	return be
}
