package sandbox

import (
	"errors"
	"math"
	"mime"
	"net/http"
	"slices"
	"strconv"
	"time"
	"unicode/utf8"
)

// maxInbox is how many shown notifications a device keeps (like a phone's
// notification centre); older ones fall off, received still counts them.
const maxInbox = 1000

// deviceState is what a device has shown and holds: 24 bytes for a device
// that shows one notification at a time (the newest is kept apart, and
// the rest only when there is any), so ten million devices that each got
// a campaign cost 240 MB rather than a gigabyte.
type deviceState struct {
	received int32      // notifications shown, replaced ones included
	badge    int32      // badgeCount is at most 2^31-1
	last     *message   // the newest shown; nil when none
	more     *moreState // older shown ones and held ones; nil when none
}

type moreState struct {
	inbox   []*message // shown before last, oldest first
	pending []*message // held while offline, oldest first
}

// inbox returns what the device shows, oldest first.
func (st *deviceState) inbox() []*message {
	var out []*message
	if st.more != nil {
		out = append(out, st.more.inbox...)
	}
	if st.last != nil {
		out = append(out, st.last)
	}
	return out
}

// pending returns what the device holds until it comes online.
func (st *deviceState) pending() []*message {
	if st.more == nil {
		return nil
	}
	return st.more.pending
}

func (st *deviceState) extra() *moreState {
	if st.more == nil {
		st.more = &moreState{}
	}
	return st.more
}

// deliver hands m to the device: shown at once when online, held (newest
// per tag) when offline. The caller holds the device's lock.
func (d *device) deliver(m *message) {
	st := d.st
	if st == nil {
		st = &deviceState{}
		d.st = st
	}
	if d.flags&flagOnline != 0 {
		st.show(m)
	} else {
		st.hold(m)
	}
}

func (st *deviceState) show(m *message) {
	if m.badge >= 0 {
		st.badge = int32(m.badge)
	}
	if !m.visible {
		return
	}
	if st.received < math.MaxInt32 {
		st.received++
	}
	if m.tag != "" {
		if st.last != nil && st.last.tag == m.tag {
			st.last = nil
		}
		if st.more != nil {
			st.more.inbox = slices.DeleteFunc(st.more.inbox, func(o *message) bool { return o.tag == m.tag })
		}
	}
	if st.last != nil {
		x := st.extra()
		if len(x.inbox)+1 >= maxInbox {
			x.inbox = slices.Delete(x.inbox, 0, len(x.inbox)+2-maxInbox)
		}
		x.inbox = append(x.inbox, st.last)
	}
	st.last = m
}

// hold keeps m until the device comes online: a tagged notification
// replaces a held one with the same tag, a badge-only update replaces a
// held badge-only update (only the last badge matters).
func (st *deviceState) hold(m *message) {
	x := st.extra()
	x.pending = slices.DeleteFunc(x.pending, func(o *message) bool {
		if m.visible {
			return o.visible && m.tag != "" && o.tag == m.tag
		}
		return !o.visible
	})
	if len(x.pending) >= maxInbox {
		x.pending = slices.Delete(x.pending, 0, len(x.pending)-maxInbox+1)
	}
	x.pending = append(x.pending, m)
}

// flush shows what was held, in order: the device came online.
func (st *deviceState) flush() {
	if st.more == nil {
		return
	}
	held := st.more.pending
	st.more.pending = nil
	for _, m := range held {
		st.show(m)
	}
	if len(st.more.inbox) == 0 && st.more.pending == nil {
		st.more = nil
	}
}

// attempt accumulates the outcome of one target over its devices.
type attempt struct {
	attempted, delivered int
	failMsg              string
	lastSeen             int64
}

// try delivers m to device idx for a key of environment e. A device of the
// other environment, or one without a push token, is not attempted.
func (s *Server) try(idx int32, m *message, e env, a *attempt, rec *[]int32) {
	d := &s.devs[idx]
	info := s.infos[d.info]
	if info.lastSeen > a.lastSeen {
		a.lastSeen = info.lastSeen
	}
	if info.env != e {
		return
	}
	mu := s.lock(idx)
	if d.flags&flagPushToken == 0 {
		mu.Unlock()
		return
	}
	if info.fail != "" {
		mu.Unlock()
		a.attempted++
		*rec = append(*rec, idx)
		if a.failMsg == "" {
			a.failMsg = info.fail
		}
		return
	}
	d.deliver(m)
	mu.Unlock()
	a.attempted++
	a.delivered++
	*rec = append(*rec, idx)
}

// sendResult is a processed send request.
type sendResult struct {
	body         []byte // {"results":[...]}
	status       int    // 200 or 207
	allDelivered bool
	targets      int
	deliveries   int
	recipients   [][]int32 // per notification, the devices attempted
}

// results returns the results array of the body.
func (r *sendResult) results() []byte {
	return r.body[len(`{"results":`) : len(r.body)-1]
}

// process delivers validated notifications for a key of environment e and
// builds the answer. It is O(targets + devices reached).
func (s *Server) process(ns []notification, e env, requestID string) *sendResult {
	res := &sendResult{status: http.StatusOK, allDelivered: true, recipients: make([][]int32, len(ns))}
	size := 16
	for _, n := range ns {
		size += len(n.ids) * 64
	}
	b := make([]byte, 0, size)
	b = append(b, `{"results":[`...)
	first := true
	var spans [][2]int // each entry's bytes, for ResultsOrder
	start := 0
	entry := func(a *attempt) {
		b = appendOutcome(b, a, s.opts.SinceFormat, s.opts.DeviceCountFormat)
		spans = append(spans, [2]int{start, len(b)})
		res.targets++
		res.deliveries += a.delivered
		if a.delivered == 0 {
			res.allDelivered = false
			if a.attempted > 0 {
				res.status = http.StatusMultiStatus
			}
		}
	}
	sep := func() {
		if !first {
			b = append(b, ',')
		}
		first = false
		start = len(b)
	}
	for ni, n := range ns {
		m := n.msg
		m.requestID = requestID
		rec := make([]int32, 0, len(n.ids))
		if n.refused != "" {
			s.refuse(n, &b, sep, entry)
			res.recipients[ni] = rec
			continue
		}
		switch n.kind {
		case targetUsers:
			for _, id := range n.ids {
				var a attempt
				if s.failsTarget(id) {
					a = attempt{attempted: 1, failMsg: failTargetsMsg}
				} else {
					devs, one, _ := s.lookupUser(id)
					if one >= 0 {
						s.try(one, m, e, &a, &rec)
					}
					for _, idx := range devs {
						s.try(idx, m, e, &a, &rec)
					}
				}
				sep()
				b = append(b, `{"userId":`...)
				b = appendJSONString(b, id)
				entry(&a)
			}
		case targetDevices:
			for _, id := range n.ids {
				var a attempt
				if s.failsTarget(id) {
					a = attempt{attempted: 1, failMsg: failTargetsMsg}
				} else if idx, ok := s.lookupDevice(id); ok {
					s.try(idx, m, e, &a, &rec)
				}
				sep()
				b = append(b, `{"deviceId":`...)
				b = appendJSONString(b, id)
				entry(&a)
			}
		case targetTopics:
			var a attempt
			var seen map[int32]bool
			if len(n.ids) > 1 {
				seen = map[int32]bool{}
			}
			perTopic := s.opts.TopicResults == TopicResultsPerTopic
			for i, t := range n.ids {
				for _, idx := range s.topics[t] {
					if seen != nil {
						if seen[idx] {
							continue // a device subscribed to two of the topics gets it once
						}
						seen[idx] = true
					}
					s.try(idx, m, e, &a, &rec)
				}
				if perTopic { // one entry per topic, for the devices it reached first
					a.lastSeen = 0
					sep()
					b = append(b, `{"topics":[`...)
					b = appendJSONString(b, t)
					b = append(b, ']')
					entry(&a)
					a = attempt{}
				} else if i == len(n.ids)-1 {
					a.lastSeen = 0 // unreachableSince is about users and devices
					sep()
					b = append(b, `{"topics":[`...)
					for i, t := range n.ids {
						if i > 0 {
							b = append(b, ',')
						}
						b = appendJSONString(b, t)
					}
					b = append(b, ']')
					entry(&a)
				}
			}
		}
		res.recipients[ni] = rec
	}
	res.body = s.reorder(append(b, "]}"...), spans)
	return res
}

// refuse answers every target of n failed with n.refused, attempting no
// device.
func (s *Server) refuse(n notification, b *[]byte, sep func(), entry func(*attempt)) {
	a := attempt{attempted: 1, failMsg: n.refused}
	one := func(field string, id string) {
		sep()
		*b = append(*b, field...)
		*b = appendJSONString(*b, id)
		entry(&a)
	}
	switch n.kind {
	case targetUsers:
		for _, id := range n.ids {
			one(`{"userId":`, id)
		}
	case targetDevices:
		for _, id := range n.ids {
			one(`{"deviceId":`, id)
		}
	case targetTopics:
		sep()
		*b = append(*b, `{"topics":[`...)
		for i, t := range n.ids {
			if i > 0 {
				*b = append(*b, ',')
			}
			*b = appendJSONString(*b, t)
		}
		*b = append(*b, ']')
		entry(&a)
	}
}

// reorder puts the result entries of body (at spans) in the order
// Options.ResultsOrder asks for.
func (s *Server) reorder(body []byte, spans [][2]int) []byte {
	order := s.opts.ResultsOrder
	if len(spans) < 2 || order == "" || order == OrderRequest {
		return body
	}
	idx := make([]int, len(spans))
	for i := range idx {
		idx[i] = i
	}
	switch order {
	case OrderReverse:
		slices.Reverse(idx)
	case OrderShuffle:
		s.orderMu.Lock()
		s.order.Shuffle(len(idx), func(i, j int) { idx[i], idx[j] = idx[j], idx[i] })
		s.orderMu.Unlock()
	}
	out := make([]byte, 0, len(body))
	out = append(out, `{"results":[`...)
	for k, i := range idx {
		if k > 0 {
			out = append(out, ',')
		}
		out = append(out, body[spans[i][0]:spans[i][1]]...)
	}
	return append(out, "]}"...)
}

// appendOutcome appends the outcome fields of a result entry and closes
// it; since is Options.SinceFormat, count Options.DeviceCountFormat.
func appendOutcome(b []byte, a *attempt, since, count string) []byte {
	switch {
	case a.delivered > 0:
		b = append(b, `,"status":"delivered","deviceCount":`...)
		b = appendCount(b, a.delivered, count)
	case a.attempted > 0:
		b = append(b, `,"status":"failed","message":`...)
		b = appendJSONString(b, a.failMsg)
	default:
		b = append(b, `,"status":"skipped","reason":"no_active_device"`...)
		if a.lastSeen != 0 {
			b = append(b, `,"unreachableSince":`...)
			switch since {
			case SinceEpochS:
				b = strconv.AppendInt(b, a.lastSeen/int64(time.Second), 10)
			case SinceEpochMS:
				b = strconv.AppendInt(b, a.lastSeen/int64(time.Millisecond), 10)
			case SincePG, SinceSpaceZ, SinceWords:
				b = appendSince(b, a.lastSeen, since)
			default:
				b = appendTime(b, a.lastSeen)
			}
		}
	}
	return append(b, '}')
}

func (s *Server) handleSend(x *exchange, e env) {
	if s.refuseSize(x) || s.sendFault(x) {
		return
	}
	f := s.faults.draw()
	switch f {
	case faultFailBefore:
		s.stats.faults.Add(1)
		s.log.add(&logEntry{id: x.id, status: http.StatusServiceUnavailable, fault: f.String(), body: x.body})
		x.w.Header().Set("Retry-After", "1")
		x.message(http.StatusServiceUnavailable, "service unavailable (sandbox fault: nothing was processed)")
		return
	case faultDropBefore:
		s.stats.faults.Add(1)
		s.log.add(&logEntry{id: x.id, fault: f.String(), body: x.body})
		x.drop()
		return
	}
	if mt, _, err := mime.ParseMediaType(x.r.Header.Get("Content-Type")); err != nil || mt != "application/json" {
		s.stats.badRequests.Add(1)
		x.issues(http.StatusUnsupportedMediaType, []Issue{{Path: []any{}, Message: "Content-Type must be application/json"}})
		return
	}
	body, err := x.body, x.bodyErr
	if err != nil {
		s.stats.badRequests.Add(1)
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			x.issues(http.StatusRequestEntityTooLarge, []Issue{{Path: []any{}, Message: "the request body exceeds " + strconv.Itoa(MaxBodyBytes>>20) + " MiB"}})
			return
		}
		x.issues(http.StatusBadRequest, []Issue{{Path: []any{}, Message: "reading the request body: " + err.Error()}})
		return
	}
	ns, issues := decodeSendRequest(body)
	if len(issues) == 0 && s.opts.MaxLength > 0 {
		issues = checkLengths(ns, s.opts.MaxLength)
		if s.opts.MaxLengthAnswer == "207" {
			for _, is := range issues { // processed: those targets fail
				i := is.Path[0].(int)
				if ns[i].refused == "" {
					ns[i].refused = "payload too large: " + is.field() + " " + is.Message
				}
			}
			issues = nil
		}
	}
	if len(issues) > 0 {
		s.stats.badRequests.Add(1)
		s.log.add(&logEntry{id: x.id, status: http.StatusBadRequest, body: body, issues: issues})
		x.issues(http.StatusBadRequest, issues)
		return
	}
	res := s.process(ns, e, x.id)
	s.stats.sendRequests.Add(1)
	s.stats.targets.Add(int64(res.targets))
	s.stats.deliveries.Add(int64(res.deliveries))
	x.note = strconv.Itoa(res.targets) + " targets"
	status := res.status
	if f == faultFailAfter {
		status = http.StatusInternalServerError
	}
	s.log.add(&logEntry{id: x.id, status: status, fault: f.String(), body: body,
		recipients: res.recipients, results: res.results()})
	switch {
	case f == faultFailAfter:
		s.stats.faults.Add(1)
		x.message(status, "internal error (sandbox fault: the request was processed, the answer is lost)")
	case f == faultDropAfter:
		s.stats.faults.Add(1)
		x.drop()
	case res.allDelivered && (s.opts.Empty200 || s.opts.OKBody == OKBodyEmpty):
		x.send(http.StatusOK, nil)
	case res.allDelivered && s.opts.OKBody == OKBodyObject:
		x.send(http.StatusOK, []byte(`{}`))
	case res.allDelivered && s.opts.OKBody == OKBodyResults:
		x.send(http.StatusOK, []byte(`{"results":[]}`))
	default:
		x.send(res.status, res.body)
	}
}

// checkLengths reports text fields longer than max characters.
func checkLengths(ns []notification, max int) []Issue {
	var issues []Issue
	for i, n := range ns {
		for _, f := range [...]struct{ name, value string }{
			{"title", n.msg.title}, {"body", n.msg.body}, {"tag", n.msg.tag}, {"openToUrl", n.msg.openToURL},
		} {
			if l := utf8.RuneCountInString(f.value); l > max {
				issues = append(issues, Issue{Path: []any{i, f.name},
					Message: "is " + strconv.Itoa(l) + " characters long; at most " + strconv.Itoa(max) + " are allowed"})
			}
		}
	}
	return issues
}
