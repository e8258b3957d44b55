package e2e

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	sbx "pushform/sandbox"
)

// embedded is the embedded sandbox of one workspace (service { sandbox =
// "sandbox.hcl" }): pushform runs it in-process for each command, and its
// devices and simulated clock persist in the workspace's
// pushform.sandbox.json, which is read here. Rehearsals of days (a
// rollout's waits, local time, repeats) run against it with apply --now:
// a sandbox process is a service with real time, and refuses --now.
type embedded struct {
	t    *testing.T
	seed string
	dir  string // the workspace's, once its service block is written
}

// startEmbedded is an embedded sandbox with seed, for one workspace.
func startEmbedded(t *testing.T, seed string) *embedded {
	return &embedded{t: t, seed: seed}
}

// serviceBlock writes the seed beside the configuration and names it.
func (e *embedded) serviceBlock(dir string) string {
	e.t.Helper()
	if err := os.WriteFile(filepath.Join(dir, "sandbox.hcl"), []byte(e.seed), 0o644); err != nil {
		e.t.Fatal(err)
	}
	e.dir = dir
	return "service {\n  sandbox     = \"sandbox.hcl\"\n  environment = \"test\"\n}\n\n"
}

func (e *embedded) devicesFile() string { return filepath.Join(e.dir, sbx.DefaultDevicesFile) }

// device is what the devices file records for id: nothing received when
// it does not hold the device (or there is no file yet).
func (e *embedded) device(id string) deviceView {
	e.t.Helper()
	d, err := sbx.ReadDevice(e.devicesFile(), id)
	switch {
	case errors.Is(err, sbx.ErrNoDevice) || errors.Is(err, os.ErrNotExist):
		d = sbx.DeviceView{DeviceID: id} // as seeded
	case err != nil:
		e.t.Fatal(err)
	}
	badge := int(d.Badge)
	v := deviceView{DeviceID: d.DeviceID, Received: int(d.Received), Badge: &badge}
	for _, m := range d.Inbox {
		v.Inbox = append(v.Inbox, struct{ Title, Body, Tag, RequestID string }{m.Title, m.Body, m.Tag, m.RequestID})
	}
	return v
}

func (e *embedded) devices(ids []string) map[string]deviceView {
	e.t.Helper()
	out := make(map[string]deviceView, len(ids))
	for _, id := range ids {
		out[id] = e.device(id)
	}
	return out
}

// devicesJSON is the part of the devices file the tests read whole.
type devicesJSON struct {
	Messages []struct {
		RequestID string `json:"requestId"`
	} `json:"messages"`
	Devices []struct {
		DeviceID string `json:"deviceId"`
		Received int    `json:"received"`
	} `json:"devices"`
}

func (e *embedded) read() devicesJSON {
	e.t.Helper()
	var f devicesJSON
	b, err := os.ReadFile(e.devicesFile())
	if errors.Is(err, os.ErrNotExist) {
		return f
	}
	if err != nil {
		e.t.Fatal(err)
	}
	if err := json.Unmarshal(b, &f); err != nil {
		e.t.Fatal(err)
	}
	return f
}

// requests counts the requests whose notifications reached a device.
func (e *embedded) requests() int {
	ids := map[string]bool{}
	for _, m := range e.read().Messages {
		ids[m.RequestID] = true
	}
	return len(ids)
}

// received is what every device that received anything was shown, by id:
// the whole file read once (a device call per id reads it each time).
func (e *embedded) received() map[string]int {
	out := map[string]int{}
	for _, d := range e.read().Devices {
		if d.Received > 0 {
			out[d.DeviceID] = d.Received
		}
	}
	return out
}

// clock is the simulated time the sandbox has reached.
func (e *embedded) clock() time.Time {
	e.t.Helper()
	at, err := sbx.ReadClock(e.devicesFile())
	if err != nil {
		e.t.Fatal(err)
	}
	return at
}

// inboxes reads devices: a sandbox process's or an embedded sandbox's.
type inboxes interface {
	device(id string) deviceView
	devices(ids []string) map[string]deviceView
}

var (
	_ inboxes = (*sandbox)(nil)
	_ inboxes = (*embedded)(nil)
	_ service = (*embedded)(nil)
)
