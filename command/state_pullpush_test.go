package command

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"pushform/backend"
	"pushform/message"
	"pushform/state"
	"pushform/state/pg"
	"pushform/state/pg/pgtest"
	"pushform/state/statefile"
	"pushform/state/statetest"
	"pushform/views"
)

// usePG points m at the PostgreSQL state o: a configuration whose backend
// "pg" block names it, with its connection string in the environment.
func usePG(t *testing.T, m *Meta, o pg.Options) {
	t.Helper()
	block := fmt.Sprintf("backend \"pg\" {\n  schema_name = %q\n  state_name  = %q\n}\n", o.Schema, o.StateName)
	if err := os.WriteFile(filepath.Join(m.Dir, "main.hcl"), []byte(block), 0o600); err != nil {
		t.Fatal(err)
	}
	m.Getenv = func(k string) string {
		if k == "PUSHFORM_PG_CONN_STR" {
			return o.ConnString
		}
		return ""
	}
}

// writeStateFile persists s as a local state file and returns its path
// and bytes.
func writeStateFile(t *testing.T, dir, name string, s *state.State) (string, []byte) {
	t.Helper()
	path := filepath.Join(dir, name)
	be, err := backend.OpenState(context.Background(), backend.StateOptions{Path: path})
	if err != nil {
		t.Fatal(err)
	}
	if err := be.Persist(s); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return path, data
}

func decodeState(t *testing.T, data []byte) *state.State {
	t.Helper()
	s, err := statefile.Decode(bytes.NewReader(data))
	if err != nil {
		t.Fatalf("output is not a state file: %v", err)
	}
	return s
}

func TestStatePullLocal(t *testing.T) {
	m, out, errb := stateTestMeta(t)
	want, err := os.ReadFile(filepath.Join(m.Dir, "pushform.state"))
	if err != nil {
		t.Fatal(err)
	}
	if code := runState(context.Background(), m, []string{"pull"}); code != 0 {
		t.Fatalf("exit %d: %s", code, errb)
	}
	if !bytes.Equal(out.Bytes(), want) {
		t.Error("state pull of a local state is not the bytes of its file")
	}

	out.Reset()
	m.StdoutTerminal = true
	if code := runState(context.Background(), m, []string{"pull"}); code != 1 || out.Len() != 0 || !strings.Contains(errb.String(), "pushform state pull > pushform.state") {
		t.Errorf("pull to a terminal: exit %d, stdout %d bytes, stderr %q; want a refusal saying how to redirect", code, out.Len(), errb)
	}

	m.StdoutTerminal = false
	errb.Reset()
	if code := runState(context.Background(), m, []string{"pull", "--state", "missing.state"}); code != 1 || !strings.Contains(errb.String(), "no state in "+filepath.Join(m.Dir, "missing.state")) {
		t.Errorf("pull of a missing state: exit %d, stderr %q", code, errb)
	}
}

func TestStatePushLocal(t *testing.T) {
	m, out, errb := stateTestMeta(t)
	dst := filepath.Join(m.Dir, "pushform.state")
	other := statetest.Sample()
	other.Lineage = "another-lineage"
	src, _ := writeStateFile(t, t.TempDir(), "other.state", other)

	if code := runState(context.Background(), m, []string{"push", src}); code != 1 || !strings.Contains(errb.String(), "holds another state (lineage "+statetest.Sample().Lineage) {
		t.Fatalf("push of another lineage: exit %d, stderr %q", code, errb)
	}
	if code := runState(context.Background(), m, []string{"push", "--force", src}); code != 0 {
		t.Fatalf("push --force: exit %d: %s", code, errb)
	}
	got := readStateAt(t, dst)
	if got.Lineage != statetest.Sample().Lineage || got.Serial != 2 {
		t.Errorf("after push --force: lineage %s serial %d; want the replaced state's lineage at serial 2", got.Lineage, got.Serial)
	}
	if !strings.Contains(out.String(), "Pushed "+src) {
		t.Errorf("stdout %q", out)
	}
	// The replaced state's records stay in the ledger: the sample's
	// campaign.c.badge.reset was not in the pushed copy's view.
	n := statetest.Sample().RecordCount()
	if want := "other.state had " + views.Count(n) + ", "; !strings.Contains(out.String(), want) || !strings.Contains(out.String(), "kept from") {
		t.Errorf("stdout %q; want the record counts", out)
	}
	if got.RecordCount() < n {
		t.Errorf("%d records after push --force, fewer than the %d the pushed copy had", got.RecordCount(), n)
	}
}

// writeBytes writes a state file's bytes to a new file and returns its path.
func writeBytes(t *testing.T, data []byte) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "copy.state")
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func readStateAt(t *testing.T, path string) *state.State {
	t.Helper()
	be, err := backend.OpenState(context.Background(), backend.StateOptions{Path: path})
	if err != nil {
		t.Fatal(err)
	}
	defer be.Close()
	s, err := be.Read()
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestStatePushPullPG(t *testing.T) {
	pgtest.URL(t)
	t.Parallel()
	ctx := context.Background()
	m, out, errb := stateTestMeta(t)
	o := pgtest.Options(t)
	usePG(t, m, o)
	reset := func() { out.Reset(); errb.Reset() }
	pull := func() (int, []byte) {
		reset()
		code := runState(ctx, m, []string{"pull"})
		return code, append([]byte(nil), out.Bytes()...)
	}
	push := func(file string, force bool) int {
		reset()
		args := []string{"push", file}
		if force {
			args = append(args, "--force")
		}
		return runState(ctx, m, args)
	}

	if code, _ := pull(); code != 1 || !strings.Contains(errb.String(), "no state in PostgreSQL state \"test\"") {
		t.Fatalf("pull of an empty backend: exit %d, stderr %q", code, errb)
	}

	// A team moves its file state: push, then pull gives it back.
	file := filepath.Join(m.Dir, "pushform.state")
	local := readStateAt(t, file)
	if code := push(file, false); code != 0 {
		t.Fatalf("push into an empty backend: exit %d: %s", code, errb)
	}
	if want := "Pushed " + file + ` to PostgreSQL state "test" (schema ` + o.Schema + "): serial 2"; !strings.Contains(out.String(), want) {
		t.Errorf("push said %q; want %q", out, want)
	}
	code, pulled := pull()
	if code != 0 {
		t.Fatalf("pull: exit %d: %s", code, errb)
	}
	got := decodeState(t, pulled)
	want := *local
	want.Serial = 2
	if !reflect.DeepEqual(got, &want) {
		t.Fatalf("pulled state differs from the pushed file:\n got %+v\nwant %+v", got, &want)
	}

	// Pushing the pulled state again changes nothing.
	if code := push(writeBytes(t, pulled), false); code != 0 || !strings.Contains(out.String(), "already holds this state (serial 2)") {
		t.Errorf("push of the same state: exit %d, stdout %q, stderr %q", code, out, errb)
	}

	// The older file (serial 1) would undo serial 2.
	if code := push(file, false); code != 1 || !strings.Contains(errb.String(), "holds a newer serial of this state (2)") {
		t.Errorf("push of an older serial: exit %d, stderr %q", code, errb)
	}

	// Same serial, other content: two copies went their own ways.
	diverged := *got
	diverged.Messages = map[string]*state.Message{}
	var buf bytes.Buffer
	if err := statefile.Encode(&buf, &diverged); err != nil {
		t.Fatal(err)
	}
	if code := push(writeBytes(t, buf.Bytes()), false); code != 1 || !strings.Contains(errb.String(), "went their own ways") {
		t.Errorf("push of a diverged copy: exit %d, stderr %q", code, errb)
	}

	// Another lineage is refused, then replaced with --force.
	other := statetest.Sample()
	other.Lineage = "another-lineage"
	delete(other.Messages, "campaign.c.badge.reset")
	otherFile, _ := writeStateFile(t, t.TempDir(), "other.state", other)
	if code := push(otherFile, false); code != 1 || !strings.Contains(errb.String(), "holds another state") || !strings.Contains(errb.String(), "--force") {
		t.Errorf("push of another lineage: exit %d, stderr %q", code, errb)
	}
	if code := push(otherFile, true); code != 0 || !strings.Contains(out.String(), "keeps the lineage of the state it replaced") {
		t.Fatalf("push --force: exit %d, stdout %q, stderr %q", code, out, errb)
	}
	_, pulled = pull()
	got = decodeState(t, pulled)
	if got.Lineage != local.Lineage || got.Serial != 3 || len(got.Messages) != 1 {
		t.Errorf("after push --force: lineage %s serial %d, %d addresses; want lineage %s, serial 3, the file's one address", got.Lineage, got.Serial, len(got.Messages), local.Lineage)
	}

	// Push takes the lock: refused while another run holds it.
	holder, err := pg.Open(ctx, o)
	if err != nil {
		t.Fatal(err)
	}
	defer holder.Close()
	id, err := holder.Lock(ctx, state.NewLockInfo("apply"))
	if err != nil {
		t.Fatal(err)
	}
	if code := push(otherFile, true); code != 1 || !strings.Contains(errb.String(), "state is locked by") || !strings.Contains(errb.String(), id) {
		t.Errorf("push while locked: exit %d, stderr %q", code, errb)
	}
	if err := holder.Unlock(id); err != nil {
		t.Fatal(err)
	}
}

// TestStatePushForceKeepsDeliveries: state pull > old.state, an apply
// delivers to more users, push --force of the old copy: the view is the
// old copy's, every delivery record stays, and the output says so.
func TestStatePushForceKeepsDeliveries(t *testing.T) {
	m, out, errb := stateTestMeta(t)
	dst := filepath.Join(m.Dir, "pushform.state")
	old, _ := writeStateFile(t, t.TempDir(), "old.state", readStateAt(t, dst))

	be, err := backend.OpenState(context.Background(), backend.StateOptions{Path: dst})
	if err != nil {
		t.Fatal(err)
	}
	at := time.Date(2026, 11, 24, 9, 0, 0, 0, time.UTC)
	c := message.Content{Title: "Big sale", Body: "For everyone"}
	users := []string{"v1", "v2", "v3"}
	if err := be.Append(
		state.Entry{Type: state.EntryIntent, Time: at, Items: []state.Item{{Address: "notification.big", Kind: message.KindNotification, TargetKind: message.TargetUsers, Fingerprint: "fp-big", Content: &c, Targets: users}}},
		state.Entry{Type: state.EntryOutcome, Time: at, RequestID: "req-big", Items: []state.Item{{Address: "notification.big", Fingerprint: "fp-big", Targets: users,
			Outcomes: []*state.Target{{Outcome: state.Delivered}, {Outcome: state.Delivered}, {Outcome: state.Delivered}}}}},
	); err != nil {
		t.Fatal(err)
	}
	be.Close()
	before := readStateAt(t, dst).RecordCount()

	if code := runState(context.Background(), m, []string{"push", "--force", old}); code != 0 {
		t.Fatalf("push --force: exit %d: %s", code, errb)
	}
	got := readStateAt(t, dst)
	if got.Messages["notification.big"] != nil {
		t.Error("the pushed copy's view should not hold notification.big")
	}
	if h := got.TargetHistory(message.TargetUsers, "v2"); len(h) != 1 || h[0].RequestID != "req-big" || !h[0].Forgotten {
		t.Fatalf("history of v2 after push --force: %+v", h)
	}
	if got.RecordCount() != before {
		t.Errorf("%d records after the push, the backend had %d", got.RecordCount(), before)
	}
	if want := "3 kept from"; !strings.Contains(out.String(), want) || !strings.Contains(out.String(), views.Count(before)+" in all") {
		t.Errorf("stdout %q; want %q", out, want)
	}
}
