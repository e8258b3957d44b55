package sandbox

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

func TestSaveLoadDevices(t *testing.T) {
	s, c := start(t, conformanceSeed, Options{})
	c.send("k-test", `[{"deviceIds":["kiosk-1"],"title":"A","body":"a","tag":"x","badgeCount":2,"openToUrl":"https://a.example/","silentInForeground":true}]`)
	c.send("k-test", `[{"topics":["news","deals"],"title":"B","body":"b"}]`) // one message, several devices
	c.send("k-test", `[{"userIds":["dave"],"title":"C","body":"c","tag":"y"},{"userIds":["dave"],"badgeCount":5}]`)
	c.send("k-test", `[{"userIds":["u0009"],"title":"","body":""}]`) // visible, though empty
	c.patch("bob-phone", `{"push_token":true}`)                      // flags only
	c.patch("d0100", `{"permission":false}`)

	path := filepath.Join(t.TempDir(), DefaultDevicesFile)
	if err := s.SaveDevices(path); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("mode %v, want 0600", fi.Mode().Perm())
	}
	if left, _ := filepath.Glob(filepath.Join(filepath.Dir(path), ".*tmp*")); len(left) != 0 {
		t.Errorf("temporary files left: %v", left)
	}

	loaded := New(mustSeed(t, conformanceSeed), Options{})
	if err := loaded.LoadDevices(path); err != nil {
		t.Fatal(err)
	}
	ids := []string{"kiosk-1", "alice-test-phone", "carol-phone", "dave-phone", "d0009", "bob-phone", "d0100", "d0101", "alice-phone"}
	if got, want := loaded.ReceivedDevices(), s.ReceivedDevices(); !reflect.DeepEqual(got, want) {
		t.Errorf("received devices %v, want %v", got, want)
	}
	for _, id := range ids {
		want, _ := s.Device(id)
		got, _ := loaded.Device(id)
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s after load:\n got %+v\nwant %+v", id, got, want)
		}
		fromFile, err := ReadDevice(path, id)
		if id == "d0101" || id == "alice-phone" { // as seeded: not saved
			if !errors.Is(err, ErrNoDevice) {
				t.Errorf("ReadDevice(%s): %v", id, err)
			}
			continue
		}
		if err != nil || !reflect.DeepEqual(fromFile, want) {
			t.Errorf("ReadDevice(%s) = %+v, %v\nwant %+v", id, fromFile, err, want)
		}
	}
	// The loaded state behaves: dave comes online and shows what he held.
	v, _ := loaded.Patch("dave-phone", DevicePatch{Online: ptr(true)})
	if v.Received != 1 || v.Badge != 5 || len(v.Inbox) != 1 || v.Inbox[0].Title != "C" {
		t.Errorf("dave after load and online: %+v", v)
	}
	// Saving again replaces the file.
	if err := loaded.SaveDevices(path); err != nil {
		t.Fatal(err)
	}
	if v, err := ReadDevice(path, "dave-phone"); err != nil || v.Received != 1 {
		t.Errorf("re-saved: %+v %v", v, err)
	}
}

func TestLoadDevicesMissingAndBroken(t *testing.T) {
	s := New(mustSeed(t, conformanceSeed), Options{})
	dir := t.TempDir()
	if err := s.LoadDevices(filepath.Join(dir, "none.json")); err != nil {
		t.Errorf("missing file: %v", err)
	}
	if _, err := ReadDevice(filepath.Join(dir, "none.json"), "x"); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("ReadDevice of a missing file: %v", err)
	}
	for name, content := range map[string]string{
		"garbage":     `not json`,
		"version":     `{"version":99,"messages":[],"devices":[]}`,
		"bad message": `{"version":1,"messages":[],"devices":[{"deviceId":"kiosk-1","inbox":[3]}]}`,
	} {
		p := filepath.Join(dir, name)
		os.WriteFile(p, []byte(content), 0o600)
		if err := s.LoadDevices(p); err == nil {
			t.Errorf("%s: loaded", name)
		}
	}
	// Devices the seed no longer has are skipped.
	p := filepath.Join(dir, "gone.json")
	os.WriteFile(p, []byte(`{"version":1,"messages":[],"devices":[{"deviceId":"gone","badge":3,"inbox":[],"pending":[]}]}`), 0o600)
	if err := s.LoadDevices(p); err != nil {
		t.Error(err)
	}
}

func ptr[T any](v T) *T { return &v }
