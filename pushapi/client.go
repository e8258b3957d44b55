// Package pushapi is a typed client for the Push Notification Service, API
// v1: send notifications, list recipients.
//
// It is tolerant where the spec leaves the wire format open (see
// docs/service.md, "The service where the spec is silent") and strict
// where a misunderstanding could lose or duplicate a delivery: an answer
// it cannot map target by target is a *DecodeError, never a guess. Errors
// are typed for retry policies (Classify, Retryable, RequestID). The API
// key never reaches a result, an error or a log in any escaping: every
// string taken from an answer passes through a secret.Redactor.
//
// The JSON is read with jsontext, the tokenizer of
// github.com/go-json-experiment/json (scan.go walks its tokens; decode.go,
// entry.go, match.go, issues.go and recipients.go map the shapes), and written
// without reflection (encode.go, quoting with internal/jsonstr):
// BenchmarkJSON shows it about four times cheaper than encoding/json on a
// 500-target answer, and the recipients list is read as a stream, so a
// list of ten million ids costs the client about 22 bytes an id.
package pushapi

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptrace"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"pushform/secret"
)

// Defaults for Options.
const (
	DefaultTimeout          = 30 * time.Second
	DefaultMaxResponseBytes = 32 << 20
	DefaultUserAgent        = "pushform-pushapi/1"
	// maxErrorBody bounds how much of an error answer is read.
	maxErrorBody = 4 << 20
	// maxPages bounds recipient paging against a service that never ends it.
	maxPages = 100_000
	// DefaultRecipientsTimeout bounds fetching the whole recipient list.
	DefaultRecipientsTimeout = 5 * time.Minute
	// DefaultRecipientsMaxAttempts bounds the tries of one recipients
	// page, as apply's --max-attempts does a send.
	DefaultRecipientsMaxAttempts = 5
	// DefaultMaxRetryAfter caps a Retry-After wait, as apply's
	// --max-retry-after does.
	DefaultMaxRetryAfter = 5 * time.Minute
)

// Paths relative to the base URL (spec 4).
const (
	SendPath       = "/push-notifications/send"
	RecipientsPath = "/push-notifications/recipients"
)

// Options configure a Client.
type Options struct {
	// BaseURL ends with /v1. Plain http:// is allowed only for loopback
	// hosts (127.0.0.0/8, ::1, localhost).
	BaseURL string
	// APIKey is sent as x-api-key; it is never printed, logged, or put in
	// errors.
	APIKey string
	// APIKeyEnv names the environment variable holding the key, for 401
	// messages.
	APIKeyEnv string
	// HTTPClient is optional; its redirects are disabled in a copy (a
	// redirect would turn a POST into a GET and could carry the key to
	// another host).
	HTTPClient *http.Client
	// Timeout bounds each request, body read included; default 30s.
	Timeout time.Duration
	// MaxResponseBytes caps a response body; default 32 MiB.
	MaxResponseBytes int64
	// UserAgent defaults to DefaultUserAgent.
	UserAgent string
	// RecipientsTimeout bounds fetching the whole recipient list, every
	// page; default 5m.
	RecipientsTimeout time.Duration
	// RecipientsMaxAttempts bounds the tries of one recipients page that
	// the service refused without doing anything (429, 503...); default
	// DefaultRecipientsMaxAttempts.
	RecipientsMaxAttempts int
	// MaxRetryAfter caps the wait a Retry-After on a recipients page can
	// impose; default DefaultMaxRetryAfter.
	MaxRetryAfter time.Duration
	// RateLimit is the run's budget for waiting out 429s on recipients
	// pages, shared with the run's sends (see RateLimit); nil: a budget
	// of DefaultRateLimitWait of the client's own.
	RateLimit *RateLimit
	// Log, when set, is called once per HTTP exchange (each send, each
	// recipients page) when it is over, for a debug log. It gets no key,
	// no ids and no body text: see RequestLog. It must be safe for
	// concurrent use.
	Log func(RequestLog)
}

// RequestLog is one HTTP exchange with the service, for a debug log. It
// holds counts, never the key, an id or text from a body.
type RequestLog struct {
	Method    string        // GET or POST
	Path      string        // e.g. /push-notifications/send (no query)
	Page      int           // the recipients page, from 1; 0 for a send
	Status    int           // 0 when no answer arrived
	RequestID string        // x-request-id of the answer (redacted, printable)
	Duration  time.Duration // from sending to the end of the answer
	IDsSent   int           // targets in a send request
	// IDsReceived counts result entries of a send answer (one per target)
	// or user ids of a recipients page, as served.
	IDsReceived int
	// Unreadable counts the result entries of a send answer with an
	// optional field that could not be read (Result.Unreadable): their
	// outcomes stand, the fields are kept as served.
	Unreadable int
	// Error says what went wrong in fixed words ("timeout", "cancelled",
	// "connection failed", "unreadable answer", "rejected", "key rejected",
	// "refused"); empty when the exchange succeeded.
	Error string
}

// logWord names err for a RequestLog: fixed words, never the error's text.
func logWord(err error) string {
	var (
		te *TransportError
		de *DecodeError
		ve *ValidationError
		ae *AuthError
		se *StatusError
	)
	switch {
	case err == nil:
		return ""
	case errors.Is(err, context.DeadlineExceeded):
		return "timeout"
	case errors.Is(err, context.Canceled):
		return "cancelled"
	case errors.As(err, &te):
		return "connection failed"
	case errors.As(err, &de):
		return "unreadable answer"
	case errors.As(err, &ve):
		return "rejected"
	case errors.As(err, &ae):
		return "key rejected"
	case errors.As(err, &se):
		return "refused"
	}
	return "failed"
}

// statusOf is the HTTP status behind err, 0 when no answer arrived.
func statusOf(err error) int {
	var (
		de *DecodeError
		ve *ValidationError
		ae *AuthError
		se *StatusError
	)
	switch {
	case errors.As(err, &ve):
		return http.StatusBadRequest
	case errors.As(err, &ae):
		return http.StatusUnauthorized
	case errors.As(err, &se):
		return se.StatusCode
	case errors.As(err, &de):
		return de.StatusCode
	}
	return 0
}

// Client talks to one service base URL with one key. It is safe for
// concurrent use.
type Client struct {
	base     string // without trailing slash
	red      *secret.Redactor
	keyEnv   string
	hc       *http.Client
	ownTrans *http.Transport // set when we built the transport
	timeout  time.Duration
	recTime  time.Duration
	maxBody  int64
	headers  http.Header // shared, read-only
	pool     bufPool
	scratch  scratchPool // decoding's working memory
	// deadline bounds one call by the timeout, and recDeadline a whole
	// recipient list; tests replace them with deadlines they fire
	// themselves.
	deadline, recDeadline func(context.Context) (context.Context, context.CancelFunc)
	log                   func(RequestLog)
	// recAttempts and maxRetryAfter bound the retries of a recipients
	// page; sleep waits between them (tests pass one that does not).
	recAttempts   int
	maxRetryAfter time.Duration
	sleep         func(context.Context, time.Duration) error
	rate          *RateLimit
}

// New checks opts and returns a client.
func New(opts Options) (*Client, error) {
	red := secret.NewRedactor(opts.APIKey)
	base, err := secret.CheckBaseURL(opts.BaseURL)
	if err != nil {
		return nil, red.Error(err) // a key pasted into the URL is not echoed back
	}
	if opts.APIKey == "" {
		if opts.APIKeyEnv != "" {
			return nil, fmt.Errorf("no API key: environment variable %s is empty or unset", opts.APIKeyEnv)
		}
		return nil, errors.New("no API key")
	}
	for i := 0; i < len(opts.APIKey); i++ {
		if c := opts.APIKey[i]; c < 0x20 || c == 0x7f {
			return nil, errors.New("the API key contains control characters") // never echo it
		}
	}
	c := &Client{
		base:    base,
		red:     red,
		keyEnv:  opts.APIKeyEnv,
		timeout: opts.Timeout,
		recTime: opts.RecipientsTimeout,
		maxBody: opts.MaxResponseBytes,
		log:     opts.Log,

		recAttempts:   opts.RecipientsMaxAttempts,
		maxRetryAfter: opts.MaxRetryAfter,
		sleep:         sleepCtx,
		rate:          opts.RateLimit,
	}
	if c.rate == nil {
		c.rate = NewRateLimit(DefaultRateLimitWait, nil)
	}
	if c.recAttempts <= 0 {
		c.recAttempts = DefaultRecipientsMaxAttempts
	}
	if c.maxRetryAfter <= 0 {
		c.maxRetryAfter = DefaultMaxRetryAfter
	}
	if c.timeout <= 0 {
		c.timeout = DefaultTimeout
	}
	if c.recTime <= 0 {
		c.recTime = DefaultRecipientsTimeout
	}
	if c.maxBody <= 0 {
		c.maxBody = DefaultMaxResponseBytes
	}
	c.deadline = func(ctx context.Context) (context.Context, context.CancelFunc) {
		return context.WithTimeout(ctx, c.timeout)
	}
	c.recDeadline = func(ctx context.Context) (context.Context, context.CancelFunc) {
		return context.WithTimeout(ctx, c.recTime)
	}
	ua := opts.UserAgent
	if ua == "" {
		ua = DefaultUserAgent
	}
	c.headers = http.Header{
		"X-Api-Key":    {opts.APIKey},
		"Content-Type": {"application/json"},
		"Accept":       {"application/json"},
		"User-Agent":   {ua},
	}
	if opts.HTTPClient != nil {
		hc := *opts.HTTPClient
		c.hc = &hc
	} else {
		c.ownTrans = newTransport()
		c.hc = &http.Client{Transport: c.ownTrans}
	}
	c.hc.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	return c, nil
}

// newTransport keeps enough idle connections for apply's parallel senders.
// Its buffers fit a whole request of 500 ids and most of its answer, so
// each takes one or two system calls rather than one per 4 KiB.
func newTransport() *http.Transport {
	d := &net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second}
	return &http.Transport{
		Proxy:                 http.ProxyFromEnvironment,
		DialContext:           d.DialContext,
		ForceAttemptHTTP2:     true,
		MaxIdleConns:          128,
		MaxIdleConnsPerHost:   64,
		IdleConnTimeout:       90 * time.Second,
		TLSHandshakeTimeout:   10 * time.Second,
		ExpectContinueTimeout: time.Second,
		WriteBufferSize:       64 << 10,
		ReadBufferSize:        64 << 10,
	}
}

// Close releases idle connections of a transport the client built.
func (c *Client) Close() {
	if c.ownTrans != nil {
		c.ownTrans.CloseIdleConnections()
	}
}

// BaseURL returns the checked base URL, without a trailing slash.
func (c *Client) BaseURL() string { return c.base }

// response is an answer with its body read (up to the cap), or for a
// streamed 200, open.
type response struct {
	status    int
	header    http.Header
	requestID string
	op        string
	body      []byte
	bodyBuf   *[]byte // pooled; returned by release
	tooLarge  bool
	stream    io.ReadCloser      // a streamed 200's body, closed by release
	cancel    context.CancelFunc // ends the call's deadline, by release
}

// do performs one request and reads the body, at most limit bytes (more
// marks tooLarge). With stream, a 200's body is left open in r.stream for
// the caller to read, and the timeout bounds each wait for data rather
// than the whole call: a list of ten million ids may take longer than one
// call should, as long as it keeps coming. The caller must call release
// on the response.
func (c *Client) do(ctx context.Context, method, target string, body []byte, stream bool) (*response, error) {
	var idle *idleTimer
	var cancel context.CancelFunc
	if stream {
		ctx, idle = c.idleDeadline(ctx)
		cancel = idle.stop
	} else {
		ctx, cancel = c.deadline(ctx)
	}
	// target is a path under the base URL, or an absolute URL on its
	// host (a next page link, checked by nextPage).
	if strings.HasPrefix(target, "/") {
		target = c.base + target
	}
	op := method + " " + c.red.String(strings.TrimPrefix(target, c.base))
	if i := strings.IndexByte(op, '?'); i >= 0 {
		op = op[:i]
	}
	var wrote atomic.Bool
	trace := &httptrace.ClientTrace{
		// From the moment the request has a connection, its bytes may be
		// on the wire. Hooks of the write itself (WroteRequest) run in the
		// transport's writer goroutine and can come after RoundTrip has
		// returned a timeout, so they would call a written request unsent;
		// GotConn runs before the write starts.
		GotConn: func(httptrace.GotConnInfo) { wrote.Store(true) },
	}
	req, err := http.NewRequestWithContext(httptrace.WithClientTrace(ctx, trace), method, target, nil)
	if err != nil {
		cancel()
		return nil, fmt.Errorf("%s: %w", op, c.red.Error(err))
	}
	for k, v := range c.headers {
		req.Header[k] = v
	}
	if body != nil {
		req.ContentLength = int64(len(body))
		req.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(body)), nil }
		req.Body, _ = req.GetBody()
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		cancel()
		return nil, &TransportError{Op: op, Err: c.red.Error(idle.explain(err)), Sent: wrote.Load()}
	}
	r := &response{status: resp.StatusCode, header: resp.Header, requestID: c.requestID(resp.Header), op: op}
	if stream && resp.StatusCode == http.StatusOK {
		r.stream, r.cancel = &idleReader{rc: resp.Body, idle: idle}, cancel
		return r, nil
	}
	defer cancel()
	defer resp.Body.Close()
	limit := c.maxBody
	if resp.StatusCode != http.StatusOK && resp.StatusCode != http.StatusMultiStatus && limit > maxErrorBody {
		limit = maxErrorBody
	}
	r.bodyBuf = c.pool.get()
	buf := bytes.NewBuffer(*r.bodyBuf)
	if n := resp.ContentLength; n > 0 && n <= limit {
		buf.Grow(int(n) + 1)
	}
	_, err = buf.ReadFrom(io.LimitReader(resp.Body, limit+1))
	*r.bodyBuf = buf.Bytes()
	r.body = buf.Bytes()
	if err != nil {
		c.pool.put(r.bodyBuf)
		return nil, r.readError(c, err)
	}
	if int64(len(r.body)) > limit {
		r.tooLarge = true
		r.body = r.body[:limit]
	}
	return r, nil
}

// idleTimer cancels a streamed call once no data has come for its
// duration.
type idleTimer struct {
	d      time.Duration
	t      *time.Timer
	fired  atomic.Bool
	cancel context.CancelFunc
}

// idleDeadline derives a context that ends after c.timeout without
// progress (see idleReader).
func (c *Client) idleDeadline(ctx context.Context) (context.Context, *idleTimer) {
	ctx, cancel := context.WithCancel(ctx)
	it := &idleTimer{d: c.timeout, cancel: cancel}
	it.t = time.AfterFunc(c.timeout, func() { it.fired.Store(true); cancel() })
	return ctx, it
}

func (it *idleTimer) stop() { it.t.Stop(); it.cancel() }

// explain turns the cancellation the timer caused into a timeout.
func (it *idleTimer) explain(err error) error {
	if it != nil && err != nil && it.fired.Load() {
		return fmt.Errorf("no data from the service for %s: %w", it.d, context.DeadlineExceeded)
	}
	return err
}

// idleReader restarts its timer whenever data arrives.
type idleReader struct {
	rc   io.ReadCloser
	idle *idleTimer
}

func (r *idleReader) Read(p []byte) (int, error) {
	n, err := r.rc.Read(p)
	if n > 0 && !r.idle.fired.Load() {
		r.idle.t.Reset(r.idle.d)
	}
	return n, r.idle.explain(err)
}

func (r *idleReader) Close() error { return r.rc.Close() }

// readError is a failure to read r's body: the answer started, so the
// request was sent.
func (r *response) readError(c *Client, err error) error {
	return &TransportError{Op: r.op, Err: fmt.Errorf("reading the %d answer: %w", r.status, c.red.Error(err)), RequestID: r.requestID, Sent: true}
}

func (r *response) release(c *Client) {
	if r.stream != nil {
		r.stream.Close()
		r.cancel()
		r.stream = nil
	}
	if r.bodyBuf != nil {
		c.pool.put(r.bodyBuf)
		r.bodyBuf, r.body = nil, nil
	}
}

// requestID reads x-request-id: redacted (a server may echo the key in
// it) and made safe to print.
func (c *Client) requestID(h http.Header) string {
	return sanitize(c.red.String(h.Get("X-Request-Id")), 128)
}

// excerpt summarises a body for an error, with the key redacted in any
// escaping before it is cut short.
func (c *Client) excerpt(r *response) string {
	b := r.body
	if len(b) > 64<<10 {
		b = b[:64<<10]
	}
	return excerpt(c.red.Bytes(b), r.header.Get("Content-Type"))
}

// decodeError is a DecodeError for r, its message redacted.
func (c *Client) decodeError(method string, r *response, err error) *DecodeError {
	return &DecodeError{Method: method, StatusCode: r.status, RequestID: r.requestID,
		Err: c.red.Error(err), Excerpt: c.excerpt(r)}
}

// errorFor turns an unexpected status into its typed error.
func (c *Client) errorFor(method string, r *response, batchLen int) error {
	switch r.status {
	case http.StatusBadRequest:
		ve := &ValidationError{RequestID: r.requestID, Notifications: batchLen}
		if issues, ok := decodeIssues(r.body, batchLen, c.red); ok && !r.tooLarge {
			ve.Issues = issues
		} else {
			ve.Excerpt = c.excerpt(r)
		}
		return ve
	case http.StatusUnauthorized:
		return &AuthError{RequestID: r.requestID, KeyEnv: c.keyEnv}
	}
	return &StatusError{
		Method:     method,
		StatusCode: r.status,
		RequestID:  r.requestID,
		RetryAfter: parseRetryAfter(r.header.Get("Retry-After"), time.Now()),
		Excerpt:    c.excerpt(r),
	}
}

// Send posts batch as one send request (spec 4.1) and returns the outcome
// of every target. Errors are *ValidationError, *AuthError, *StatusError,
// *TransportError or *DecodeError; see Classify for what each means for a
// retry.
func (c *Client) Send(ctx context.Context, batch []Notification) (*SendResponse, error) {
	if len(batch) == 0 {
		return nil, errors.New("send: empty batch")
	}
	if c.log == nil {
		return c.send(ctx, batch)
	}
	start := time.Now()
	res, err := c.send(ctx, batch)
	l := RequestLog{Method: http.MethodPost, Path: SendPath, Duration: time.Since(start), Error: logWord(err)}
	for i := range batch {
		l.IDsSent += batch[i].Targets()
	}
	if res != nil {
		l.Status, l.RequestID = res.StatusCode, res.RequestID
		for _, rs := range res.Results {
			l.IDsReceived += len(rs)
			for i := range rs {
				if rs[i].Unreadable != "" {
					l.Unreadable++
				}
			}
		}
	} else {
		l.Status, l.RequestID = statusOf(err), RequestID(err)
	}
	c.log(l)
	return res, err
}

func (c *Client) send(ctx context.Context, batch []Notification) (*SendResponse, error) {
	// The body is the request's own: the transport may still be writing
	// it after RoundTrip returns (an early answer), so it is not pooled.
	// Being a bytes.Reader, it goes out with the headers in one write.
	buf := c.pool.get()
	*buf = appendBatch(*buf, batch)
	body := slices.Clone(*buf)
	c.pool.put(buf)

	r, err := c.do(ctx, http.MethodPost, SendPath, body, false)
	if err != nil {
		return nil, err
	}
	defer r.release(c)
	if r.status != http.StatusOK && r.status != http.StatusMultiStatus {
		return nil, c.errorFor(http.MethodPost, r, len(batch))
	}
	if r.tooLarge {
		return nil, c.decodeError(http.MethodPost, r, fmt.Errorf("the answer is larger than %d bytes (MaxResponseBytes)", c.maxBody))
	}
	mem := c.scratch.mem()
	results, err := decodeResults(&c.scratch, mem, r.body, r.status, batch, c.red, true)
	if err != nil {
		c.scratch.putMem(mem)
		return nil, c.decodeError(http.MethodPost, r, err)
	}
	return &SendResponse{RequestID: r.requestID, StatusCode: r.status, Results: results, mem: mem, pool: &c.scratch}, nil
}
