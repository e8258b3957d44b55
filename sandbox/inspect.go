package sandbox

import (
	"bufio"
	"encoding/json"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
)

// DeviceView is a device as GET /_sandbox/devices/{id} shows it.
type DeviceView struct {
	DeviceID     string `json:"deviceId"`
	UserID       string `json:"userId,omitempty"`
	Environment  string `json:"environment,omitempty"`
	ShellVersion string `json:"shellVersion,omitempty"`
	PushToken    bool   `json:"pushToken"`
	Permission   bool   `json:"permission"`
	Online       bool   `json:"online"`
	// Badge is the app badge, last set by a badge update or a notification
	// with badgeCount; 0 until then.
	Badge int64 `json:"badge"`
	// Received counts every notification shown, replaced ones included.
	Received int64 `json:"received"`
	// Inbox holds the notifications shown, oldest first; a later one with
	// the same tag replaced an earlier one.
	Inbox []InboxEntry `json:"inbox"`
	// Pending holds what an offline device will show when it comes online.
	Pending []InboxEntry `json:"pending"`
}

// InboxEntry is one notification on a device. A badge-only update has no
// title and body (and only ever appears in Pending).
type InboxEntry struct {
	Title              string `json:"title,omitempty"`
	Body               string `json:"body,omitempty"`
	Tag                string `json:"tag,omitempty"`
	BadgeCount         *int64 `json:"badgeCount,omitempty"`
	OpenToURL          string `json:"openToUrl,omitempty"`
	SilentInForeground bool   `json:"silentInForeground,omitempty"`
	RequestID          string `json:"requestId"`
}

func (m *message) entry() InboxEntry {
	e := InboxEntry{
		Title: m.title, Body: m.body, Tag: m.tag, OpenToURL: m.openToURL,
		SilentInForeground: m.silent, RequestID: m.requestID,
	}
	if m.badge >= 0 {
		b := m.badge
		e.BadgeCount = &b
	}
	return e
}

func entries(ms []*message) []InboxEntry {
	out := make([]InboxEntry, len(ms))
	for i, m := range ms {
		out[i] = m.entry()
	}
	return out
}

// view snapshots device idx.
func (s *Server) view(idx int32) DeviceView {
	d := &s.devs[idx]
	v := DeviceView{
		DeviceID: s.deviceID(idx), UserID: s.userOf(idx),
		Environment: s.infos[d.info].env.String(), ShellVersion: s.infos[d.info].shell,
	}
	mu := s.lock(idx)
	v.PushToken = d.flags&flagPushToken != 0
	v.Permission = d.flags&flagPermission != 0
	v.Online = d.flags&flagOnline != 0
	if st := d.st; st != nil {
		v.Badge, v.Received = int64(st.badge), int64(st.received)
		v.Inbox, v.Pending = entries(st.inbox()), entries(st.pending())
	}
	mu.Unlock()
	if v.Inbox == nil {
		v.Inbox = []InboxEntry{}
	}
	if v.Pending == nil {
		v.Pending = []InboxEntry{}
	}
	return v
}

// DevicePatch is the body of PATCH /_sandbox/devices/{id}: the flags to
// change. Setting push_token true again is a re-registration; setting
// online true shows what the device held.
type DevicePatch struct {
	PushToken  *bool `json:"push_token,omitempty"`
	Permission *bool `json:"permission,omitempty"`
	Online     *bool `json:"online,omitempty"`
}

// Patch changes a device's flags, as PATCH /_sandbox/devices/{id} does.
func (s *Server) Patch(deviceID string, p DevicePatch) (DeviceView, bool) {
	idx, ok := s.lookupDevice(deviceID)
	if !ok {
		return DeviceView{}, false
	}
	d := &s.devs[idx]
	mu := s.lock(idx)
	flags := d.flags
	set := func(flag uint32, v *bool) {
		if v == nil {
			return
		}
		if *v {
			flags |= flag
		} else {
			flags &^= flag
		}
	}
	wasOnline := flags&flagOnline != 0
	set(flagPushToken, p.PushToken)
	set(flagPermission, p.Permission)
	set(flagOnline, p.Online)
	atomic.StoreUint32(&d.flags, flags)
	if !wasOnline && flags&flagOnline != 0 && d.st != nil {
		d.st.flush()
	}
	mu.Unlock()
	return s.view(idx), true
}

// Stats are the counters of GET /_sandbox/stats.
type Stats struct {
	SendRequests int64 `json:"sendRequests"` // send requests processed (valid, authenticated)
	Targets      int64 `json:"targets"`      // result entries of those
	Deliveries   int64 `json:"deliveries"`   // devices that took a notification
	BadRequests  int64 `json:"badRequests"`  // 400, 413 and 415 answers to send
	Unauthorized int64 `json:"unauthorized"` // 401 answers
	RateLimited  int64 `json:"rateLimited"`  // 429 answers
	Faults       int64 `json:"faults"`       // injected faults
	Abandoned    int64 `json:"abandoned"`    // API requests the client gave up on during the latency: not processed
}

// Stats returns the counters.
func (s *Server) Stats() Stats {
	return Stats{
		SendRequests: s.stats.sendRequests.Load(),
		Targets:      s.stats.targets.Load(),
		Deliveries:   s.stats.deliveries.Load(),
		BadRequests:  s.stats.badRequests.Load(),
		Unauthorized: s.stats.unauthorized.Load(),
		RateLimited:  s.stats.limited.Load(),
		Faults:       s.stats.faults.Load(),
		Abandoned:    s.stats.abandoned.Load(),
	}
}

// Device returns the view of a device, as GET /_sandbox/devices/{id} does.
func (s *Server) Device(deviceID string) (DeviceView, bool) {
	idx, ok := s.lookupDevice(deviceID)
	if !ok {
		return DeviceView{}, false
	}
	return s.view(idx), true
}

// ReceivedDevices lists, in seed order, the ids of the devices that
// received anything (shown or held).
func (s *Server) ReceivedDevices() []string {
	var ids []string
	s.received(func(idx int32) { ids = append(ids, s.deviceID(idx)) })
	return ids
}

// received calls fn with each device that received anything, in seed
// order.
func (s *Server) received(fn func(idx int32)) {
	for i := range s.devs {
		idx := int32(i)
		mu := s.lock(idx)
		has := s.devs[i].st != nil
		mu.Unlock()
		if has {
			fn(idx)
		}
	}
}

// serveInspect answers the /_sandbox/ endpoints. They need no key and see
// every environment.
func (s *Server) serveInspect(x *exchange) {
	p := strings.TrimPrefix(x.r.URL.Path, "/_sandbox/")
	method := x.r.Method
	switch {
	case p == "stats" && method == http.MethodGet:
		b, _ := json.Marshal(s.Stats())
		x.send(http.StatusOK, b)
	case p == "devices" && method == http.MethodGet:
		// Streamed: ten million ids are 120 MB of JSON.
		x.w.Header().Set("Content-Type", "application/json")
		x.w.WriteHeader(http.StatusOK)
		bw := bufio.NewWriterSize(x.w, 64<<10)
		bw.WriteString(`{"deviceIds":[`)
		n := 0
		var buf, id []byte
		s.received(func(idx int32) {
			buf = buf[:0]
			if n > 0 {
				buf = append(buf, ',')
			}
			n++
			id = s.appendDeviceID(id[:0], idx)
			buf = appendJSONString(buf, id)
			bw.Write(buf)
		})
		bw.WriteString("]}")
		bw.Flush()
		x.note = strconv.Itoa(n) + " devices"
		x.logLine("200")
	case strings.HasPrefix(p, "devices/") && (method == http.MethodGet || method == http.MethodPatch):
		id := strings.TrimPrefix(p, "devices/")
		if method == http.MethodGet {
			v, ok := s.Device(id)
			if !ok {
				x.message(http.StatusNotFound, "unknown device "+strconv.Quote(id))
				return
			}
			b, _ := json.Marshal(v)
			x.send(http.StatusOK, b)
			return
		}
		var patch DevicePatch
		dec := json.NewDecoder(io.LimitReader(x.r.Body, 1<<16))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&patch); err != nil {
			x.issues(http.StatusBadRequest, []Issue{{Path: []any{}, Message: "the body must be an object with any of push_token, permission, online (booleans): " + err.Error()}})
			return
		}
		v, ok := s.Patch(id, patch)
		if !ok {
			x.message(http.StatusNotFound, "unknown device "+strconv.Quote(id))
			return
		}
		b, _ := json.Marshal(v)
		x.send(http.StatusOK, b)
	case strings.HasPrefix(p, "log/") && method == http.MethodGet:
		id := strings.TrimPrefix(p, "log/")
		e := s.log.get(id)
		if e == nil {
			x.message(http.StatusNotFound, "no log entry for request "+strconv.Quote(id)+" (unknown, not a send request, or evicted)")
			return
		}
		x.send(http.StatusOK, s.renderLog(e))
	case p == "stats" || p == "devices" || strings.HasPrefix(p, "devices/") || strings.HasPrefix(p, "log/"):
		x.message(http.StatusMethodNotAllowed, "method "+method+" not allowed")
	default:
		x.message(http.StatusNotFound, "not found: the inspection endpoints are /_sandbox/devices, /_sandbox/devices/{id}, /_sandbox/log/{requestId} and /_sandbox/stats")
	}
}
