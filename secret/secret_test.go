package secret

import (
	"strings"
	"testing"
)

func TestCheckBaseURL(t *testing.T) {
	const key = "sk4eC39HqLyjWDarjtT1zdp7dc"
	tests := []struct {
		in   string
		want string // "" means refused
	}{
		{"https://push.example.com/v1", "https://push.example.com/v1"},
		{"https://push.example.com/v1/", "https://push.example.com/v1"},
		{"http://127.0.0.1:8787/v1", "http://127.0.0.1:8787/v1"},
		{"http://localhost/v1", "http://localhost/v1"},
		{"http://[::1]:9/v1", "http://[::1]:9/v1"},
		{"http://push.example.com/v1", ""},
		{"https://push.example.com", ""},
		{"https://push.example.com/v2", ""},
		{"https://" + key + "@push.example.com/v1", ""},
		{"https://u:" + key + "@push.example.com/v1", ""},
		{"https://push.example.com/v1?key=" + key, ""},
		{"https://push.example.com/v1?", ""},
		{"https://push.example.com/v1#" + key, ""},
		{"https://push.example.com/" + key + "/v1", ""},
		{"ftp://push.example.com/v1", ""},
		{"push.example.com/v1", ""},
		{"", ""},
	}
	for _, tt := range tests {
		got, err := CheckBaseURL(tt.in)
		if tt.want == "" {
			if err == nil {
				t.Errorf("CheckBaseURL(%q) = %q; want an error", tt.in, got)
			} else if strings.Contains(err.Error(), key) {
				t.Errorf("CheckBaseURL(%q) error quotes the key: %v", tt.in, err)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("CheckBaseURL(%q) = %q, %v; want %q", tt.in, got, err, tt.want)
		}
	}
}

func TestLooksLikeKey(t *testing.T) {
	for v, want := range map[string]bool{
		"PUSHFORM_API_KEY":                                 false,
		"PUSHFORM_PRODUCTION_API_KEY_V2":                   false,
		"push-notifications":                               false,
		"sk_live_4eC39HqLyjWDarjtT1zdp7":                   true,
		"k-test":                                           false,
		"2026-11-27T08:00:00+01:00":                        false,
		"2026-11-27T08:00:00.250-05:30":                    false,
		"2026-11-27T08:00:00Z":                             false,
		"2026-11-27T08:00:00+01:00x4eC39HqLyjWDarjtT1zdp7": true,
	} {
		if got := LooksLikeKey(v); got != want {
			t.Errorf("LooksLikeKey(%q) = %v; want %v", v, got, want)
		}
	}
}
