package sandbox

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"pushform/atomicfile"
	"sync/atomic"
	"time"
)

// devicesFileVersion is the version of the format SaveDevices writes.
const devicesFileVersion = 1

// devicesFile is what SaveDevices writes: the devices that received
// anything or whose flags differ from the seed, with their messages stored
// once and referred to by index.
type devicesFile struct {
	Version int `json:"version"`
	// Clock is the simulated clock of an embedded sandbox (see SetClock);
	// absent when it was never set.
	Clock    *time.Time     `json:"clock,omitempty"`
	Messages []savedMessage `json:"messages"`
	Devices  []savedDevice  `json:"devices"`
}

type savedMessage struct {
	InboxEntry
	Visible bool `json:"visible"`
}

type savedDevice struct {
	DeviceID     string `json:"deviceId"`
	UserID       string `json:"userId,omitempty"`
	Environment  string `json:"environment,omitempty"`
	ShellVersion string `json:"shellVersion,omitempty"`
	PushToken    bool   `json:"pushToken"`
	Permission   bool   `json:"permission"`
	Online       bool   `json:"online"`
	Badge        int64  `json:"badge"`
	Received     int64  `json:"received"`
	Inbox        []int  `json:"inbox"`
	Pending      []int  `json:"pending"`
}

// ErrNoDevice is returned by ReadDevice for a device the file has no
// record of.
var ErrNoDevice = errors.New("no record of the device")

// SaveDevices writes every device's inbox, pending notifications, badge,
// received count and flags to path as JSON, atomically (temporary file,
// fsync, rename) with mode 0600. Devices still as seeded are left out.
func (s *Server) SaveDevices(path string) error {
	f := devicesFile{Version: devicesFileVersion, Clock: s.clock.saved(), Messages: []savedMessage{}, Devices: []savedDevice{}}
	index := map[*message]int{}
	refs := func(ms []*message) []int {
		out := make([]int, len(ms))
		for i, m := range ms {
			n, ok := index[m]
			if !ok {
				n = len(f.Messages)
				index[m] = n
				f.Messages = append(f.Messages, savedMessage{InboxEntry: m.entry(), Visible: m.visible})
			}
			out[i] = n
		}
		return out
	}
	for i := range s.devs {
		idx := int32(i)
		d := &s.devs[i]
		mu := s.lock(idx)
		if d.st == nil && d.flags == s.infos[d.info].flags {
			mu.Unlock()
			continue
		}
		sd := savedDevice{
			PushToken: d.flags&flagPushToken != 0, Permission: d.flags&flagPermission != 0,
			Online: d.flags&flagOnline != 0, Inbox: []int{}, Pending: []int{},
		}
		if st := d.st; st != nil {
			sd.Badge, sd.Received = int64(st.badge), int64(st.received)
			sd.Inbox, sd.Pending = refs(st.inbox()), refs(st.pending())
		}
		mu.Unlock()
		sd.DeviceID, sd.UserID = s.deviceID(idx), s.userOf(idx)
		sd.Environment, sd.ShellVersion = s.infos[d.info].env.String(), s.infos[d.info].shell
		f.Devices = append(f.Devices, sd)
	}
	return atomicfile.Write(path, 0o600, func(w io.Writer) error {
		enc := json.NewEncoder(w)
		enc.SetEscapeHTML(false)
		return enc.Encode(&f)
	})
}

func readDevicesFile(path string) (*devicesFile, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var f devicesFile
	if err := json.Unmarshal(b, &f); err != nil {
		return nil, fmt.Errorf("%s: not a sandbox devices file: %w", path, err)
	}
	if f.Version != devicesFileVersion {
		return nil, fmt.Errorf("%s: sandbox devices file version %d; this pushform reads version %d", path, f.Version, devicesFileVersion)
	}
	for _, d := range f.Devices {
		for _, refs := range [][]int{d.Inbox, d.Pending} {
			for _, r := range refs {
				if r < 0 || r >= len(f.Messages) {
					return nil, fmt.Errorf("%s: device %q refers to message %d of %d", path, d.DeviceID, r, len(f.Messages))
				}
			}
		}
	}
	return &f, nil
}

// LoadDevices restores what SaveDevices wrote over the seeded devices. A
// missing file is no error (nothing was saved yet); devices the seed no
// longer has are skipped.
func (s *Server) LoadDevices(path string) error {
	f, err := readDevicesFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	s.clock.load(f.Clock)
	msgs := make([]*message, len(f.Messages))
	for i, sm := range f.Messages {
		m := &message{
			requestID: sm.RequestID, title: sm.Title, body: sm.Body, tag: sm.Tag,
			openToURL: sm.OpenToURL, silent: sm.SilentInForeground, visible: sm.Visible, badge: -1,
		}
		if sm.BadgeCount != nil {
			m.badge = *sm.BadgeCount
		}
		msgs[i] = m
	}
	deref := func(refs []int) []*message {
		if len(refs) == 0 {
			return nil
		}
		out := make([]*message, len(refs))
		for i, r := range refs {
			out[i] = msgs[r]
		}
		return out
	}
	skipped := 0
	for _, sd := range f.Devices {
		idx, ok := s.lookupDevice(sd.DeviceID)
		if !ok {
			skipped++
			continue
		}
		st := restoreState(sd.Badge, sd.Received, deref(sd.Inbox), deref(sd.Pending))
		d := &s.devs[idx]
		mu := s.lock(idx)
		atomic.StoreUint32(&d.flags, deviceFlags(sd.PushToken, sd.Permission, sd.Online))
		d.st = st
		mu.Unlock()
	}
	if skipped > 0 && s.opts.Logf != nil {
		s.opts.Logf("sandbox: %s: %d saved devices are not in the seed; skipped", path, skipped)
	}
	return nil
}

// restoreState rebuilds a device's state from its saved parts; nil when it
// holds nothing.
func restoreState(badge, received int64, inbox, pending []*message) *deviceState {
	if badge == 0 && received == 0 && len(inbox) == 0 && len(pending) == 0 {
		return nil
	}
	st := &deviceState{badge: int32(min(max(badge, 0), math.MaxInt32)), received: int32(min(max(received, 0), math.MaxInt32))}
	if len(inbox) > 0 {
		st.last, inbox = inbox[len(inbox)-1], inbox[:len(inbox)-1]
	}
	if len(inbox) > 0 || len(pending) > 0 {
		st.more = &moreState{inbox: inbox, pending: pending}
	}
	return st
}

// ReadDevice reads one device's view from a file SaveDevices wrote, for
// `pushform sandbox show` when no sandbox is running. A device the file
// does not hold gives an error wrapping ErrNoDevice.
func ReadDevice(path, deviceID string) (DeviceView, error) {
	f, err := readDevicesFile(path)
	if err != nil {
		return DeviceView{}, err
	}
	for _, sd := range f.Devices {
		if sd.DeviceID != deviceID {
			continue
		}
		v := DeviceView{
			DeviceID: sd.DeviceID, UserID: sd.UserID, Environment: sd.Environment,
			ShellVersion: sd.ShellVersion, PushToken: sd.PushToken, Permission: sd.Permission,
			Online: sd.Online, Badge: sd.Badge, Received: sd.Received,
			Inbox: make([]InboxEntry, len(sd.Inbox)), Pending: make([]InboxEntry, len(sd.Pending)),
		}
		for i, r := range sd.Inbox {
			v.Inbox[i] = f.Messages[r].InboxEntry
		}
		for i, r := range sd.Pending {
			v.Pending[i] = f.Messages[r].InboxEntry
		}
		return v, nil
	}
	return DeviceView{}, fmt.Errorf("%w %q in %s: it has received nothing yet, or the id is wrong", ErrNoDevice, deviceID, path)
}
