package e2e

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"pushform/internal/testutil"
	"pushform/state"
	"pushform/state/local"
)

// fullDiskCampaign: an untagged notification to s0000..s1499 and a tagged
// one to s1500..s2999 (six requests of 500), plus the one-user warm-up
// that created the state.
const fullDiskCampaign = `
notification "warmup" {
  user_ids = ["alice"]
  title    = "W"
  body     = "warm-up"
}

notification "a_untagged" {
  user_ids = flatten([for a in range(3) : [for b in range(500) : format("s%04d", a * 500 + b)]])
  title    = "U"
  body     = "untagged"
}

notification "b_tagged" {
  user_ids = flatten([for a in range(3, 6) : [for b in range(500) : format("s%04d", a * 500 + b)]])
  title    = "T"
  body     = "tagged"
  tag      = "t"
}
`

// fillDisk fills dir's file system, then frees free bytes of it; it returns
// the filler's path.
func fillDisk(t *testing.T, dir string, free int64) string {
	t.Helper()
	path := filepath.Join(dir, "filler")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	block := make([]byte, 512)
	for {
		if _, err := f.Write(block); err != nil {
			if !errors.Is(err, syscall.ENOSPC) {
				t.Fatal(err)
			}
			break
		}
	}
	fi, _ := f.Stat()
	if err := f.Truncate(fi.Size() - free); err != nil {
		t.Fatal(err)
	}
	return path
}

var (
	stoppedLine   = regexp.MustCompile(`Apply stopped \(a write to the state journal failed\): ([\d,]+) delivered, 0 skipped, 0 failed, 0 unknown`)
	answeredLine  = regexp.MustCompile(`not recorded: ([\d,]+) targets answered \(([\d,]+) delivered,`)
	neverSentLine = regexp.MustCompile(`not recorded: ([\d,]+) targets never sent`)
)

func atoiCommas(t *testing.T, s string) int {
	t.Helper()
	n, err := strconv.Atoi(strings.ReplaceAll(s, ",", ""))
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// TestFullDisk runs apply with its state on a 64 KiB tmpfs that is full but
// for two pages: the lock info takes one, the journal's first page holds
// the intents of the first requests, and the first outcome that does not
// fit fails (issue 16 item 4). The run must report that failure first,
// print the summary of what reached devices (counting the answers it could
// not record), report the failed snapshot second, leave a state that
// reads, and converge once space is free, with no untagged notification
// shown twice.
func TestFullDisk(t *testing.T) {
	for _, jsonOut := range []bool{false, true} {
		t.Run(map[bool]string{false: "human", true: "json"}[jsonOut], func(t *testing.T) {
			disk := testutil.SmallDisk(t, 64<<10)
			sb := startSandbox(t, slowSeed)
			statePath := filepath.Join(disk, "pushform.state")
			w := newWorkspace(t, sb, `
notification "warmup" {
  user_ids = ["alice"]
  title    = "W"
  body     = "warm-up"
}
`)
			w.apply("--state", statePath)
			w.write(fullDiskCampaign, sb)
			filler := fillDisk(t, disk, 2*4096)
			before := sb.stats().Deliveries

			args := []string{"apply", "--auto-approve", "--parallelism", "1", "--state", statePath}
			if jsonOut {
				args = append(args, "--json")
			}
			r := w.mustRun(1, args...)
			sent := sb.stats().Deliveries - before
			if sent == 0 {
				t.Fatalf("nothing was sent:\n%s\n%s", r.stdout, r.stderr)
			}

			// The journal failure is the first error; the failed snapshot
			// comes second.
			errLines := regexp.MustCompile(`(?m)^Error: .*`).FindAllString(r.stderr, -1)
			if len(errLines) != 2 || !strings.HasPrefix(errLines[0], "Error: writing the state journal: write "+statePath+".journal: no space left on device") ||
				!strings.HasPrefix(errLines[1], "Error: saving the state failed too: ") {
				t.Fatalf("errors, first the journal's then the snapshot's:\n%s", r.stderr)
			}
			for _, want := range []string{
				"Recorded: every intent and outcome whose journal write succeeded; they are in the journal of the state " + statePath + ", which the next run reads back.",
				"untagged ones are held (--retry-unknown sends them)",
			} {
				if !strings.Contains(r.stderr, want) {
					t.Errorf("stderr lacks %q:\n%s", want, r.stderr)
				}
			}

			// The summary says what reached devices, recorded or not.
			var delivered, unrecorded, neverSent int
			if jsonOut {
				var sum struct {
					Type         string         `json:"type"`
					Counts       map[string]int `json:"counts"`
					JournalError string         `json:"journal_error"`
					Unrecorded   map[string]int `json:"unrecorded"`
				}
				lines := strings.Split(strings.TrimSpace(r.stdout), "\n")
				if err := json.Unmarshal([]byte(lines[len(lines)-1]), &sum); err != nil || sum.Type != "summary" {
					t.Fatalf("last line is not the summary: %v\n%s", err, r.stdout)
				}
				if !strings.Contains(sum.JournalError, "no space left on device") {
					t.Errorf("journal_error %q", sum.JournalError)
				}
				delivered, unrecorded, neverSent = sum.Counts["delivered"], sum.Unrecorded["delivered"], sum.Unrecorded["not_sent"]
			} else {
				m := stoppedLine.FindStringSubmatch(r.stdout)
				a := answeredLine.FindStringSubmatch(r.stdout)
				if m == nil || a == nil {
					t.Fatalf("no summary of what was sent:\n%s", r.stdout)
				}
				delivered, unrecorded = atoiCommas(t, m[1]), atoiCommas(t, a[2])
				if n := neverSentLine.FindStringSubmatch(r.stdout); n != nil {
					neverSent = atoiCommas(t, n[1])
				}
				if !strings.Contains(r.stderr, fmt.Sprintf("the outcomes of %s targets (%s delivered): their answers arrived, but writing them to the journal failed",
					a[1], a[2])) {
					t.Errorf("stderr does not count the unrecorded outcomes as stdout does (%s):\n%s", a[0], r.stderr)
				}
			}
			if delivered != sent || unrecorded == 0 {
				t.Fatalf("summary: %d delivered (%d not recorded); the service delivered %d\n%s", delivered, unrecorded, sent, r.stdout)
			}

			// The state reads, and holds exactly the unrecorded targets as
			// unknown.
			os.Remove(filler)
			st, err := local.NewFile(statePath).Read()
			if err != nil {
				t.Fatalf("the state after a full disk: %v", err)
			}
			unknown, recorded := 0, 0
			for _, m := range st.Messages {
				for _, tg := range m.Targets {
					switch tg.Outcome {
					case state.Unknown:
						unknown++
					case state.Delivered:
						recorded++
					}
				}
			}
			if unknown != unrecorded+neverSent || recorded != 1+sent-unrecorded {
				t.Fatalf("state: %d unknown, %d delivered; the run reported %d answered and %d never sent unrecorded, %d delivered", unknown, recorded, unrecorded, neverSent, sent)
			}

			// Once there is space, the next runs converge.
			w.apply("--state", statePath)
			p := w.planJSON("--state", statePath)
			if p.Summary["requests"] != 0 {
				t.Fatalf("plan after the second apply: %v", p.Summary)
			}
			ids := make([]string, 3000)
			for i := range ids {
				ids[i] = fmt.Sprintf("sd%04d", i)
			}
			for id, d := range sb.devices(ids) {
				n := 0
				for _, m := range d.Inbox {
					if m.Title == "U" {
						n++
					}
				}
				if n > 1 {
					t.Errorf("%s shows the untagged notification %d times", id, n)
				}
			}
		})
	}
}
