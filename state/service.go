package state

import (
	"fmt"
	"net/url"
	"strings"
)

// ServiceKind says how a run reaches the Push Notification Service.
type ServiceKind string

// Service kinds. A `pushform sandbox` process is reached through a base
// URL like any other service: only the sandbox running inside pushform
// (service { sandbox = ... }) is KindSandbox.
const (
	KindSandbox ServiceKind = "sandbox"
	KindBaseURL ServiceKind = "base_url"
)

// Service names the service a run talks to: a base URL, or the embedded
// sandbox with its seed file. Plans carry it, and every output names it.
type Service struct {
	Kind ServiceKind `json:"kind"`
	// URL is the base URL (KindBaseURL): checked, with no credentials.
	URL string `json:"url,omitempty"`
	// Sandbox is the seed file as the service block names it (KindSandbox).
	Sandbox string `json:"sandbox,omitempty"`
}

// String names the service for people: its base URL, or "embedded
// sandbox (sandbox.hcl)".
func (s Service) String() string {
	if s.Kind == KindSandbox {
		return "embedded sandbox (" + s.Sandbox + ")"
	}
	return s.URL
}

// Simulated reports whether the service is the embedded sandbox, whose
// devices and clock are simulated.
func (s Service) Simulated() bool { return s.Kind == KindSandbox }

// Record is what a state records of s: the sandbox, or the base URL's host.
func (s Service) Record() *ServiceRecord {
	if s.Kind == KindSandbox {
		return &ServiceRecord{Kind: KindSandbox}
	}
	host := s.URL
	if u, err := url.Parse(s.URL); err == nil && u.Hostname() != "" {
		host = u.Hostname()
	}
	return &ServiceRecord{Kind: KindBaseURL, Host: strings.ToLower(host)}
}

// ServiceRecord is the service a state's deliveries went to (State.Service):
// the embedded sandbox, or the host of a base URL. A state that records one
// is refused by a run against another: a sandbox's deliveries reached no
// device, and a real service's must not be taken for a rehearsal's.
type ServiceRecord struct {
	Kind ServiceKind `json:"kind"`
	// Host is the base URL's host name, without port (KindBaseURL).
	Host string `json:"host,omitempty"`
}

// String names the record for people.
func (r ServiceRecord) String() string {
	if r.Kind == KindSandbox {
		return "the embedded sandbox"
	}
	return fmt.Sprintf("the service at %s", r.Host)
}

// Same reports whether r and o name one service.
func (r *ServiceRecord) Same(o *ServiceRecord) bool {
	return r != nil && o != nil && *r == *o
}
