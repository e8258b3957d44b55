package views

import (
	"fmt"
	"strings"
	"time"
)

// Progress display settings.
const (
	barAfter   = time.Second            // no bar for applies quicker than this
	barEvery   = 100 * time.Millisecond // redraw the bar at most this often
	lineEvery  = 5 * time.Second        // a plain progress line without a terminal
	barWidth   = 24
	clearToEOL = "\x1b[K"
	greenOn    = "\x1b[32m"
	colourOff  = "\x1b[0m"
)

// progress renders targets done: a bar redrawn in place on a terminal, or a
// plain line every few seconds in a log. Its methods return what to write,
// so the view writes under its own lock; none of them writes itself.
type progress struct {
	terminal, color bool
	now             func() time.Time
	total, done     int
	started, last   time.Time
	shown           int  // width of the bar on screen; 0 when none is
	stopped         bool // finish has run: draw nothing more
	// paced names the send rates the run is paced at, "" for none.
	paced string
}

func newProgress(terminal, color bool, now func() time.Time) *progress {
	return &progress{terminal: terminal, color: color, now: now}
}

// begin starts the clock for total targets.
func (p *progress) begin(total int) {
	p.total = total
	p.started = p.now()
	p.last = p.started
}

// advance counts n more targets done.
func (p *progress) advance(n int) string {
	p.done += n
	if p.stopped || p.started.IsZero() {
		return ""
	}
	now := p.now()
	if !p.terminal {
		if now.Sub(p.last) < lineEvery {
			return ""
		}
		p.last = now
		return "  ... " + p.status(now) + "\n"
	}
	if now.Sub(p.started) < barAfter || (p.shown > 0 && now.Sub(p.last) < barEvery && p.done < p.total) {
		return ""
	}
	p.last = now
	return p.bar(now)
}

// redraw draws the bar again after a line printed over it.
func (p *progress) redraw() string {
	if !p.terminal || p.stopped || p.started.IsZero() || p.now().Sub(p.started) < barAfter {
		return ""
	}
	return p.bar(p.now())
}

// clear removes the bar from the screen.
func (p *progress) clear() string {
	if p.shown == 0 {
		return ""
	}
	n := p.shown
	p.shown = 0
	if p.color {
		return "\r" + clearToEOL
	}
	return "\r" + strings.Repeat(" ", n) + "\r"
}

// bar returns the bar, drawn over the current line.
func (p *progress) bar(now time.Time) string {
	filled := barWidth
	if p.total > 0 && p.done < p.total {
		filled = barWidth * p.done / p.total
	}
	fill, rest := strings.Repeat("=", filled), strings.Repeat(" ", barWidth-filled)
	text := " " + p.status(now)
	width := 2 + barWidth + len([]rune(text))
	if p.color {
		p.shown = width
		return "\r[" + greenOn + fill + colourOff + rest + "]" + text + clearToEOL
	}
	pad := ""
	if width < p.shown {
		pad = strings.Repeat(" ", p.shown-width) // cover a longer previous bar
	}
	p.shown = width + len(pad)
	return "\r[" + fill + rest + "]" + text + pad
}

// status says "4,500 of 12,000 targets (37%), 1,230/s, about 6s left",
// with ", paced at 600/minute" after the rate when send rates pace it.
func (p *progress) status(now time.Time) string {
	s := fmt.Sprintf("%s of %s targets", Count(p.done), Count(p.total))
	if p.total > 0 {
		s += fmt.Sprintf(" (%d%%)", 100*p.done/p.total)
	}
	elapsed := now.Sub(p.started)
	if elapsed <= 0 || p.done == 0 {
		return s
	}
	rate := float64(p.done) / elapsed.Seconds()
	s += fmt.Sprintf(", %s/s", Count(int(rate+0.5)))
	if p.paced != "" {
		s += ", paced at " + p.paced
	}
	if left := p.total - p.done; left > 0 {
		eta := max(time.Duration(float64(left)/rate*float64(time.Second)).Round(time.Second), time.Second)
		s += fmt.Sprintf(", about %s left", eta)
	}
	return s
}
