package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"pushform/internal/testutil"
	sbx "pushform/sandbox"
	"pushform/state"
)

// exampleDevice is the part of `pushform sandbox show --json` the test reads.
type exampleDevice struct {
	DeviceID string `json:"deviceId"`
	UserID   string `json:"userId"`
	Badge    int    `json:"badge"`
	Received int    `json:"received"`
	Inbox    []struct {
		Title, Tag string
	} `json:"inbox"`
	Pending []struct {
		Title, Tag string
	} `json:"pending"`
}

// shows reports whether the device shows (or holds, offline) title.
func (d exampleDevice) shows(title string) bool {
	for _, e := range append(d.Inbox, d.Pending...) {
		if e.Title == title {
			return true
		}
	}
	return false
}

// TestExamples applies every example as the README tells users to (its
// plans validated against docs/plan-json.schema.json), then
// checks what its devices received: against the state (every delivered
// target shows the notification or badge on its device, no device shows
// what the state does not record, no skipped user's device shows it) and
// against a golden file of every device's badge and inbox
// (testdata/examples/NAME.golden, -update rewrites). A second plan has no
// changes. Examples can never rot.
func TestExamples(t *testing.T) {
	dirs, err := filepath.Glob("../examples/*/main.hcl")
	if err != nil || len(dirs) < 3 {
		t.Fatalf("examples: %v %v", dirs, err)
	}
	for _, mainFile := range dirs {
		src := filepath.Dir(mainFile)
		name := filepath.Base(src)
		t.Run(name, func(t *testing.T) {
			w := &workspace{t: t, dir: t.TempDir(), env: append(os.Environ(), "NO_COLOR=1")}
			if err := os.CopyFS(w.dir, os.DirFS(src)); err != nil {
				t.Fatal(err)
			}
			for _, leftover := range []string{"pushform.state", "pushform.sandbox.json", "pushform.state.backup", "pushform.state.journal"} {
				os.Remove(filepath.Join(w.dir, leftover))
			}
			w.env = append(w.env, pgExample(t, w.dir)...)
			proc := rehearsalSandbox(t, w)
			w.mustRun(0, "validate")
			// Its plans, before and after the apply, are what
			// docs/plan-json.schema.json describes.
			testutil.ValidatePlanJSON(t, []byte(w.mustRun(0, "plan", "--json").stdout))
			r := w.mustRun(0, "apply", "--auto-approve")
			if !strings.Contains(r.stdout, "Apply complete") {
				t.Fatalf("apply:\n%s", r.stdout)
			}
			devs := exampleDevices(t, w, proc)
			checkExampleDevices(t, w.readState(), devs)
			testutil.Golden(t, filepath.Join("testdata", "examples", name+".golden"), []byte(renderDevices(devs)))
			r = w.mustRun(0, "plan", "--detailed-exitcode")
			if !strings.Contains(r.stdout, "No changes.") {
				t.Fatalf("second plan:\n%s", r.stdout)
			}
			testutil.ValidatePlanJSON(t, []byte(w.mustRun(0, "plan", "--json").stdout))
		})
	}
}

// rehearsalSandbox starts `pushform sandbox` for an example whose
// configuration names the real service (a production configuration): from
// its rehearsal seed, sandbox/seed.hcl, and points w at it with the seed's
// key, as the example's rehearsal job does. nil for an example that runs
// against the embedded sandbox.
func rehearsalSandbox(t *testing.T, w *workspace) *sandbox {
	t.Helper()
	seedFile := filepath.Join(w.dir, "sandbox", "seed.hcl")
	src, err := os.ReadFile(seedFile)
	if err != nil {
		return nil
	}
	seed, diags := sbx.ParseSeed(seedFile, src)
	if diags.HasErrors() || len(seed.APIKeys) != 1 {
		t.Fatalf("%s: want one api_key block: %v", seedFile, diags)
	}
	proc := startSandbox(t, string(src), "--quiet")
	w.env = append(w.env, "PUSHFORM_BASE_URL="+proc.base, "PUSHFORM_API_KEY="+seed.APIKeys[0].Key)
	return proc
}

// exampleDevices reads every device the sandbox recorded, through
// `pushform sandbox show --json` as a user would: the embedded sandbox's
// file, or the rehearsal sandbox proc when there is one.
func exampleDevices(t *testing.T, w *workspace, proc *sandbox) map[string]exampleDevice {
	t.Helper()
	var ids []string
	var show []string
	if proc != nil {
		var v struct {
			DeviceIDs []string `json:"deviceIds"`
		}
		proc.get("/_sandbox/devices", &v)
		ids, show = v.DeviceIDs, []string{"--addr", proc.root}
	} else {
		data, err := os.ReadFile(filepath.Join(w.dir, "pushform.sandbox.json"))
		if err != nil {
			t.Fatalf("the embedded sandbox kept no devices: %v", err)
		}
		var file struct {
			Devices []struct {
				DeviceID string `json:"deviceId"`
			} `json:"devices"`
		}
		if err := json.Unmarshal(data, &file); err != nil {
			t.Fatal(err)
		}
		for _, d := range file.Devices {
			ids = append(ids, d.DeviceID)
		}
	}
	devs := map[string]exampleDevice{}
	for _, id := range ids {
		r := w.mustRun(0, append([]string{"sandbox", "show", id, "--json"}, show...)...)
		var v exampleDevice
		if err := json.Unmarshal([]byte(r.stdout), &v); err != nil {
			t.Fatalf("sandbox show %s --json: %v\n%s", id, err, r.stdout)
		}
		devs[v.DeviceID] = v
	}
	if len(devs) == 0 {
		t.Fatal("no device received anything")
	}
	return devs
}

// checkExampleDevices checks the devices against the state.
func checkExampleDevices(t *testing.T, st *state.State, devs map[string]exampleDevice) {
	t.Helper()
	titles := map[string]bool{}
	for _, addr := range st.Addresses() {
		m := st.Messages[addr]
		isBadge := m.Kind == "badge"
		for id, tg := range m.Targets {
			title := m.Content.Title
			if tx, ok := st.TextOf(tg.Fingerprint, m.TargetKind, id); ok {
				title = tx.Title // what this person was sent of a template
			}
			if !isBadge && title != "" && (!m.Content.Personal() || tg.Outcome == state.Delivered) {
				titles[title] = true // a holdout records no content of its own
			}
			// got reports whether device d shows what m sent.
			got := func(d exampleDevice) bool {
				if isBadge {
					return m.Content.BadgeCount != nil && d.Badge == *m.Content.BadgeCount
				}
				return d.shows(title)
			}
			var mine []exampleDevice // the target's devices that received anything
			for _, d := range devs {
				switch m.TargetKind {
				case "user_ids":
					if d.UserID == id {
						mine = append(mine, d)
					}
				case "device_ids":
					if d.DeviceID == id {
						mine = append(mine, d)
					}
				default: // topics: membership is in the seed, not the devices
					mine = append(mine, d)
				}
			}
			shown := slices.ContainsFunc(mine, got)
			switch {
			case tg.Outcome == state.Delivered && !shown:
				t.Errorf("%s -> %s is delivered in the state, but no device of it shows it", addr, id)
			case tg.Outcome == state.Skipped && shown && m.TargetKind == "user_ids" && !isBadge:
				t.Errorf("%s -> %s is skipped in the state, but a device of it shows it", addr, id)
			case tg.Outcome == state.Holdout && len(mine) > 0 && title != "" && shown:
				t.Errorf("%s -> %s is held out, but a device of it shows it", addr, id)
			case tg.Outcome == state.Unfilled && len(mine) > 0:
				t.Errorf("%s -> %s is held (text not filled in), but a device of it received something", addr, id)
			case tg.Outcome != state.Delivered && tg.Outcome != state.Skipped && tg.Outcome != state.Holdout && tg.Outcome != state.Unfilled:
				t.Errorf("%s -> %s: outcome %s after a clean apply", addr, id, tg.Outcome)
			}
		}
	}
	for _, d := range devs {
		for _, e := range append(d.Inbox, d.Pending...) {
			if !titles[e.Title] {
				t.Errorf("%s shows %q, which the state records for no address", d.DeviceID, e.Title)
			}
		}
	}
}

// renderDevices lists every device's badge, received count, inbox and
// pending notifications, sorted by device id. A device's notifications
// are sorted too: those of one apply arrive in parallel requests, in any
// order.
func renderDevices(devs map[string]exampleDevice) string {
	ids := make([]string, 0, len(devs))
	for id := range devs {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	var b strings.Builder
	for _, id := range ids {
		d := devs[id]
		fmt.Fprintf(&b, "%s (user %q): badge %d, received %d\n", id, d.UserID, d.Badge, d.Received)
		var lines []string
		for _, e := range d.Inbox {
			lines = append(lines, fmt.Sprintf("  shows   %q tag %q\n", e.Title, e.Tag))
		}
		for _, e := range d.Pending {
			lines = append(lines, fmt.Sprintf("  pending %q tag %q\n", e.Title, e.Tag))
		}
		slices.Sort(lines)
		b.WriteString(strings.Join(lines, ""))
	}
	return b.String()
}
