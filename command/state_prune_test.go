package command

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"pushform/internal/testutil"
	"pushform/message"
	"pushform/state"
	"pushform/state/local"
	"pushform/state/pg"
	"pushform/state/pg/pgtest"
)

// pruneLedger is a ledger relative to now: alice received "Welcome" 30
// days ago, its edit "Welcome back" 2 days ago (the first record stays in
// the ledger), and "Coupon" 3 days ago under an address forgotten a day
// ago. The ledger (beside the addresses' view) holds 2 records: 30 and 3
// days old.
func pruneLedger(now time.Time) []state.Entry {
	day := 24 * time.Hour
	var es []state.Entry
	es = append(es, sendEntries(1, now.Add(-30*day), "req-1", "notification.welcome",
		message.Content{Title: "Welcome", Body: "Hello"}, map[string]state.Outcome{"alice": state.Delivered})...)
	es = append(es, sendEntries(2, now.Add(-3*day), "req-2", "notification.coupon",
		message.Content{Title: "Coupon", Body: "10% off"}, map[string]state.Outcome{"alice": state.Delivered})...)
	es = append(es, sendEntries(3, now.Add(-2*day), "req-3", "notification.welcome",
		message.Content{Title: "Welcome back", Body: "Hello again"}, map[string]state.Outcome{"alice": state.Delivered})...)
	es = append(es, state.Entry{Type: state.EntryForget, Time: now.Add(-day), Items: []state.Item{{Address: "notification.coupon"}}})
	return es
}

const pruneService = "service {\n  environment = \"test\"\n}\n"

func TestStatePrune(t *testing.T) {
	now := time.Now().UTC().Truncate(time.Second)
	date := func(d time.Duration) string { return now.Add(d).Format(time.RFC3339) }
	day := 24 * time.Hour
	for _, c := range []struct {
		name    string
		config  string
		args    []string
		code    int
		out     string // in stdout
		errOut  string // in stderr
		history int    // alice's records afterwards
	}{
		{"nothing needs them", pruneService, []string{"--before", date(-10 * day)}, ExitOK,
			"Dropped 1 ledger record older than " + date(-10*day) + " from the ledger", "", 2},
		{"all unneeded", pruneService, []string{"--before", date(-time.Hour)}, ExitOK, "Dropped 2 ledger records", "", 1},
		{"nothing that old", pruneService, []string{"--before", "2020-01-01"}, ExitOK,
			"The ledger holds no record older than 2020-01-01T00:00:00Z: nothing was dropped.", "", 3},
		{"a frequency cap needs one", pruneService + "frequency_cap {\n  max = 3\n  per = \"7d\"\n}\n", []string{"--before", date(-time.Hour)}, ExitError,
			"", "would drop 1 ledger record that the configuration still needs: the frequency_cap (", 3},
		{"forced", pruneService + "frequency_cap {\n  max = 3\n  per = \"7d\"\n}\n", []string{"--before", date(-time.Hour), "--force"}, ExitOK,
			"Dropped 2 ledger records", "Warning: dropping 1 ledger record that the frequency_cap", 1},
		{"a repeat_after needs both", pruneService + "campaign \"c\" {\n  frequency_cap {\n    max = 1\n    per = \"1h\"\n  }\n  notification \"n\" {\n    user_ids = [\"bob\"]\n    title = \"t\"\n    body = \"b\"\n    repeat_after = \"60d\"\n  }\n}\n",
			[]string{"--before", date(-time.Hour)}, ExitError, "", "would drop 2 ledger records that the configuration still needs: the repeat_after of campaign.c.notification.n looks back 60d", 3},
		{"a campaign frequency cap", pruneService + "campaign \"c\" {\n  frequency_cap {\n    max = 1\n    per = \"5d\"\n  }\n}\n",
			[]string{"--before", date(-time.Hour)}, ExitError, "", "the frequency_cap of campaign \"c\" (", 3},
		{"older records may go", pruneService + "frequency_cap {\n  max = 3\n  per = \"7d\"\n}\n", []string{"--before", date(-10 * day)}, ExitOK, "Dropped 1 ledger record", "", 2},
		{"a future time", pruneService, []string{"--before", date(day)}, ExitError,
			"", "state prune --before " + date(day) + " is in the future (it is ", 3},
		{"a future time, forced", pruneService, []string{"--before", date(day), "--force"}, ExitOK,
			"Dropped 2 ledger records", "Warning: pruning up to " + date(day) + ", a time in the future (--force).", 1},
		{"broken configuration", pruneService + "notification \"n\" {\n}\n", []string{"--before", date(-10 * day)}, ExitError,
			"", "fix the configuration, or pass --force", 3},
		{"broken configuration, forced", pruneService + "notification \"n\" {\n}\n", []string{"--before", date(-10 * day), "--force"}, ExitOK,
			"Dropped 1 ledger record", "", 2},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := ledgerDir(t, pruneLedger(now))
			testutil.WriteFile(t, dir, "main.hcl", c.config)
			code, out, errOut := runIn(t, dir, "", nil, append([]string{"state", "prune"}, c.args...)...)
			if code != c.code || !strings.Contains(out, c.out) || !strings.Contains(errOut, c.errOut) {
				t.Fatalf("exit %d (want %d)\nstdout: %s\nstderr: %s\nwant %q / %q", code, c.code, out, errOut, c.out, c.errOut)
			}
			_, hist, _ := runIn(t, dir, "", nil, "history", "--user", "alice")
			if want := fmt.Sprintf("User \"alice\": %s under", countNoun(c.history, "record", "records")); !strings.Contains(hist, want) {
				t.Errorf("history afterwards, want %q:\n%s", want, hist)
			}
		})
	}
}

func countNoun(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprint(n) + " " + many
}

// TestStatePruneYoungRecords: a record younger than a day is dropped only
// with --force, whatever the configuration looks back over; the older
// ones may go without it.
func TestStatePruneYoungRecords(t *testing.T) {
	now := time.Now().UTC()
	es := append(pruneLedger(now), sendEntries(4, now.Add(-2*time.Hour), "req-4", "notification.flash",
		message.Content{Title: "Flash", Body: "Today only"}, map[string]state.Outcome{"alice": state.Delivered})...)
	es = append(es, state.Entry{Type: state.EntryForget, Time: now.Add(-time.Hour), Items: []state.Item{{Address: "notification.flash"}}})
	dir := ledgerDir(t, es)
	testutil.WriteFile(t, dir, "main.hcl", pruneService)
	before := now.Add(-time.Minute).Format(time.RFC3339)
	code, out, errOut := runIn(t, dir, "", nil, "state", "prune", "--before", before)
	if code != ExitError || out != "" || !strings.Contains(errOut, "would drop 1 ledger record younger than a day (recorded after ") ||
		!strings.Contains(errOut, "pass --force") {
		t.Fatalf("prune of a record 2 hours old: exit %d\nstdout: %s\nstderr: %s", code, out, errOut)
	}
	dayAgo := now.Add(-24 * time.Hour).Format(time.RFC3339)
	if code, out, errOut := runIn(t, dir, "", nil, "state", "prune", "--before", dayAgo); code != ExitOK || !strings.Contains(out, "Dropped 2 ledger records") {
		t.Fatalf("prune of the records older than a day: exit %d\nstdout: %s\nstderr: %s", code, out, errOut)
	}
	code, out, errOut = runIn(t, dir, "", nil, "state", "prune", "--before", before, "--force")
	if code != ExitOK || !strings.Contains(out, "Dropped 1 ledger record") || !strings.Contains(errOut, "Warning: dropping 1 ledger record younger than a day (--force).") {
		t.Fatalf("forced: exit %d\nstdout: %s\nstderr: %s", code, out, errOut)
	}
}

func TestStatePruneRefusals(t *testing.T) {
	dir := ledgerDir(t, pruneLedger(time.Now().UTC()))
	testutil.WriteFile(t, dir, "main.hcl", pruneService)
	for _, c := range []struct {
		args []string
		want string
	}{
		{nil, "Error: state prune needs --before TIME: the ledger is kept whole unless you say up to when to drop it\n"},
		{[]string{"--before", "last year"}, `Error: state prune: --before "last year" is neither an RFC 3339 time`},
		{[]string{"--before", "2026-01-01", "x"}, "state prune takes no arguments"},
		{[]string{"--before", "2026-01-01", "--state", "none.state"}, "Error: no state at "},
	} {
		code, out, errOut := runIn(t, dir, "", nil, append([]string{"state", "prune"}, c.args...)...)
		if code != ExitError || out != "" || !strings.Contains(errOut, c.want) {
			t.Errorf("%q: exit %d, stdout %q, stderr %q; want %q", c.args, code, out, errOut, c.want)
		}
	}
}

// TestStatePrunePostgreSQL: prune under the lock of a state kept in
// PostgreSQL, persisted there.
func TestStatePrunePostgreSQL(t *testing.T) {
	o := pgtest.Options(t)
	be, err := pg.Open(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now().UTC()
	if err := be.Append(pruneLedger(now)...); err != nil {
		t.Fatal(err)
	}
	be.Close()
	block := fmt.Sprintf("backend \"pg\" {\n  schema_name = %q\n  state_name  = %q\n}\n", o.Schema, o.StateName)
	dir := testutil.WriteFiles(t, map[string]string{"main.hcl": pruneService + block})
	env := []string{"PUSHFORM_PG_CONN_STR=" + o.ConnString}
	before := now.Add(-10 * 24 * time.Hour).Format(time.DateOnly)
	code, out, errOut := runIn(t, dir, "", env, "state", "prune", "--before", before)
	if code != ExitOK || !strings.Contains(out, "Dropped 1 ledger record") {
		t.Fatalf("exit %d\nstdout: %s\nstderr: %s", code, out, errOut)
	}
	_, hist, _ := runIn(t, dir, "", env, "history", "--user", "alice")
	if !strings.Contains(hist, "User \"alice\": 2 records under 2 addresses") || strings.Contains(hist, "req-1") {
		t.Errorf("history after prune:\n%s", hist)
	}
	if code, out, _ := runIn(t, dir, "", env, "state", "prune", "--before", before); code != ExitOK || !strings.Contains(out, "nothing was dropped") {
		t.Errorf("second prune: exit %d, %s", code, out)
	}
}

// TestStatePruneLocked: prune takes the state lock, and a held lock
// refuses it, naming the holder.
func TestStatePruneLocked(t *testing.T) {
	dir := ledgerDir(t, pruneLedger(time.Now().UTC()))
	testutil.WriteFile(t, dir, "main.hcl", pruneService)
	f := local.NewFile(filepath.Join(dir, "pushform.state"))
	id, err := f.Lock(context.Background(), state.NewLockInfo("apply"))
	if err != nil {
		t.Fatal(err)
	}
	code, _, errOut := runIn(t, dir, "", nil, "state", "prune", "--before", "2026-01-01", "--lock-timeout", "10ms")
	if code != ExitError || !strings.Contains(errOut, "state is locked by ") || !strings.Contains(errOut, "lock id "+id) {
		t.Errorf("prune while locked: exit %d, stderr %q", code, errOut)
	}
	f.Unlock(id)
	// history only reads: a held lock does not stop it.
	id, err = f.Lock(context.Background(), state.NewLockInfo("apply"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Unlock(id)
	if code, out, errOut := runIn(t, dir, "", nil, "history", "--user", "alice"); code != ExitOK || !strings.Contains(out, "3 records") {
		t.Errorf("history while locked: exit %d\n%s%s", code, out, errOut)
	}
}

// TestHistoryCLIArgsEnv: PUSHFORM_CLI_ARGS_history and
// PUSHFORM_CLI_ARGS_state_prune add arguments, as for every command.
func TestHistoryCLIArgsEnv(t *testing.T) {
	dir := ledgerDir(t, pruneLedger(time.Now().UTC()))
	testutil.WriteFile(t, dir, "main.hcl", pruneService)
	code, out, _ := runIn(t, dir, "", []string{"PUSHFORM_CLI_ARGS_history=--json"}, "history", "--user", "alice")
	if code != ExitOK || !strings.HasPrefix(out, `{"format_version":"1"`) {
		t.Errorf("history with PUSHFORM_CLI_ARGS_history: exit %d\n%s", code, out)
	}
	code, _, errOut := runIn(t, dir, "", []string{"PUSHFORM_CLI_ARGS_state_prune=--befor 2026-01-01"}, "state", "prune")
	if code != ExitError || !strings.Contains(errOut, "unknown flag --befor (did you mean --before?)") || !strings.Contains(errOut, "PUSHFORM_CLI_ARGS_state_prune") {
		t.Errorf("state prune with PUSHFORM_CLI_ARGS_state_prune: exit %d\n%s", code, errOut)
	}
}

// FuzzParseHistoryTime: any text is a time or an error naming the flag;
// a date is a whole UTC day, --until's end the next day's start.
func FuzzParseHistoryTime(f *testing.F) {
	for _, s := range []string{"2026-11-24", "2026-11-24T09:00:00Z", "2026-11-24T09:00:00+02:00", "2026-02-30", "yesterday", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		since, err := parseHistoryTime("--since", s, false)
		until, err2 := parseHistoryTime("--until", s, true)
		if (err == nil) != (err2 == nil) {
			t.Fatalf("%q: --since %v, --until %v", s, err, err2)
		}
		if err != nil {
			if !strings.HasPrefix(err.Error(), "--since ") || !strings.HasPrefix(err2.Error(), "--until ") {
				t.Fatalf("%q: errors %v / %v do not name the flag", s, err, err2)
			}
			return
		}
		if since.Location() != time.UTC || until.Location() != time.UTC {
			t.Fatalf("%q: not UTC: %v %v", s, since, until)
		}
		if d, derr := time.Parse(time.DateOnly, s); derr == nil {
			if !since.Equal(d) || !until.Equal(d.AddDate(0, 0, 1)) {
				t.Fatalf("%q: since %v until %v", s, since, until)
			}
		} else if !since.Equal(until) {
			t.Fatalf("%q: an RFC 3339 time reads differently for --since and --until: %v %v", s, since, until)
		}
	})
}
