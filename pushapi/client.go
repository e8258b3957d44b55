// Package pushapi is a typed client for the Push Notification Service
// (../shared/spec/push-service-v1.md): send notifications, list recipients.
//
// It is tolerant where the spec leaves the wire format open (see the
// "not shown" table in DESIGN.md) and strict where a misunderstanding could
// lose or duplicate a delivery: an answer it cannot map target by target is
// a *DecodeError, never a guess. Errors are typed for retry policies
// (Classify, Retryable) and never contain the API key.
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
	"net/url"
	"pushform/secret"
	"strings"
	"sync/atomic"
	"time"
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
}

// Client talks to one service base URL with one key. It is safe for
// concurrent use.
type Client struct {
	base     string // without trailing slash
	key      string
	keyEnv   string
	hc       *http.Client
	ownTrans *http.Transport // set when we built the transport
	timeout  time.Duration
	maxBody  int64
	headers  http.Header // shared, read-only
	pool     bufPool
	// deadline bounds one call by the timeout; tests replace it with a
	// deadline they fire themselves.
	deadline func(context.Context) (context.Context, context.CancelFunc)
}

// New checks opts and returns a client.
func New(opts Options) (*Client, error) {
	base, err := secret.CheckBaseURL(opts.BaseURL)
	if err != nil {
		// A key pasted into the URL must not be echoed back.
		if len(opts.APIKey) >= 4 && strings.Contains(err.Error(), opts.APIKey) {
			err = errors.New(strings.ReplaceAll(err.Error(), opts.APIKey, "[redacted]"))
		}
		return nil, err
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
		key:     opts.APIKey,
		keyEnv:  opts.APIKeyEnv,
		timeout: opts.Timeout,
		maxBody: opts.MaxResponseBytes,
	}
	if c.timeout <= 0 {
		c.timeout = DefaultTimeout
	}
	if c.maxBody <= 0 {
		c.maxBody = DefaultMaxResponseBytes
	}
	c.deadline = func(ctx context.Context) (context.Context, context.CancelFunc) {
		return context.WithTimeout(ctx, c.timeout)
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

// response is an answer with its body read (up to the cap).
type response struct {
	status    int
	header    http.Header
	requestID string
	body      []byte
	bodyBuf   *[]byte // pooled; returned by release
	tooLarge  bool
}

// do performs one request and reads the body, at most limit bytes (more
// marks tooLarge). The caller must call release on the response.
func (c *Client) do(ctx context.Context, method, path string, body *reqBody) (*response, error) {
	ctx, cancel := c.deadline(ctx)
	defer cancel()
	op := method + " " + path
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
	req, err := http.NewRequestWithContext(httptrace.WithClientTrace(ctx, trace), method, c.base+path, nil)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", op, err)
	}
	for k, v := range c.headers {
		req.Header[k] = v
	}
	if body != nil {
		req.ContentLength = int64(body.len())
		req.Body = body.reader()
		req.GetBody = func() (io.ReadCloser, error) { return body.reader(), nil }
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		return nil, &TransportError{Op: op, Err: c.redactErr(err), Sent: wrote.Load()}
	}
	defer resp.Body.Close()
	r := &response{status: resp.StatusCode, header: resp.Header, requestID: sanitize(string(c.redact([]byte(resp.Header.Get("X-Request-Id")))), 128)}
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
		return nil, &TransportError{Op: op, Err: fmt.Errorf("reading the %d answer: %w", resp.StatusCode, c.redactErr(err)), RequestID: r.requestID, Sent: true}
	}
	if int64(len(r.body)) > limit {
		r.tooLarge = true
		r.body = r.body[:limit]
	}
	r.body = c.redact(r.body)
	return r, nil
}

func (r *response) release(c *Client) {
	if r.bodyBuf != nil {
		c.pool.put(r.bodyBuf)
		r.bodyBuf, r.body = nil, nil
	}
}

// redact replaces the key in a body, so an echoing server cannot smuggle
// it into results, state or error messages. Very short keys are not
// redacted: replacing them would mangle ordinary text.
func (c *Client) redact(b []byte) []byte {
	if len(c.key) < 4 || !bytes.Contains(b, []byte(c.key)) {
		return b
	}
	return bytes.ReplaceAll(b, []byte(c.key), []byte("[redacted]"))
}

func (c *Client) redactErr(err error) error {
	if len(c.key) >= 4 && strings.Contains(err.Error(), c.key) {
		return errors.New(strings.ReplaceAll(err.Error(), c.key, "[redacted]"))
	}
	return err
}

// errorFor turns an unexpected status into its typed error.
func (c *Client) errorFor(method string, r *response, batchLen int) error {
	switch r.status {
	case http.StatusBadRequest:
		ve := &ValidationError{RequestID: r.requestID, Notifications: batchLen}
		if issues, ok := decodeIssues(r.body, batchLen, func(s string) string { return s }); ok && !r.tooLarge {
			ve.Issues = issues
		} else {
			ve.Excerpt = excerpt(r.body, r.header.Get("Content-Type"))
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
		Excerpt:    excerpt(r.body, r.header.Get("Content-Type")),
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
	buf := c.pool.get()
	*buf = appendBatch(*buf, batch)
	body := newReqBody(&c.pool, buf)
	defer body.release()

	r, err := c.do(ctx, http.MethodPost, SendPath, body)
	if err != nil {
		return nil, err
	}
	defer r.release(c)
	if r.status != http.StatusOK && r.status != http.StatusMultiStatus {
		return nil, c.errorFor(http.MethodPost, r, len(batch))
	}
	derr := func(err error) error {
		return &DecodeError{Method: http.MethodPost, StatusCode: r.status, RequestID: r.requestID,
			Err: err, Excerpt: excerpt(r.body, r.header.Get("Content-Type"))}
	}
	if r.tooLarge {
		return nil, derr(fmt.Errorf("body larger than %d bytes", c.maxBody))
	}
	results, err := decodeSendResults(r.body, r.status, batch, func(s string) string { return s })
	if err != nil {
		return nil, derr(err)
	}
	return &SendResponse{RequestID: r.requestID, StatusCode: r.status, Results: results}, nil
}

// Recipients fetches the user ids that can receive a push now (spec 4.2),
// following paging cursors with ?cursor= until the last page.
func (c *Client) Recipients(ctx context.Context) (*RecipientsResponse, error) {
	out := &RecipientsResponse{}
	seen := make(map[string]struct{})
	cursors := make(map[string]struct{})
	path := RecipientsPath
	for page := 0; ; page++ {
		if page == maxPages {
			return nil, fmt.Errorf("recipients: more than %d pages", maxPages)
		}
		p, reqID, err := c.recipientsPage(ctx, path)
		if err != nil {
			return nil, err
		}
		out.RequestIDs = append(out.RequestIDs, reqID)
		for _, id := range p.userIDs {
			if _, dup := seen[id]; !dup {
				seen[id] = struct{}{}
				out.UserIDs = append(out.UserIDs, id)
			}
		}
		if p.cursor == "" {
			return out, nil
		}
		if _, again := cursors[p.cursor]; again {
			return nil, &DecodeError{Method: http.MethodGet, StatusCode: http.StatusOK, RequestID: reqID,
				Err: fmt.Errorf("paging loops: cursor %q served twice", sanitize(p.cursor, 80))}
		}
		cursors[p.cursor] = struct{}{}
		path = RecipientsPath + "?cursor=" + url.QueryEscape(p.cursor)
	}
}

func (c *Client) recipientsPage(ctx context.Context, path string) (recipientsPage, string, error) {
	r, err := c.do(ctx, http.MethodGet, path, nil)
	if err != nil {
		return recipientsPage{}, "", err
	}
	defer r.release(c)
	if r.status != http.StatusOK {
		return recipientsPage{}, r.requestID, c.errorFor(http.MethodGet, r, 0)
	}
	derr := func(err error) error {
		return &DecodeError{Method: http.MethodGet, StatusCode: r.status, RequestID: r.requestID,
			Err: err, Excerpt: excerpt(r.body, r.header.Get("Content-Type"))}
	}
	if r.tooLarge {
		return recipientsPage{}, r.requestID, derr(fmt.Errorf("body larger than %d bytes", c.maxBody))
	}
	var p recipientsPage
	s := &scanner{b: r.body}
	p.cursor, err = s.recipientsPage(func(id []byte) error {
		p.userIDs = append(p.userIDs, validUTF8(id))
		return nil
	})
	if err != nil {
		return recipientsPage{}, r.requestID, derr(err)
	}
	return p, r.requestID, nil
}

// recipientsPage is one decoded page of the recipient list.
type recipientsPage struct {
	userIDs []string
	cursor  string // next cursor; empty when this is the last page
}
