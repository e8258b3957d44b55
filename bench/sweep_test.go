package main

import (
	"strings"
	"testing"
	"time"
)

func TestParseLatencies(t *testing.T) {
	for _, tt := range []struct {
		in      string
		want    []time.Duration
		wantErr string
	}{
		{in: "50ms", want: []time.Duration{50 * time.Millisecond}},
		{in: "0,5ms,20ms,50ms", want: []time.Duration{0, 5 * time.Millisecond, 20 * time.Millisecond, 50 * time.Millisecond}},
		{in: " 0 , 1s ,", want: []time.Duration{0, time.Second}},
		{in: "", wantErr: "no latency"},
		{in: "5", wantErr: "missing unit"},
		{in: "-5ms", wantErr: "negative"},
	} {
		got, err := parseLatencies(tt.in)
		if tt.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("parseLatencies(%q) error = %v; want one containing %q", tt.in, err, tt.wantErr)
			}
			continue
		}
		if err != nil || len(got) != len(tt.want) {
			t.Errorf("parseLatencies(%q) = %v, %v; want %v", tt.in, got, err, tt.want)
			continue
		}
		for i := range got {
			if got[i] != tt.want[i] {
				t.Errorf("parseLatencies(%q)[%d] = %v; want %v", tt.in, i, got[i], tt.want[i])
			}
		}
	}
}

func TestWriteSweep(t *testing.T) {
	rows := []sweepRow{
		{latency: 0, targets: 1_000_000, apply: procRun{wall: 2 * time.Second, cpu: 1200 * time.Millisecond},
			peer: procRun{wall: 1200 * time.Millisecond, cpu: 400 * time.Millisecond}, load: "1.50"},
		{latency: 5 * time.Millisecond, targets: 1_000_000, apply: procRun{wall: 1500 * time.Millisecond, cpu: time.Second},
			peer: procRun{wall: 1350 * time.Millisecond, cpu: 500 * time.Millisecond}, load: "2.00"},
	}
	var b strings.Builder
	WriteSweep(&b, rows)
	want := `| sandbox latency | pushform apply (CPU) | bare Go sender (CPU) | ratio | CPU per target, pushform / sender | load |
|---|---|---|---|---|---|
| 0 ms | 2.00 s (1.20 s) | 1.20 s (0.40 s) | 0.60 | 1.20 us / 0.40 us = 3.0x | 1.50 |
| 5 ms | 1.50 s (1.00 s) | 1.35 s (0.50 s) | 0.90 | 1.00 us / 0.50 us = 2.0x | 2.00 |
`
	if b.String() != want {
		t.Errorf("WriteSweep =\n%s\nwant\n%s", b.String(), want)
	}

	base := procRun{wall: 3 * time.Second, cpu: 2 * time.Second}
	rows[0].base = &base
	b.Reset()
	WriteSweep(&b, rows[:1])
	if got := strings.Split(b.String(), "\n")[2]; !strings.HasSuffix(got, "| 3.00 s (2.00 s) | 0.40 | 2.00 us = 5.0x | 1.50 |") {
		t.Errorf("WriteSweep with a base binary: row %q", got)
	}
}
