package sandbox

import (
	"context"
	crand "crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log"
	"math/rand/v2"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Options are the behaviours of a Server beyond its seed: fault injection
// and response shapes. The zero value is a well-behaved service.
type Options struct {
	// Latency delays every API request (not /_sandbox/) by this much before
	// it is handled; a request whose context ends first gets no answer.
	Latency time.Duration
	// FailRate is the fraction of send requests answered 5xx: half 503 with
	// Retry-After: 1 before processing, half 500 after processing.
	FailRate float64
	// FailTargets is the fraction of user and device targets answered
	// failed (a 207 with a message per target, spec 4.1) instead of
	// delivered. Which ones is decided by a hash of the id and FaultSeed,
	// so a target that failed fails again, as a broken device would.
	FailTargets float64
	// FailIDs are user and device ids answered failed (207) whatever
	// their devices: pushform test's fail_ids.
	FailIDs []string
	// DropRate is the fraction of send requests whose connection is closed
	// without an answer: half before processing, half after. Dropping
	// hijacks the connection; where the ResponseWriter cannot be hijacked
	// the handler panics with http.ErrAbortHandler, which net/http turns
	// into an aborted response.
	DropRate float64
	// RateLimit, when positive, admits that many API requests per second
	// (a token bucket with a burst of the same size); beyond it: 429.
	RateLimit int
	// Empty200 answers a fully delivered send with 200 and an empty body.
	Empty200 bool
	// RecipientsShape is "array" (the default: all ids at once) or "object"
	// ({"userIds":[...],"next":"cursor"}, paged).
	RecipientsShape string
	// IssuesShape is how a 400 says where each issue is (the spec leaves
	// the entry unshown): "path" (the default: {"path":[1,"title"]}),
	// "index" ({"index":1,"field":"title"}), "pointer"
	// ({"pointer":"/1/title"}), "pointer-detail" ({"pointer":"/1/title",
	// "detail":"..."}: no message) or "message" (only a message starting
	// "[1] title: ").
	IssuesShape string
	// TopicResults is how a topics object is answered: "echo" (the
	// default: one entry echoing its array) or "per-topic" (one entry per
	// topic, echoing it as "topics":["a"]).
	TopicResults string
	// MaxLength, when positive, bounds title, body, tag and openToUrl (in
	// characters). The spec leaves length bounds unshown; this lets tests
	// meet a 400 that a client cannot predict.
	MaxLength int
	// RecipientsPaging, when set, pages the recipients list (pages of
	// RecipientsPageSize; ?limit= changes it) and names each next page
	// another way: "cursor" ({"userIds":[...],"next":"CURSOR"}, as
	// RecipientsShape "object"), "link" (a bare array and a Link header
	// with a relative rel="next" URL beside a rel="first" one) or
	// "links-next" ({"data":[...],"links":{"next":"ABSOLUTE URL"}}).
	RecipientsPaging string
	// RecipientsFaults answer the first request for a page of the
	// recipients list with a status (429 or 503) and Retry-After: 1.
	RecipientsFaults []RecipientsFault
	// ResultsOrder is the order of a send answer's results: "request"
	// (the default), "reverse", or "shuffle" (drawn from FaultSeed).
	ResultsOrder string
	// OKBody is the body of a fully delivered 200: "full" (the default:
	// the results), "empty" (as Empty200), "object" ({}) or "results"
	// ({"results":[]}).
	OKBody string
	// SinceFormat is how unreachableSince is written: "rfc3339" (the
	// default), "epoch-s" or "epoch-ms" (JSON numbers).
	SinceFormat string
	// MaxLengthAnswer is how a notification over MaxLength is answered:
	// "400" (the default: the request is refused) or "207" (the request
	// is processed and that notification's targets fail with the reason).
	MaxLengthAnswer string
	// FaultSeed seeds the fault draws, so a run is reproducible.
	FaultSeed int64
	// Now is the clock of the rate limiter; nil means time.Now. A test
	// that freezes it gets a 429 for certain once the burst is spent.
	Now func() time.Time
	// Logf, when set, receives one line per request and any server error.
	Logf func(format string, args ...any)
	// SpecShapes are the shapes of issue 38 (specshapes.go).
	SpecShapes
}

// RecipientsFault is a status answered to the first request for page
// Page (from 1) of the recipients list, or to the first Times.
type RecipientsFault struct {
	Page, Status int
	Times        int
}

// Values of Options.RecipientsPaging, ResultsOrder, OKBody and SinceFormat.
const (
	PagingCursor    = "cursor"
	PagingLink      = "link"
	PagingLinksNext = "links-next"

	OrderRequest = "request"
	OrderReverse = "reverse"
	OrderShuffle = "shuffle"

	OKBodyFull    = "full"
	OKBodyEmpty   = "empty"
	OKBodyObject  = "object"
	OKBodyResults = "results"

	SinceRFC3339 = "rfc3339"
	SinceEpochS  = "epoch-s"
	SinceEpochMS = "epoch-ms"
)

// MaxBodyBytes caps a send request body; a larger one gets 413.
const MaxBodyBytes = 8 << 20

// DefaultDevicesFile is the file, in the configuration directory, where the
// embedded sandbox keeps its devices between runs and `pushform sandbox
// show` reads them.
const DefaultDevicesFile = "pushform.sandbox.json"

type env uint8

const (
	envNone env = iota
	envTest
	envProduction
)

func parseEnv(s string) env {
	switch s {
	case EnvTest:
		return envTest
	case EnvProduction:
		return envProduction
	}
	return envNone
}

func (e env) String() string {
	switch e {
	case envTest:
		return EnvTest
	case envProduction:
		return EnvProduction
	}
	return ""
}

// Device flags, the ones PATCH /_sandbox/devices/{id} can change.
const (
	flagPushToken uint32 = 1 << iota
	flagPermission
	flagOnline
)

func deviceFlags(pushToken, permission, online bool) uint32 {
	var f uint32
	if pushToken {
		f |= flagPushToken
	}
	if permission {
		f |= flagPermission
	}
	if online {
		f |= flagOnline
	}
	return f
}

// devInfo is what the seed says of a device; a user_range shares one among
// all its devices.
type devInfo struct {
	id       string // "" for a range device: formatted from its index
	user     int32  // index in Server.users; -1 for none or a range device
	rng      *rangeRec
	env      env
	flags    uint32 // as seeded
	shell    string
	fail     string
	lastSeen int64 // unix nanoseconds; 0 when unknown
}

// device is one device: 16 bytes until it receives something.
type device struct {
	info uint32 // index in Server.infos
	// flags change under the device's lock, by atomic stores, so that
	// listing recipients can read them without taking the lock.
	flags uint32
	st    *deviceState // nil until the first delivery
}

type userRec struct {
	id   string
	devs []int32
}

type rangeRec struct {
	user, device idFormat
	count        int
	devBase      int32 // index of device 0 in Server.devs
	ordBase      int   // ordinal of user 0 in the recipients order
	info         devInfo
}

const numShards = 256

// shard is one lock of the device lock stripes, padded to a cache line.
type shard struct {
	sync.Mutex
	_ [56]byte
}

// Server is a sandbox Push Notification Service. Its devices live in one
// dense slice; users and topics are indexes into it, built once by New.
// Device state is guarded by striped locks, so parallel requests to
// different devices do not contend.
type Server struct {
	opts Options

	keys     map[string]env
	keyList  []APIKey
	devs     []device
	infos    []*devInfo // what the seed says of devices: one per explicit device, one per range
	devByID  map[string]int32
	users    []userRec
	userByID map[string]int32
	ranges   []*rangeRec
	topics   map[string][]int32
	nUsers   int // explicit and range users: the ordinal space of recipients

	shards  [numShards]shard
	log     requestLog
	stats   counters
	faults  *faultSource
	failIDs map[string]bool // Options.FailIDs
	limiter *limiter
	// recPages numbers the recipients pages by the cursor that asks for
	// them, and recFaulted the pages a RecipientsFault has hit.
	recMu      sync.Mutex
	recPages   map[string]int
	recFaulted map[int]int
	specFaults sendFaults
	// order shuffles results for ResultsOrder "shuffle".
	orderMu sync.Mutex
	order   *rand.Rand
	now     func() time.Time
	// wait holds a request for the configured latency; false when the
	// client gave up first. Tests replace it to control the wait.
	wait func(ctx context.Context, d time.Duration) bool
	// clock is the simulated time of an embedded sandbox (clock.go).
	clock simClock
}

// sleep waits d, or until ctx ends (then false).
func sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}

type counters struct {
	sendRequests, targets, deliveries  atomic.Int64
	badRequests, unauthorized, limited atomic.Int64
	faults, abandoned                  atomic.Int64
}

// New builds a server from a seed (nil for an empty one).
func New(seed *Seed, opts Options) *Server {
	if seed == nil {
		seed = &Seed{}
	}
	s := &Server{
		opts:     opts,
		keys:     map[string]env{},
		devByID:  map[string]int32{},
		userByID: map[string]int32{},
		topics:   map[string][]int32{},
		faults:   newFaultSource(opts.FailRate, opts.DropRate, opts.FaultSeed),
		limiter:  newLimiter(opts.RateLimit),
		now:      opts.Now,
		wait:     sleep,

		recPages:   map[string]int{},
		recFaulted: map[int]int{},
		order:      rand.New(rand.NewPCG(uint64(opts.FaultSeed), 0x0dde)),
	}
	if s.now == nil {
		s.now = time.Now
	}
	s.log.maxBytes = maxLogBytes
	s.failIDs = idSet(opts.FailIDs)
	for _, k := range seed.APIKeys {
		e := parseEnv(k.Environment)
		if _, dup := s.keys[k.Key]; dup || e == envNone {
			continue
		}
		s.keys[k.Key] = e
		s.keyList = append(s.keyList, k)
	}
	total := len(seed.Devices)
	for _, u := range seed.Users {
		total += len(u.Devices)
	}
	for _, r := range seed.UserRanges {
		total += r.Count
	}
	s.devs = make([]device, 0, total)
	addDevice := func(d Device, user int32) (int32, bool) {
		if _, dup := s.devByID[d.ID]; dup || s.rangeDevice(d.ID) >= 0 {
			return 0, false
		}
		info := &devInfo{
			id: d.ID, user: user, env: parseEnv(d.Environment),
			flags: deviceFlags(d.PushToken, d.Permission, d.Online),
			shell: d.ShellVersion, fail: d.Fail,
		}
		if !d.LastSeen.IsZero() {
			info.lastSeen = d.LastSeen.UnixNano()
		}
		idx := int32(len(s.devs))
		s.devs = append(s.devs, device{info: uint32(len(s.infos)), flags: info.flags})
		s.infos = append(s.infos, info)
		s.devByID[d.ID] = idx
		return idx, true
	}
	// Ranges are known before explicit ids (an explicit id that clashes
	// with a range is dropped), but their devices go last in the slice.
	for _, r := range seed.UserRanges {
		uf, err1 := parseIDFormat(r.UserFormat)
		df, err2 := parseIDFormat(r.DeviceFormat)
		if err1 != nil || err2 != nil || r.Count <= 0 {
			continue
		}
		rr := &rangeRec{user: uf, device: df, count: r.Count}
		rr.info = devInfo{
			user: -1, rng: rr, env: parseEnv(r.Environment),
			flags: deviceFlags(r.PushToken, r.Permission, r.Online),
			shell: r.ShellVersion, fail: r.Fail,
		}
		if !r.LastSeen.IsZero() {
			rr.info.lastSeen = r.LastSeen.UnixNano()
		}
		s.ranges = append(s.ranges, rr)
	}
	for _, u := range seed.Users {
		if _, dup := s.userByID[u.ID]; dup || s.rangeUser(u.ID) >= 0 {
			continue
		}
		ui := int32(len(s.users))
		rec := userRec{id: u.ID}
		for _, d := range u.Devices {
			if idx, ok := addDevice(d, ui); ok {
				rec.devs = append(rec.devs, idx)
			}
		}
		s.userByID[u.ID] = ui
		s.users = append(s.users, rec)
	}
	for _, d := range seed.Devices {
		addDevice(d, -1)
	}
	// Recipients order: explicit users in seed order, then each range.
	s.nUsers = len(s.users)
	for _, rr := range s.ranges {
		rr.devBase = int32(len(s.devs))
		rr.ordBase = s.nUsers
		s.nUsers += rr.count
		info := uint32(len(s.infos))
		s.infos = append(s.infos, &rr.info)
		for range rr.count {
			s.devs = append(s.devs, device{info: info, flags: rr.info.flags})
		}
	}
	for _, t := range seed.Topics {
		if _, dup := s.topics[t.Name]; dup {
			continue
		}
		devs := make([]int32, 0, len(t.Devices))
		for _, id := range t.Devices {
			if idx, ok := s.lookupDevice(id); ok {
				devs = append(devs, idx)
			}
		}
		s.topics[t.Name] = devs
	}
	return s
}

// rangeUser returns the device index of a range user id, or -1.
func (s *Server) rangeUser(id string) int32 {
	for _, r := range s.ranges {
		if i, ok := r.user.parse(id); ok && i < r.count {
			return r.devBase + int32(i)
		}
	}
	return -1
}

// rangeDevice returns the index of a range device id, or -1.
func (s *Server) rangeDevice(id string) int32 {
	for _, r := range s.ranges {
		if i, ok := r.device.parse(id); ok && i < r.count {
			return r.devBase + int32(i)
		}
	}
	return -1
}

func (s *Server) lookupDevice(id string) (int32, bool) {
	if idx, ok := s.devByID[id]; ok {
		return idx, true
	}
	idx := s.rangeDevice(id)
	return idx, idx >= 0
}

// lookupUser returns the devices of a user: an explicit user's list, or the
// one device of a range user in one (then devs is nil).
func (s *Server) lookupUser(id string) (devs []int32, one int32, ok bool) {
	if ui, found := s.userByID[id]; found {
		return s.users[ui].devs, -1, true
	}
	one = s.rangeUser(id)
	return nil, one, one >= 0
}

// deviceID returns the id of device idx.
func (s *Server) deviceID(idx int32) string {
	info := s.infos[s.devs[idx].info]
	if info.rng != nil {
		return info.rng.device.id(int(idx - info.rng.devBase))
	}
	return info.id
}

// appendDeviceID appends the id of device idx to b.
func (s *Server) appendDeviceID(b []byte, idx int32) []byte {
	info := s.infos[s.devs[idx].info]
	if info.rng != nil {
		return info.rng.device.appendID(b, int(idx-info.rng.devBase))
	}
	return append(b, info.id...)
}

// userOf returns the user id signed in on device idx, or "".
func (s *Server) userOf(idx int32) string {
	info := s.infos[s.devs[idx].info]
	if info.rng != nil {
		return info.rng.user.id(int(idx - info.rng.devBase))
	}
	if info.user >= 0 {
		return s.users[info.user].id
	}
	return ""
}

// lock locks the stripe of device idx and returns it.
func (s *Server) lock(idx int32) *shard {
	m := &s.shards[uint32(idx)%numShards]
	m.Lock()
	return m
}

// APIKeyFor returns the first seed key of an environment ("test" or
// "production").
func (s *Server) APIKeyFor(environment string) (string, bool) {
	for _, k := range s.keyList {
		if k.Environment == environment {
			return k.Key, true
		}
	}
	return "", false
}

// Start serves s on addr, which must be a loopback address ("127.0.0.1:0"
// picks a free port), and returns the API base URL http://ADDR/v1 once the
// listener accepts connections. stop shuts the server down gracefully
// (waiting up to 5 s for requests in flight).
func (s *Server) Start(addr string) (baseURL string, stop func() error, err error) {
	if addr == "" {
		addr = "127.0.0.1:0"
	}
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return "", nil, fmt.Errorf("sandbox address %q: %w", addr, err)
	}
	if ip := net.ParseIP(host); host != "localhost" && (ip == nil || !ip.IsLoopback()) {
		return "", nil, fmt.Errorf("sandbox address %q: the sandbox listens on loopback only (127.0.0.1, ::1 or localhost)", addr)
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return "", nil, err
	}
	errLog := log.New(io.Discard, "", 0)
	if s.opts.Logf != nil {
		errLog = log.New(logfWriter(s.opts.Logf), "", 0)
	}
	srv := &http.Server{Handler: s, ReadHeaderTimeout: 10 * time.Second, ErrorLog: errLog}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ln) }()
	var once sync.Once
	var stopErr error
	stop = func() error {
		once.Do(func() {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			stopErr = srv.Shutdown(ctx)
			if errors.Is(stopErr, context.DeadlineExceeded) {
				stopErr = srv.Close()
			}
			if err := <-done; !errors.Is(err, http.ErrServerClosed) && stopErr == nil {
				stopErr = err
			}
		})
		return stopErr
	}
	return "http://" + ln.Addr().String() + "/v1", stop, nil
}

type logfWriter func(string, ...any)

func (f logfWriter) Write(p []byte) (int, error) {
	f("%s", strings.TrimRight(string(p), "\n"))
	return len(p), nil
}

func newRequestID() string {
	var b [12]byte
	crand.Read(b[:])
	out := make([]byte, 0, 4+2*len(b))
	out = append(out, "req-"...)
	return string(hex.AppendEncode(out, b[:]))
}

// exchange is one request being answered.
type exchange struct {
	s     *Server
	w     http.ResponseWriter
	r     *http.Request
	id    string
	start time.Time
	note  string // added to the log line

	body    []byte // a POST body, read before anything else
	bodyErr error
}

// ServeHTTP routes /v1/push-notifications/{send,recipients} and the
// /_sandbox/ inspection endpoints. Every answer carries x-request-id.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	x := &exchange{s: s, w: w, r: r, id: newRequestID(), start: time.Now()}
	w.Header().Set("x-request-id", x.id)
	switch p := r.URL.Path; {
	case strings.HasPrefix(p, "/v1/"):
		s.serveAPI(x)
	case strings.HasPrefix(p, "/_sandbox/"):
		s.serveInspect(x)
	default:
		x.message(http.StatusNotFound, "not found: the API is under /v1/ and the inspection endpoints under /_sandbox/")
	}
}

func (s *Server) serveAPI(x *exchange) {
	var handle func(*exchange, env)
	var method string
	switch x.r.URL.Path {
	case "/v1/push-notifications/send":
		handle, method = s.handleSend, http.MethodPost
	case "/v1/push-notifications/recipients":
		handle, method = s.handleRecipients, http.MethodGet
	default:
		x.message(http.StatusNotFound, "not found: "+x.r.URL.Path)
		return
	}
	if x.r.Method != method {
		x.w.Header().Set("Allow", method)
		x.message(http.StatusMethodNotAllowed, "method "+x.r.Method+" not allowed; use "+method)
		return
	}
	if method == http.MethodPost {
		// Read the body first: only then does net/http watch the
		// connection, so a client giving up during the latency is noticed.
		x.body, x.bodyErr = io.ReadAll(http.MaxBytesReader(x.w, x.r.Body, MaxBodyBytes))
	}
	if d := s.opts.Latency; d > 0 && !s.wait(x.r.Context(), d) {
		s.stats.abandoned.Add(1)
		x.logLine("abandoned")
		return
	}
	if ok, after := s.limiter.allow(s.now()); !ok {
		s.stats.limited.Add(1)
		x.w.Header().Set("Retry-After", strconv.Itoa(after))
		x.message(http.StatusTooManyRequests, fmt.Sprintf("rate limit exceeded: at most %d requests per second", s.opts.RateLimit))
		return
	}
	key := x.r.Header.Get("x-api-key")
	e, ok := s.keys[key]
	if !ok {
		s.stats.unauthorized.Add(1)
		msg := "invalid API key"
		if key == "" {
			msg = "missing API key: set the x-api-key header"
		}
		x.message(http.StatusUnauthorized, msg)
		return
	}
	handle(x, e)
}

// send writes a JSON answer (no body when body is nil) and logs the line.
func (x *exchange) send(status int, body []byte) {
	if body != nil {
		x.w.Header().Set("Content-Type", "application/json")
		x.w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	}
	x.w.WriteHeader(status)
	if body != nil {
		x.w.Write(body)
	}
	x.logLine(strconv.Itoa(status))
}

func (x *exchange) logLine(outcome string) {
	if x.s.opts.Logf == nil {
		return
	}
	line := x.r.Method + " " + x.r.URL.Path + " " + outcome + " " + x.id + " " +
		time.Since(x.start).Round(time.Microsecond).String()
	if x.note != "" {
		line += " " + x.note
	}
	x.s.opts.Logf("%s", line)
}

// message answers {"message": msg}.
func (x *exchange) message(status int, msg string) {
	b := append([]byte(`{"message":`), appendJSONString(nil, msg)...)
	x.send(status, append(b, '}'))
}

// Issue is one entry of a 400 answer: where (notification index, field,
// element index) and what.
type Issue struct {
	Path    []any  `json:"path"`
	Message string `json:"message"`
}

// Shapes of Options.IssuesShape and Options.TopicResults.
const (
	IssuesPath    = "path"
	IssuesIndex   = "index"
	IssuesPointer = "pointer"
	IssuesMessage = "message"
	// IssuesPointerDetail: {"pointer":"/1/title","detail":"..."}, the
	// reason under detail as RFC 9457 has it.
	IssuesPointerDetail = "pointer-detail"

	TopicResultsEcho     = "echo"
	TopicResultsPerTopic = "per-topic"
)

// appendIssues writes issues as a JSON array in the given shape.
func appendIssues(b []byte, issues []Issue, shape string) []byte {
	b = append(b, '[')
	for i, is := range issues {
		if i > 0 {
			b = append(b, ',')
		}
		index, field := -1, is.field()
		if len(is.Path) > 0 {
			if n, ok := is.Path[0].(int); ok {
				index = n
			}
		}
		b = append(b, '{')
		switch shape {
		case IssuesIndex:
			if index >= 0 {
				b = append(b, `"index":`...)
				b = strconv.AppendInt(b, int64(index), 10)
				b = append(b, ',')
			}
			if field != "" {
				b = append(b, `"field":`...)
				b = appendJSONString(b, field)
				b = append(b, ',')
			}
		case IssuesPointer, IssuesPointerDetail:
			b = append(b, `"pointer":`...)
			b = appendJSONString(b, is.pointer())
			b = append(b, ',')
		case IssuesMessage:
		default:
			b = append(b, `"path":[`...)
			for j, p := range is.Path {
				if j > 0 {
					b = append(b, ',')
				}
				switch v := p.(type) {
				case int:
					b = strconv.AppendInt(b, int64(v), 10)
				case string:
					b = appendJSONString(b, v)
				}
			}
			b = append(b, "],"...)
		}
		msg := is.Message
		if shape == IssuesMessage && index >= 0 {
			msg = "[" + strconv.Itoa(index) + "] " + field + ": " + msg
		}
		if shape == IssuesPointerDetail {
			b = append(b, `"detail":`...)
		} else {
			b = append(b, `"message":`...)
		}
		b = appendJSONString(b, msg)
		b = append(b, '}')
	}
	return append(b, ']')
}

// field renders the path after the notification index: "userIds[3]".
func (is Issue) field() string {
	var b []byte
	for j, p := range is.Path {
		switch v := p.(type) {
		case int:
			if j > 0 {
				b = append(b, '[')
				b = strconv.AppendInt(b, int64(v), 10)
				b = append(b, ']')
			}
		case string:
			if len(b) > 0 {
				b = append(b, '.')
			}
			b = append(b, v...)
		}
	}
	return string(b)
}

// pointer renders the path as a JSON pointer (RFC 6901): "/1/userIds/3".
func (is Issue) pointer() string {
	var b []byte
	for _, p := range is.Path {
		b = append(b, '/')
		switch v := p.(type) {
		case int:
			b = strconv.AppendInt(b, int64(v), 10)
		case string:
			b = append(b, strings.ReplaceAll(strings.ReplaceAll(v, "~", "~0"), "/", "~1")...)
		}
	}
	return string(b)
}

func (x *exchange) issues(status int, issues []Issue) {
	b := append([]byte(`{"issues":`), appendIssues(nil, issues, x.s.opts.IssuesShape)...)
	x.send(status, append(b, '}'))
}

// drop closes the connection without an answer.
func (x *exchange) drop() {
	x.logLine("dropped")
	if hj, ok := x.w.(http.Hijacker); ok {
		if conn, _, err := hj.Hijack(); err == nil {
			conn.Close()
			return
		}
	}
	panic(http.ErrAbortHandler)
}
