package backend_test

// The proof that a backend plugs in: a state kept in a map in memory,
// declared, registered and tested in this file alone. It passes the
// conformance suite and runs plan and apply end to end through the real
// command line, with no line of it anywhere else.

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/hashicorp/hcl/v2"

	"pushform/backend"
	"pushform/command"
	"pushform/config"
	"pushform/internal/testutil"
	"pushform/state"
	"pushform/state/statefile"
	"pushform/state/statetest"
)

// memType is backend "memory" { name = "..." }: one store per name.
type memType struct{ stores *memStores }

type memStores struct {
	mu sync.Mutex
	m  map[string]*memStore
}

func (s *memStores) get(name string) *memStore {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.m[name] == nil {
		s.m[name] = &memStore{}
	}
	return s.m[name]
}

var memSchema = &hcl.BodySchema{Attributes: []hcl.AttributeSchema{{Name: "name", Required: true}}}

func (t memType) Decode(b *config.Backend) (backend.Opener, hcl.Diagnostics) {
	content, diags := b.Body.Content(memSchema)
	if diags.HasErrors() {
		return nil, diags
	}
	name, _, d := config.LiteralString(content.Attributes["name"])
	if diags = append(diags, d...); diags.HasErrors() {
		return nil, diags
	}
	return memOpener{t.stores.get(name), name}, diags
}

type memOpener struct {
	store *memStore
	name  string
}

func (o memOpener) Open(context.Context, backend.OpenEnv) (backend.State, error) {
	return &memManager{store: o.store, name: o.name}, nil
}

// memStore is the storage that managers share, as processes share a
// database: a snapshot, the journal entries since, and the lock.
type memStore struct {
	mu       sync.Mutex
	head     state.Head // Known is set once anything was stored
	env      string
	snapshot []byte   // statefile encoding; nil while only a journal exists
	journal  [][]byte // statefile entry encodings
	lock     *memLock
}

type memLock struct {
	info  state.LockInfo
	owner *memManager
}

// memManager is one process's view of a memStore.
type memManager struct {
	store  *memStore
	name   string
	mu     sync.Mutex // held across each store operation, as a connection
	seen   state.Head
	commit state.GroupCommit[[]byte]
	stale  *state.LockInfo
	dead   bool // killed: its lock is released, its record stays
}

func (m *memManager) String() string { return fmt.Sprintf("memory state %q", m.name) }
func (m *memManager) Dir() string    { return "" }
func (m *memManager) Close() error   { return nil }

func (m *memManager) Read() (*state.State, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	st := m.store
	st.mu.Lock()
	defer st.mu.Unlock()
	var s *state.State
	if st.snapshot != nil {
		var err error
		if s, err = statefile.Decode(bytes.NewReader(st.snapshot)); err != nil {
			return nil, err
		}
	}
	m.seen = state.Head{Known: true, Exists: st.head.Exists, Lineage: st.head.Lineage, Serial: st.head.Serial}
	for _, raw := range st.journal {
		e, err := statefile.DecodeEntry(raw)
		if err != nil {
			return nil, err
		}
		if s == nil {
			s = &state.State{Version: state.FormatVersion, Lineage: st.head.Lineage, Serial: st.head.Serial, Environment: st.env, Messages: map[string]*state.Message{}}
		}
		if err := s.ApplyEntry(e); err != nil {
			return nil, err
		}
	}
	return s, nil
}

func (m *memManager) Append(entries ...state.Entry) error {
	rows := make([][]byte, len(entries))
	for i, e := range entries {
		rows[i] = statefile.AppendEntry(nil, e)
	}
	return m.commit.Do(&m.mu, rows, func(rows [][]byte) error {
		st := m.store
		st.mu.Lock()
		defer st.mu.Unlock()
		if !m.seen.Known {
			m.seen = st.head
			m.seen.Known = true
		}
		if err := m.seen.Stale(m.String(), st.head); err != nil {
			return err
		}
		if !st.head.Exists {
			st.head = state.Head{Known: true, Exists: true, Lineage: state.NewLineage()}
			m.seen = st.head
		}
		st.journal = append(st.journal, rows...)
		return nil
	})
}

func (m *memManager) Persist(s *state.State) error {
	out := *s
	out.Version = state.FormatVersion
	out.Serial = s.Serial + 1
	var buf bytes.Buffer
	if err := statefile.Encode(&buf, &out); err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	st := m.store
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.head.Exists {
		if st.head.Lineage != s.Lineage {
			return fmt.Errorf("%w: %s has lineage %q, this state has %q", state.ErrLineage, m, st.head.Lineage, s.Lineage)
		}
		if st.head.Serial != s.Serial {
			return fmt.Errorf("%w: %s has serial %d, this state was read at serial %d", state.ErrStaleSerial, m, st.head.Serial, s.Serial)
		}
	}
	st.snapshot, st.journal, st.env = buf.Bytes(), nil, out.Environment
	s.Version, s.Serial = out.Version, out.Serial
	st.head = state.HeadOf(s)
	m.seen = st.head
	return nil
}

// held reports whether a live manager holds the lock; st.mu is held.
func (st *memStore) held() bool { return st.lock != nil && !st.lock.owner.dead }

func (m *memManager) Lock(_ context.Context, info state.LockInfo) (string, error) {
	info = info.ForNewLock()
	st := m.store
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.held() {
		return "", &state.LockError{Info: st.lock.info}
	}
	m.stale = nil
	if st.lock != nil {
		prev := st.lock.info
		m.stale = &prev
	}
	st.lock = &memLock{info: info, owner: m}
	return info.ID, nil
}

func (m *memManager) Unlock(id string) error {
	st := m.store
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.lock == nil || st.lock.owner != m || st.lock.info.ID != id {
		return fmt.Errorf("%s: unlocking: lock %q is not held by this manager", m, id)
	}
	st.lock = nil
	return nil
}

func (m *memManager) ForceUnlock(id string) (state.LockInfo, error) {
	st := m.store
	st.mu.Lock()
	defer st.mu.Unlock()
	switch {
	case st.lock == nil:
		return state.LockInfo{}, fmt.Errorf("force-unlock: %s is not locked", m)
	case st.lock.info.ID != id:
		return st.lock.info, fmt.Errorf("force-unlock: lock id %q does not match the current lock %q", id, st.lock.info.ID)
	case st.held():
		return st.lock.info, fmt.Errorf("force-unlock: %w; it is held by a running process", &state.LockError{Info: st.lock.info})
	}
	info := st.lock.info
	st.lock = nil
	return info, nil
}

func (m *memManager) StaleLock() (state.LockInfo, bool) {
	if m.stale == nil {
		return state.LockInfo{}, false
	}
	return *m.stale, true
}

func newMemType() memType { return memType{&memStores{m: map[string]*memStore{}}} }

func TestMemoryBackendConformance(t *testing.T) {
	typ := newMemType()
	n := 0
	open := func(name string) *memManager {
		s, err := memOpener{typ.stores.get(name), name}.Open(context.Background(), backend.OpenEnv{})
		if err != nil {
			t.Fatal(err)
		}
		return s.(*memManager)
	}
	statetest.TestManager(t, func(t *testing.T) state.Manager {
		n++
		return open(fmt.Sprint("manager-", n))
	})
	statetest.TestShared(t, func(t *testing.T) statetest.Storage {
		n++
		name := fmt.Sprint("shared-", n)
		return statetest.Storage{
			Open: func(t *testing.T) statetest.Backend { return open(name) },
			Kill: func(t *testing.T, b statetest.Backend) {
				m := b.(*memManager)
				m.store.mu.Lock()
				m.dead = true
				m.store.mu.Unlock()
			},
		}
	})
}

// TestMemoryBackendEndToEnd registers the memory backend beside the
// built-ins and runs the quickstart through it: apply sends, a second
// plan has nothing to do, and the state is in the map, not in a file.
func TestMemoryBackendEndToEnd(t *testing.T) {
	dir := testutil.Quickstart(t)
	testutil.WriteFile(t, dir, "backend.hcl", "backend \"memory\" {\n  name = \"team\"\n}\n")
	typ := newMemType()
	reg := backend.Builtins()
	reg["memory"] = typ
	run := func(args ...string) (int, string, string) {
		var out, errOut bytes.Buffer
		code := command.Run(context.Background(), args, command.Env{Stdout: &out, Stderr: &errOut, Dir: dir, Backends: reg,
			Getenv: func(string) string { return "" }})
		return code, out.String(), errOut.String()
	}
	if code, out, errOut := run("plan", "--detailed-exitcode"); code != command.ExitChanges {
		t.Fatalf("first plan: exit %d\n%s%s", code, out, errOut)
	}
	code, out, errOut := run("apply", "--auto-approve")
	if code != 0 || !strings.Contains(out, "Apply complete") {
		t.Fatalf("apply: exit %d\n%s%s", code, out, errOut)
	}
	if code, out, errOut := run("plan", "--detailed-exitcode"); code != command.ExitOK {
		t.Fatalf("plan after apply: exit %d; want no changes\n%s%s", code, out, errOut)
	}
	if _, err := os.Stat(filepath.Join(dir, backend.DefaultStateFile)); !os.IsNotExist(err) {
		t.Errorf("a local state file was written: %v", err)
	}
	st := typ.stores.get("team")
	st.mu.Lock()
	defer st.mu.Unlock()
	if !st.head.Exists || st.head.Serial == 0 || st.snapshot == nil || st.lock != nil {
		t.Fatalf("memory store after apply: head %+v, snapshot %d bytes, lock %+v", st.head, len(st.snapshot), st.lock)
	}
	s, err := statefile.Decode(bytes.NewReader(st.snapshot))
	if err != nil {
		t.Fatal(err)
	}
	delivered := 0
	for _, msg := range s.Messages {
		for _, tg := range msg.Targets {
			if tg.Outcome == state.Delivered {
				delivered++
			}
		}
	}
	if delivered == 0 {
		t.Fatalf("no delivered target recorded in the memory state: %+v", s.Messages)
	}
	// An unknown type still lists the known ones, the test's included.
	os.WriteFile(filepath.Join(dir, "backend.hcl"), []byte("backend \"s3\" {}\n"), 0o644)
	if code, _, errOut := run("validate"); code != command.ExitError || !strings.Contains(errOut, "the known types are: memory, pg.") {
		t.Fatalf("validate with an unknown type: exit %d\n%s", code, errOut)
	}
}
