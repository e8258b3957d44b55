package config

import (
	"strings"
	"testing"
	"time"
)

func TestParseRate(t *testing.T) {
	tests := []struct {
		in   string
		want Rate // zero: refused
		str  string
	}{
		{"10000/minute", Rate{10000, time.Minute}, "10000/minute"},
		{"5/second", Rate{5, time.Second}, "5/second"},
		{"3/hour", Rate{3, time.Hour}, "3/hour"},
		{"600/m", Rate{600, time.Minute}, "600/minute"},
		{"1/s", Rate{1, time.Second}, "1/second"},
		{" 7 / h ", Rate{7, time.Hour}, "7/hour"},
		{"0/minute", Rate{}, ""},
		{"-5/minute", Rate{}, ""},
		{"1.5/minute", Rate{}, ""},
		{"10/day", Rate{}, ""},
		{"10", Rate{}, ""},
		{"/minute", Rate{}, ""},
		{"99999999999999999999/second", Rate{}, ""},
		{"", Rate{}, ""},
	}
	for _, tt := range tests {
		got, err := ParseRate(tt.in)
		if tt.want == (Rate{}) {
			if err == nil {
				t.Errorf("ParseRate(%q) = %v; want an error", tt.in, got)
			}
			continue
		}
		if err != nil || got != tt.want || got.String() != tt.str {
			t.Errorf("ParseRate(%q) = %v (%q), %v; want %v (%q)", tt.in, got, got.String(), err, tt.want, tt.str)
		}
	}
	if s := (Rate{Count: 2, Per: 90 * time.Second}).String(); s != "2/1m30s" {
		t.Errorf("odd period: %q", s)
	}
}

func TestParseDuration(t *testing.T) {
	tests := []struct {
		in      string
		want    time.Duration
		errPart string
	}{
		{"24h", 24 * time.Hour, ""},
		{"90m", 90 * time.Minute, ""},
		{"7d", 7 * 24 * time.Hour, ""},
		{"1d12h", 36 * time.Hour, ""},
		{"1h30m", 90 * time.Minute, ""},
		{"0s", 0, "positive"},
		{"0d", 0, "positive"},
		{"-1h", 0, "positive"},
		{"-1d", 0, "unit"},
		{"1d-2h", 0, "unit"},
		{"d", 0, "unit"},
		{"tomorrow", 0, "unit"},
		{"24", 0, "unit"},
		{"", 0, "unit"},
		{"999999999999d", 0, "too long"},
	}
	for _, tt := range tests {
		got, err := parseDuration(tt.in)
		if tt.errPart != "" {
			if err == nil || !strings.Contains(err.Error(), tt.errPart) {
				t.Errorf("parseDuration(%q) = %v, %v; want an error about %q", tt.in, got, err, tt.errPart)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("parseDuration(%q) = %v, %v; want %v", tt.in, got, err, tt.want)
		}
	}
}
