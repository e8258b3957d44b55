package command

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"pushform/backend"
	"pushform/internal/testutil"
	"pushform/message"
	"pushform/planner"
	"pushform/state"
	"pushform/state/pg"
	"pushform/state/pg/pgtest"
)

// ledgerDay is the day the history fixtures start on.
var ledgerDay = time.Date(2026, 11, 20, 9, 0, 0, 0, time.UTC)

// sendEntries are the journal entries of one request as apply writes
// them: its intent, then every target's outcome.
func sendEntries(batch int64, at time.Time, req, addr string, c message.Content, outcomes map[string]state.Outcome) []state.Entry {
	return sendEntriesTo(message.TargetUsers, batch, at, req, addr, c, outcomes)
}

// sendEntriesTo is sendEntries to targets of kind tk.
func sendEntriesTo(tk message.TargetKind, batch int64, at time.Time, req, addr string, c message.Content, outcomes map[string]state.Outcome) []state.Entry {
	kind := message.KindNotification
	if c.Title == "" && c.BadgeCount != nil {
		kind = message.KindBadge
	}
	fp := planner.Fingerprint(kind, c)
	it := state.Item{Address: addr, Kind: kind, TargetKind: tk, Fingerprint: fp, Content: &c}
	out := state.Item{Address: addr, Fingerprint: fp}
	for _, id := range slices.Sorted(maps.Keys(outcomes)) {
		it.Targets = append(it.Targets, id)
		out.Targets = append(out.Targets, id)
		t := state.Target{Outcome: outcomes[id], DeviceCount: 1}
		switch outcomes[id] {
		case state.Failed:
			t.DeviceCount, t.Message = 0, "device token expired"
		case state.Skipped:
			t.DeviceCount, t.Reason = 0, "no_active_device"
		}
		out.Outcomes = append(out.Outcomes, &t)
	}
	return []state.Entry{
		{Type: state.EntryIntent, Batch: batch, Time: at, Items: []state.Item{it}},
		{Type: state.EntryOutcome, Batch: batch, Time: at.Add(2 * time.Second), RequestID: req, Status: 200, Items: []state.Item{out}},
	}
}

// aliceLedger is the journal of a state in which alice received three
// notifications under two addresses, one of them forgotten since:
// "Welcome" (notification.welcome), "Your 10% coupon" (notification.coupon,
// tagged, forgotten the next day), and "Welcome back" (notification.welcome
// edited), with bob and carol reached alongside.
func aliceLedger() []state.Entry {
	d := ledgerDay
	var es []state.Entry
	es = append(es, sendEntries(1, d, "req-0001", "notification.welcome",
		message.Content{Title: "Welcome", Body: "Glad you are here"},
		map[string]state.Outcome{"alice": state.Delivered, "bob": state.Delivered, "carol": state.Failed})...)
	es = append(es, sendEntries(2, d.Add(24*time.Hour), "req-0002", "notification.coupon",
		message.Content{Title: "Coupon", Body: "Your 10% coupon", Tag: "coupon-10"},
		map[string]state.Outcome{"alice": state.Delivered, "bob": state.Skipped})...)
	es = append(es, state.Entry{Type: state.EntryForget, Time: d.Add(47 * time.Hour), Items: []state.Item{{Address: "notification.coupon"}}})
	es = append(es, sendEntries(3, d.Add(72*time.Hour), "req-0003", "notification.welcome",
		message.Content{Title: "Welcome back", Body: "We missed you"},
		map[string]state.Outcome{"alice": state.Delivered})...)
	es = append(es, sendEntries(4, d.Add(72*time.Hour+time.Minute), "req-0004", "notification.welcome",
		message.Content{Title: "Welcome back", Body: "We missed you"},
		map[string]state.Outcome{"bob": state.Delivered, "carol": state.Delivered})...)
	three := 3
	es = append(es, sendEntriesTo(message.TargetDevices, 5, d.Add(73*time.Hour), "req-0005", "badge.unread",
		message.Content{BadgeCount: &three}, map[string]state.Outcome{"alice-phone": state.Delivered})...)
	es = append(es, sendEntriesTo(message.TargetTopics, 6, d.Add(74*time.Hour), "req-0006", "notification.deals",
		message.Content{Title: "Deals", Body: "Today only"}, map[string]state.Outcome{"deals": state.Delivered})...)
	return es
}

// ledgerDir writes a configuration directory (without a service block:
// history reads only the backend block) whose local state journal holds
// entries.
func ledgerDir(t *testing.T, entries []state.Entry) string {
	t.Helper()
	dir := testutil.WriteFiles(t, map[string]string{"main.hcl": "# history reads only the state\n"})
	be, err := backend.OpenState(context.Background(), backend.StateOptions{ConfigDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	defer be.Close()
	if err := be.Append(entries...); err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestHistoryGolden: what alice received, for people and as JSON, and what
// an address sent.
func TestHistoryGolden(t *testing.T) {
	dir := ledgerDir(t, aliceLedger())
	for _, c := range []struct {
		golden string
		args   []string
	}{
		{"history-user.txt", []string{"history", "--user", "alice"}},
		{"history-user.json", []string{"history", "--user", "alice", "--json"}},
		{"history-address.txt", []string{"history", "notification.welcome"}},
		{"history-address-forgotten.txt", []string{"history", "notification.coupon"}},
		{"history-address.json", []string{"history", "notification.coupon", "--json"}},
	} {
		code, out, errOut := runIn(t, dir, "", nil, c.args...)
		if code != ExitOK || errOut != "" {
			t.Fatalf("%v: exit %d, stderr %q", c.args, code, errOut)
		}
		if strings.HasSuffix(c.golden, ".json") && strings.Count(out, "\n") != 1 {
			t.Errorf("%v: not one line of JSON:\n%s", c.args, out)
		}
		testutil.Golden(t, filepath.Join("testdata", c.golden), []byte(out))
	}
}

// TestHistoryJSONFields decodes history --user --json: the contract other
// tools read.
func TestHistoryJSONFields(t *testing.T) {
	dir := ledgerDir(t, aliceLedger())
	_, out, _ := runIn(t, dir, "", nil, "history", "--user", "alice", "--json")
	var doc struct {
		FormatVersion string `json:"format_version"`
		TargetKind    string `json:"target_kind"`
		Target        string `json:"target"`
		Known         bool   `json:"known"`
		Deliveries    []struct {
			Time        time.Time  `json:"time"`
			Address     string     `json:"address"`
			Forgotten   bool       `json:"forgotten"`
			ForgottenAt *time.Time `json:"forgotten_at"`
			Content     struct {
				Title string `json:"title"`
				Tag   string `json:"tag"`
			} `json:"content"`
			Outcome   string `json:"outcome"`
			RequestID string `json:"request_id"`
		} `json:"deliveries"`
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatalf("%v:\n%s", err, out)
	}
	if doc.FormatVersion == "" || doc.TargetKind != "user_ids" || doc.Target != "alice" || !doc.Known || len(doc.Deliveries) != 3 {
		t.Fatalf("document: %+v", doc)
	}
	want := []struct {
		title, addr, req string
		forgotten        bool
	}{
		{"Welcome", "notification.welcome", "req-0001", false},
		{"Coupon", "notification.coupon", "req-0002", true},
		{"Welcome back", "notification.welcome", "req-0003", false},
	}
	for i, w := range want {
		d := doc.Deliveries[i]
		if d.Content.Title != w.title || d.Address != w.addr || d.RequestID != w.req || d.Forgotten != w.forgotten || d.Outcome != "delivered" {
			t.Errorf("delivery %d = %+v, want %+v", i, d, w)
		}
		if w.forgotten && (d.ForgottenAt == nil || !d.ForgottenAt.Equal(ledgerDay.Add(47*time.Hour))) {
			t.Errorf("delivery %d forgotten at %v", i, d.ForgottenAt)
		}
		if i > 0 && d.Time.Before(doc.Deliveries[i-1].Time) {
			t.Errorf("delivery %d is older than the one before: not oldest first", i)
		}
	}
	if doc.Deliveries[1].Content.Tag != "coupon-10" {
		t.Errorf("the coupon's tag is %q", doc.Deliveries[1].Content.Tag)
	}
}

// TestHistoryQueries covers the other targets, the window, and ids and
// addresses the ledger has never seen (exit 0, said so).
func TestHistoryQueries(t *testing.T) {
	dir := ledgerDir(t, aliceLedger())
	for _, c := range []struct {
		name string
		args []string
		want []string // in stdout, in order
		not  []string
		err  string // in stderr
	}{
		{"bob", []string{"--user", "bob"}, []string{"User \"bob\": 3 records under 2 addresses", "\"Welcome\"", "\"Coupon\"", "skipped", "\"Welcome back\"", "req-0004"}, nil, ""},
		{"since a date", []string{"--user", "alice", "--since", "2026-11-21"}, []string{"2 records under 2 addresses since 2026-11-21T00:00:00Z", "\"Coupon\"", "\"Welcome back\""}, []string{"req-0001"}, ""},
		{"until a date takes the whole day", []string{"--user", "alice", "--until", "2026-11-21"}, []string{"2 records under 2 addresses before 2026-11-22T00:00:00Z", "req-0001", "req-0002"}, []string{"req-0003"}, ""},
		{"RFC 3339 window", []string{"--user", "alice", "--since", "2026-11-21T09:00:02Z", "--until", "2026-11-21T09:00:03Z"}, []string{"1 record under 1 address from 2026-11-21T09:00:02Z to 2026-11-21T09:00:03Z", "req-0002"}, []string{"req-0001", "req-0003"}, ""},
		{"nothing in the window", []string{"--user", "alice", "--since", "2027-01-01"}, []string{"No record of user \"alice\" since 2027-01-01T00:00:00Z."}, nil, ""},
		{"unknown user", []string{"--user", "zoe"}, []string{"The ledger has no record of user \"zoe\": nothing was ever sent to it from this state."}, nil, ""},
		{"device", []string{"--device", "alice-phone"}, []string{"Device \"alice-phone\": 1 record under 1 address", "badge.unread", "badge", "badge 3", "req-0005"}, nil, ""},
		{"topic", []string{"--topic", "deals"}, []string{"Topic \"deals\": 1 record under 1 address", "notification.deals", "\"Deals\"", "req-0006"}, nil, ""},
		{"user id as device", []string{"--device", "alice"}, []string{"The ledger has no record of device \"alice\""}, nil, ""},
		{"unknown address", []string{"notification.welcom"}, []string{"The ledger has no record of notification.welcom"}, nil, "Did you mean notification.welcome?"},
		{"a user id as address", []string{"alice"}, []string{"The ledger has no record of alice"}, nil, "'pushform history --user \"alice\"' lists what it received"},
		{"address window", []string{"notification.welcome", "--since", "2026-11-22"}, []string{"1 apply since 2026-11-22T00:00:00Z (current)", "\"Welcome back\"", "req-0003, req-0004"}, []string{"req-0001"}, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			code, out, errOut := runIn(t, dir, "", nil, append([]string{"history"}, c.args...)...)
			if code != ExitOK {
				t.Fatalf("exit %d, stderr %q", code, errOut)
			}
			rest := out
			for _, w := range c.want {
				i := strings.Index(rest, w)
				if i < 0 {
					t.Fatalf("stdout lacks %q (in order):\n%s", w, out)
				}
				rest = rest[i+len(w):]
			}
			for _, n := range c.not {
				if strings.Contains(out, n) {
					t.Errorf("stdout has %q:\n%s", n, out)
				}
			}
			if !strings.Contains(errOut, c.err) {
				t.Errorf("stderr %q lacks %q", errOut, c.err)
			}
		})
	}
}

// TestHistoryUsageErrors: every refusal names what is wrong and exits 1.
func TestHistoryUsageErrors(t *testing.T) {
	dir := ledgerDir(t, aliceLedger())
	for _, c := range []struct {
		args []string
		want string
	}{
		{nil, "history needs --user ID, --device ID, --topic NAME or an address"},
		{[]string{"--user", "alice", "--device", "d"}, "--user and --device cannot be combined"},
		{[]string{"--user", "alice", "notification.welcome"}, "history takes an address or --user, not both"},
		{[]string{"a", "b"}, "history takes at most one address"},
		{[]string{"--user", ""}, "--user needs a non-empty id"},
		{[]string{"--user", "alice", "--since", "yesterday"}, `--since "yesterday" is neither an RFC 3339 time (2026-11-24T09:00:00Z) nor a date (2026-11-24)`},
		{[]string{"--user", "alice", "--until", "2026-11-31"}, `--until "2026-11-31" is neither`},
		{[]string{"--user", "alice", "--since", "2026-11-24", "--until", "2026-11-23"}, "--since 2026-11-24 is not before --until 2026-11-23"},
	} {
		code, out, errOut := runIn(t, dir, "", nil, append([]string{"history"}, c.args...)...)
		if code != ExitError || out != "" || !strings.HasPrefix(errOut, "Error: history") || !strings.Contains(errOut, c.want) {
			t.Errorf("%q: exit %d, stdout %q, stderr %q; want %q", c.args, code, out, errOut, c.want)
		}
	}
}

// TestHistoryNoState: no state at all is an empty ledger, not an error.
func TestHistoryNoState(t *testing.T) {
	dir := testutil.WriteFiles(t, map[string]string{"main.hcl": "\n"})
	code, out, errOut := runIn(t, dir, "", nil, "history", "--user", "alice", "--json")
	if code != ExitOK || errOut != "" || !strings.Contains(out, `"known":false`) || !strings.Contains(out, `"deliveries":[]`) {
		t.Errorf("exit %d, stdout %q, stderr %q", code, out, errOut)
	}
}

// TestHistoryHostileText: titles, tags, ids and request ids from the
// configuration or the service reach the terminal escaped.
func TestHistoryHostileText(t *testing.T) {
	evil := "\x1b[2J\x1b]0;owned\x07"
	es := sendEntries(1, ledgerDay, "req-"+evil, "notification.x", message.Content{Title: "T" + evil, Body: "b", Tag: "g" + evil},
		map[string]state.Outcome{"u" + evil: state.Delivered})
	dir := ledgerDir(t, es)
	for _, args := range [][]string{{"history", "--user", "u" + evil}, {"history", "notification.x"}} {
		code, out, errOut := runIn(t, dir, "", nil, args...)
		if code != ExitOK || controlChar.MatchString(out) || controlChar.MatchString(errOut) || !strings.Contains(out, `\x1b[2J`) {
			t.Errorf("%q: exit %d, output not escaped:\n%q\n%q", args, code, out, errOut)
		}
	}
}

// TestHistoryPostgreSQL: the same history from a state kept in PostgreSQL.
func TestHistoryPostgreSQL(t *testing.T) {
	o := pgtest.Options(t)
	be, err := pg.Open(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	if err := be.Append(aliceLedger()...); err != nil {
		t.Fatal(err)
	}
	be.Close()
	block := fmt.Sprintf("backend \"pg\" {\n  schema_name = %q\n  state_name  = %q\n}\n", o.Schema, o.StateName)
	dir := testutil.WriteFiles(t, map[string]string{"main.hcl": block})
	env := []string{"PUSHFORM_PG_CONN_STR=" + o.ConnString}
	code, out, errOut := runIn(t, dir, "", env, "history", "--user", "alice")
	if code != ExitOK || errOut != "" {
		t.Fatalf("exit %d, stderr %q", code, errOut)
	}
	local := ledgerDir(t, aliceLedger())
	_, want, _ := runIn(t, local, "", nil, "history", "--user", "alice")
	if out != want {
		t.Errorf("history from PostgreSQL differs from the local file's:\n%s\n---\n%s", out, want)
	}
}

// TestHistoryAddressBack: an address forgotten and then added back is
// current, and its history shows the forgetting between its applies.
func TestHistoryAddressBack(t *testing.T) {
	es := aliceLedger()
	es = append(es, sendEntries(5, ledgerDay.Add(96*time.Hour), "req-0005", "notification.coupon",
		message.Content{Title: "Coupon", Body: "Your 15% coupon", Tag: "coupon-10"}, map[string]state.Outcome{"alice": state.Delivered})...)
	dir := ledgerDir(t, es)
	code, out, _ := runIn(t, dir, "", nil, "history", "notification.coupon")
	want := []string{"notification.coupon: 2 applies (current)", "req-0002", "2026-11-22T08:00:00Z  forgotten: 2 targets out of the configuration's view", "req-0005"}
	rest := out
	for _, w := range want {
		i := strings.Index(rest, w)
		if code != ExitOK || i < 0 {
			t.Fatalf("exit %d; stdout lacks %q (in order):\n%s", code, w, out)
		}
		rest = rest[i+len(w):]
	}
	_, out, _ = runIn(t, dir, "", nil, "history", "--user", "alice")
	if !strings.Contains(out, "4 records under 2 addresses") {
		t.Errorf("history --user alice:\n%s", out)
	}
	for _, line := range strings.Split(out, "\n") {
		// The first coupon's record is of the forgetting; the second is current.
		if strings.Contains(line, "req-0002") != strings.Contains(line, "(forgotten)") && strings.Contains(line, "notification.coupon") {
			t.Errorf("line %q", line)
		}
	}
}

// TestHistoryDamagedState: a damaged journal is reported as every command
// reports it, with the way to repair it, not read as an empty ledger.
func TestHistoryDamagedState(t *testing.T) {
	dir := ledgerDir(t, aliceLedger())
	path := filepath.Join(dir, "pushform.state.journal")
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	data[len(data)-10] ^= 0x20
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := runIn(t, dir, "", nil, "history", "--user", "alice")
	if code != ExitError || out != "" || !strings.Contains(errOut, "is corrupt") || !strings.Contains(errOut, "pushform state repair") {
		t.Errorf("exit %d, stdout %q, stderr %q", code, out, errOut)
	}
}

// TestHistoryAlreadyDelivered: a target an address did not send because
// the ledger showed it had the content (apply records it so) is listed
// with the address that delivered it, and counted apart.
func TestHistoryAlreadyDelivered(t *testing.T) {
	es := aliceLedger()
	back := message.Content{Title: "Welcome back", Body: "We missed you"}
	fp := planner.Fingerprint(message.KindNotification, back)
	es = append(es, state.Entry{Type: state.EntryRecord, Time: ledgerDay.Add(96 * time.Hour), Items: []state.Item{{
		Address: "notification.welcome_copy", Kind: message.KindNotification, TargetKind: message.TargetUsers, Fingerprint: fp, Content: &back,
		Targets:  []string{"alice"},
		Outcomes: []*state.Target{{Outcome: state.AlreadyDelivered, Fingerprint: fp, RequestID: "req-0003", Time: ledgerDay.Add(72*time.Hour + 2*time.Second), Reason: "notification.welcome"}},
	}}})
	dir := ledgerDir(t, es)
	_, out, _ := runIn(t, dir, "", nil, "history", "--user", "alice")
	if !strings.Contains(out, "notification.welcome_copy") || !strings.Contains(out, "already delivered (under notification.welcome)  req-0003") {
		t.Errorf("history --user alice:\n%s", out)
	}
	_, out, _ = runIn(t, dir, "", nil, "history", "notification.welcome_copy")
	if !strings.Contains(out, "UNKNOWN  ALREADY DELIVERED  REQUEST IDS") || !strings.Contains(out, `"Welcome back"  0          0       0        0        1                  req-0003`) {
		t.Errorf("history notification.welcome_copy:\n%s", out)
	}
	_, out, _ = runIn(t, dir, "", nil, "history", "notification.welcome_copy", "--json")
	if !strings.Contains(out, `"already-delivered":1`) {
		t.Errorf("history notification.welcome_copy --json:\n%s", out)
	}
}
