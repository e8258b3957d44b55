package tzdb

import (
	"archive/zip"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"testing"
	"time"
)

// TestNames: zones and links are names; what is no place is not.
func TestNames(t *testing.T) {
	names := Names()
	if len(names) < 500 {
		t.Fatalf("%d names", len(names))
	}
	for _, n := range []string{"Europe/Berlin", "America/New_York", "US/Pacific", "Asia/Calcutta", "Etc/GMT+5", "UTC", "Pacific/Chatham"} {
		if _, ok := slices.BinarySearch(names, n); !ok {
			t.Errorf("%s is not listed", n)
		}
		if _, err := Load(n); err != nil {
			t.Errorf("Load(%s): %v", n, err)
		}
	}
	for _, n := range []string{"Factory", "posixrules", "localtime", "Local", "", "Mars/Olympus", "../etc/passwd", "/usr/share/zoneinfo/UTC", "europe/berlin"} {
		if slices.Contains(names, n) {
			t.Errorf("%q is listed", n)
		}
		if loc, err := Load(n); err == nil {
			t.Errorf("Load(%q) = %v, want an error", n, loc)
		}
	}
	if loc, _ := Load("UTC"); loc != time.UTC {
		t.Errorf("Load(UTC) = %p, not time.UTC", loc)
	}
}

// TestZONEINFOIgnored: a ZONEINFO naming a wrong database changes
// nothing here, while time.LoadLocation (the control: this package's
// first call of it, before its cache of ZONEINFO is filled) reads it.
func TestZONEINFOIgnored(t *testing.T) {
	tokyo, err := Load("Asia/Tokyo")
	if err != nil {
		t.Fatal(err)
	}
	// A database whose Europe/Berlin is Tokyo's.
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "Europe"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "Europe", "Berlin"), []byte(open().data["Asia/Tokyo"]), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("ZONEINFO", dir)
	at := time.Date(2026, 1, 15, 12, 0, 0, 0, time.UTC)
	_, wrong := at.In(tokyo).Zone()
	if loc, err := time.LoadLocation("Europe/Berlin"); err != nil {
		t.Fatal(err)
	} else if _, off := at.In(loc).Zone(); off != wrong {
		t.Fatalf("control: time.LoadLocation ignored ZONEINFO (offset %d, want %d)", off, wrong)
	}
	berlin, err := Load("Europe/Berlin")
	if err != nil {
		t.Fatal(err)
	}
	if name, off := at.In(berlin).Zone(); name != "CET" || off != 3600 {
		t.Errorf("Europe/Berlin in January: %s %+d, want CET +3600", name, off)
	}
}

// TestSameAsToolchain: the embedded archive is the one the Go toolchain
// in use ships, which time/tzdata embeds too; when Go moves on, go
// generate copies the new one.
func TestSameAsToolchain(t *testing.T) {
	path := filepath.Join(runtime.GOROOT(), "lib", "time", "zoneinfo.zip")
	b, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		t.Skipf("no %s in this toolchain", path)
	}
	if err != nil {
		t.Fatal(err)
	}
	if string(b) != archive {
		t.Errorf("config/tzdb/zoneinfo.zip differs from %s: run go generate ./config/tzdb", path)
	}
	// Every entry is stored whole, as open needs.
	r, err := zip.OpenReader(path)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if d := open(); d.err != nil || len(d.data) < len(r.File)-2 {
		t.Errorf("indexed %d of %d entries: %v", len(d.data), len(r.File), d.err)
	}
}
