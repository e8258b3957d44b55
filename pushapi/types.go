package pushapi

import "time"

// Notification is one element of the send request array (spec 2.1).
// Exactly one of UserIDs, DeviceIDs and Topics should be set; the service
// validates the rules and answers 400 when they are broken.
type Notification struct {
	UserIDs            []string `json:"userIds,omitempty"`
	DeviceIDs          []string `json:"deviceIds,omitempty"`
	Topics             []string `json:"topics,omitempty"`
	Title              string   `json:"title,omitempty"`
	Body               string   `json:"body,omitempty"`
	OpenToURL          string   `json:"openToUrl,omitempty"`
	BadgeCount         *int     `json:"badgeCount,omitempty"`
	SilentInForeground bool     `json:"silentInForeground,omitempty"`
	Tag                string   `json:"tag,omitempty"`
}

// Targets returns how many result entries the service gives for n: one per
// user id, one per device id, and one for the topics array as a whole.
func (n *Notification) Targets() int {
	t := len(n.UserIDs) + len(n.DeviceIDs)
	if len(n.Topics) > 0 {
		t++
	}
	return t
}

// Outcome is the result of one target of a send (spec 3).
type Outcome string

// The three outcomes of spec 3.
const (
	OutcomeDelivered Outcome = "delivered"
	OutcomeSkipped   Outcome = "skipped"
	OutcomeFailed    Outcome = "failed"
)

// ReasonNoActiveDevice is the one skip reason of the spec (section 3).
const ReasonNoActiveDevice = "no_active_device"

// Result is the outcome of one target (spec 2.2).
type Result struct {
	// The echo of the target: exactly one of UserID, DeviceID and Topics is set.
	UserID   string
	DeviceID string
	Topics   []string

	Outcome Outcome
	// DeviceCount is nil when unknown (an empty 200 body, or not reported).
	DeviceCount      *int
	Reason           string // skipped: currently always no_active_device
	Message          string // failed: the underlying error
	UnreachableSince *time.Time
	// Unreadable holds the optional fields of the entry that could not be
	// read (a deviceCount that is no count, an unreachableSince that is no
	// time), as served: `unreachableSince: "last Tuesday"`, several joined
	// by "; ", redacted and cut to MaxUnreadableBytes. Such a field never
	// makes the answer unreadable: the outcome stands without it.
	Unreadable string
}

// MaxUnreadableBytes bounds Result.Unreadable.
const MaxUnreadableBytes = 512

// SendResponse is the decoded answer to a send request.
type SendResponse struct {
	RequestID  string
	StatusCode int // 200 or 207
	// Results[i][j] is the outcome of target j of notification i of the
	// request (user ids, then device ids, then the topics array), matched by
	// order and checked by echo. An empty 200 body yields delivered for every
	// target with DeviceCount nil.
	Results [][]Result

	mem  *resultMem // the results' memory, lent by pool
	pool *scratchPool
}

// Release gives the memory of r's results back to the client that decoded
// them, for a later answer. Neither r.Results nor a pointer taken from
// them (DeviceCount) may be used after it; strings may. Calling it is
// optional: a response not released is left to the garbage collector.
func (r *SendResponse) Release() {
	if r == nil || r.mem == nil {
		return
	}
	r.pool.putMem(r.mem)
	r.Results, r.mem, r.pool = nil, nil, nil
}

// RecipientsResponse is the decoded recipient list (spec 2.3), all pages
// joined. For lists of millions, Client.RecipientsFunc hands the ids over
// in chunks instead.
type RecipientsResponse struct {
	UserIDs    []string // in the order served, duplicates removed
	RequestIDs []string // one per page fetched
}
