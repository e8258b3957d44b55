package views

import (
	"strings"
	"testing"
	"time"
)

// fakeClock is a clock the test moves by hand.
type fakeClock struct{ t time.Time }

func (c *fakeClock) now() time.Time { return c.t }

func TestProgress(t *testing.T) {
	type step struct {
		after   time.Duration // clock advance before the step
		targets int
	}
	steady := []step{{200 * time.Millisecond, 500}, {900 * time.Millisecond, 500}, {2 * time.Second, 500}, {4 * time.Second, 500}, {time.Second, 500}, {3 * time.Second, 500}}
	tests := []struct {
		name            string
		terminal, color bool
		steps           []step
		want            []string // substrings, in order
		wantNone        []string
	}{
		{"log: a line every few seconds", false, false, append(steady[:5:5], step{5 * time.Second, 500}),
			[]string{"  ... 2,000 of 3,000 targets (66%), 282/s, about 4s left\n", "  ... 3,000 of 3,000 targets (100%), 229/s\n"}, []string{"\r", "\x1b"}},
		{"terminal bar after a second", true, true, steady,
			[]string{"\r[\x1b[32m================\x1b[0m        ] 1,000 of 1,500 targets (66%), 909/s, about 1s left\x1b[K"}, []string{"0 of 3,000"}},
		{"terminal without colour", true, false, steady,
			[]string{"\r[================        ] 1,000 of 1,500"}, []string{"\x1b"}},
		{"quick apply: no bar", true, true, []step{{100 * time.Millisecond, 500}, {300 * time.Millisecond, 500}}, nil, []string{"\r", "\x1b"}},
		{"quick log: no line", false, false, []step{{time.Second, 500}, {time.Second, 500}}, nil, []string{"..."}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			clock := &fakeClock{time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)}
			p := newProgress(tt.terminal, tt.color, clock.now)
			total := 0
			for _, s := range tt.steps {
				total += s.targets
			}
			if tt.name == "terminal bar after a second" || tt.name == "terminal without colour" {
				total = 1500 // the bar's figures are easier to read with a small total
			}
			p.begin(total)
			var out strings.Builder
			for _, s := range tt.steps {
				clock.t = clock.t.Add(s.after)
				out.WriteString(p.advance(s.targets))
			}
			out.WriteString(p.clear())
			got := out.String()
			rest := got
			for _, w := range tt.want {
				i := strings.Index(rest, w)
				if i < 0 {
					t.Fatalf("output lacks %q (in order):\n%q", w, got)
				}
				rest = rest[i+len(w):]
			}
			for _, w := range tt.wantNone {
				if strings.Contains(got, w) {
					t.Errorf("output has %q:\n%q", w, got)
				}
			}
			if tt.terminal && strings.Contains(got, "\r[") && !strings.HasSuffix(got, "\r"+clearToEOL) && !strings.HasSuffix(got, "\r") {
				t.Errorf("bar not cleared at the end: %q", got)
			}
		})
	}
}
