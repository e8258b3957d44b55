package testrun

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
)

// recorder is the run's view of what the service received: it wraps the
// in-process transport and keeps each request with its answer, in the
// order they arrived (the requests object).
type recorder struct {
	next http.RoundTripper
	mu   sync.Mutex
	reqs []Request
}

func (r *recorder) RoundTrip(req *http.Request) (*http.Response, error) {
	var body []byte
	if req.Body != nil {
		b, err := io.ReadAll(req.Body)
		req.Body.Close()
		if err != nil {
			return nil, err
		}
		body = b
		req.Body = io.NopCloser(bytes.NewReader(b))
	}
	resp, err := r.next.RoundTrip(req)
	if err != nil {
		return nil, err // no answer: the service did not process it
	}
	answer, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		return nil, err
	}
	resp.Body = io.NopCloser(bytes.NewReader(answer))
	rec, err := request(req, body, resp, answer)
	if err != nil {
		return nil, fmt.Errorf("pushform test: reading what the sandbox received: %w", err)
	}
	r.mu.Lock()
	r.reqs = append(r.reqs, rec)
	r.mu.Unlock()
	return resp, nil
}

// requests returns what was received so far.
func (r *recorder) requests() []Request {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]Request{}, r.reqs...)
}

// request is the record of one exchange.
func request(req *http.Request, body []byte, resp *http.Response, answer []byte) (Request, error) {
	out := Request{Endpoint: req.URL.Path[strings.LastIndexByte(req.URL.Path, '/')+1:], Method: req.Method, Status: resp.StatusCode,
		RequestID: optional(resp.Header.Get("x-request-id")), Notifications: []SentNotification{}, Results: []Result{}}
	if out.Endpoint != "send" {
		return out, nil
	}
	var sent []struct {
		UserIDs            *[]string `json:"userIds"`
		DeviceIDs          *[]string `json:"deviceIds"`
		Topics             *[]string `json:"topics"`
		Title              *string   `json:"title"`
		Body               *string   `json:"body"`
		OpenToURL          *string   `json:"openToUrl"`
		Tag                *string   `json:"tag"`
		BadgeCount         *int64    `json:"badgeCount"`
		SilentInForeground *bool     `json:"silentInForeground"`
	}
	if err := json.Unmarshal(body, &sent); err != nil {
		return out, fmt.Errorf("the body of a send: %w", err)
	}
	for _, n := range sent {
		out.Notifications = append(out.Notifications, SentNotification(n))
	}
	if len(bytes.TrimSpace(answer)) == 0 {
		return out, nil
	}
	var results struct {
		Results []struct {
			UserID      *string   `json:"userId"`
			DeviceID    *string   `json:"deviceId"`
			Topics      *[]string `json:"topics"`
			Status      string    `json:"status"`
			DeviceCount *int64    `json:"deviceCount"`
			Reason      *string   `json:"reason"`
			Message     *string   `json:"message"`
		} `json:"results"`
	}
	if err := json.Unmarshal(answer, &results); err != nil {
		return out, nil // an answer without results (a 400's issues, a 5xx): none to list
	}
	for _, e := range results.Results {
		out.Results = append(out.Results, Result{UserID: e.UserID, DeviceID: e.DeviceID, Topics: e.Topics, Outcome: e.Status,
			DeviceCount: e.DeviceCount, Reason: e.Reason, Message: e.Message})
	}
	return out, nil
}
