package e2e

import (
	"archive/zip"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"
)

// wrongZoneinfo writes a zone database whose Europe/Berlin, New York and
// made-up Mars/Olympus are Tokyo's, from the archive Go ships, and
// returns its directory: what ZONEINFO may point at on a machine.
func wrongZoneinfo(t *testing.T) string {
	t.Helper()
	zr, err := zip.OpenReader(filepath.Join(runtime.GOROOT(), "lib", "time", "zoneinfo.zip"))
	if err != nil {
		t.Skipf("no zone archive in the Go toolchain: %v", err)
	}
	defer zr.Close()
	var tokyo []byte
	for _, f := range zr.File {
		if f.Name == "Asia/Tokyo" {
			r, err := f.Open()
			if err != nil {
				t.Fatal(err)
			}
			tokyo, err = io.ReadAll(r)
			r.Close()
			if err != nil {
				t.Fatal(err)
			}
		}
	}
	dir := t.TempDir()
	for _, name := range []string{"Europe/Berlin", "America/New_York", "Mars/Olympus"} {
		path := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, tokyo, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// TestZonesFromTheBinaryOnly: a ZONEINFO naming a wrong database changes
// nothing (the plan's waves are the same, a name only it holds is still
// refused), and a wall time that occurs twice falls due at its first
// occurrence: 02:30 in Berlin on the night clocks go back is 00:30Z.
func TestZonesFromTheBinaryOnly(t *testing.T) {
	sb := startSandbox(t, seed)
	w := newWorkspace(t, sb, `
time_zones {
  by_user = { alice = "Europe/Berlin", bob = "America/New_York" }
}

notification "n" {
  user_ids         = ["alice", "bob"]
  title            = "Night owl"
  body             = "Half past two"
  deliver_at_local = "2027-10-31 02:30"
}
`)
	now := "--now=2027-10-30T12:00:00Z"
	_, want := planAs[localPlan](w, now)
	wantWaves := []time.Time{time.Date(2027, 10, 31, 0, 30, 0, 0, time.UTC), time.Date(2027, 10, 31, 6, 30, 0, 0, time.UTC)}
	p := w.localPlan(now)
	if len(p.Changes) != 1 || p.Changes[0].Local == nil || len(p.Changes[0].Local.Waves) != 2 {
		t.Fatalf("plan: %+v", p)
	}
	for i, wv := range p.Changes[0].Local.Waves {
		if !wv.At.Equal(wantWaves[i]) || wv.Waiting != 1 {
			t.Errorf("wave %d at %s (%d waiting), want %s", i, wv.At, wv.Waiting, wantWaves[i])
		}
	}

	w.env = append(w.env, "ZONEINFO="+wrongZoneinfo(t))
	if _, got := planAs[localPlan](w, now); got != want {
		t.Errorf("with ZONEINFO at a wrong database the plan differs:\n%s\nwant\n%s", got, want)
	}
	w.write(`
time_zones {
  by_user = { alice = "Mars/Olympus" }
}
`, sb)
	if r := w.mustRun(1, "validate"); !strings.Contains(r.stderr, `"Mars/Olympus", which is not an IANA time zone name`) {
		t.Errorf("a name only ZONEINFO's database holds: %s", r.stderr)
	}
}
