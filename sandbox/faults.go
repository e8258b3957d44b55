package sandbox

import (
	"math"
	"math/rand/v2"
	"sync"
	"time"
)

type fault uint8

const (
	faultNone       fault = iota
	faultFailBefore       // 503 + Retry-After: 1, nothing processed
	faultFailAfter        // processed, then 500: an ambiguous failure
	faultDropBefore       // connection closed, nothing processed
	faultDropAfter        // processed, then connection closed
)

func (f fault) String() string {
	switch f {
	case faultFailBefore:
		return "503-before-processing"
	case faultFailAfter:
		return "500-after-processing"
	case faultDropBefore:
		return "dropped-before-processing"
	case faultDropAfter:
		return "dropped-after-processing"
	}
	return ""
}

// faultSource draws one fault decision per send request from a PRNG seeded
// with Options.FaultSeed: the n-th send request to arrive always gets the
// same decision for the same seed and rates.
type faultSource struct {
	mu             sync.Mutex
	rng            *rand.Rand
	failRate, drop float64
}

func newFaultSource(failRate, dropRate float64, seed int64) *faultSource {
	clamp := func(r float64) float64 {
		if math.IsNaN(r) || r < 0 {
			return 0
		}
		return min(r, 1)
	}
	f := &faultSource{failRate: clamp(failRate)}
	f.drop = min(clamp(dropRate), 1-f.failRate)
	if f.failRate > 0 || f.drop > 0 {
		f.rng = rand.New(rand.NewPCG(uint64(seed), 0x5eed_fa17))
	}
	return f
}

func (f *faultSource) draw() fault {
	if f.rng == nil {
		return faultNone
	}
	f.mu.Lock()
	u := f.rng.Float64()
	f.mu.Unlock()
	switch {
	case u < f.failRate/2:
		return faultFailBefore
	case u < f.failRate:
		return faultFailAfter
	case u < f.failRate+f.drop/2:
		return faultDropBefore
	case u < f.failRate+f.drop:
		return faultDropAfter
	}
	return faultNone
}

// limiter is a token bucket: rate tokens a second, a burst of rate. A nil
// limiter admits everything.
type limiter struct {
	mu     sync.Mutex
	rate   float64
	tokens float64
	last   time.Time
}

func newLimiter(perSecond int) *limiter {
	if perSecond <= 0 {
		return nil
	}
	return &limiter{rate: float64(perSecond), tokens: float64(perSecond)}
}

// allow takes a token; when there is none it says after how many whole
// seconds one will be there (at least 1).
func (l *limiter) allow(now time.Time) (ok bool, retryAfter int) {
	if l == nil {
		return true, 0
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.last.IsZero() {
		l.tokens = min(l.rate, l.tokens+now.Sub(l.last).Seconds()*l.rate)
	}
	l.last = now
	if l.tokens >= 1 {
		l.tokens--
		return true, 0
	}
	wait := (1 - l.tokens) / l.rate
	return false, max(1, int(math.Ceil(wait)))
}

// failTargetsMsg is the message of a target failed by Options.FailTargets
// or FailIDs.
const failTargetsMsg = "device rejected the notification (a sandbox fault: --fail-targets or fail_ids)"

// idSet is ids as a set; nil for none.
func idSet(ids []string) map[string]bool {
	if len(ids) == 0 {
		return nil
	}
	set := make(map[string]bool, len(ids))
	for _, id := range ids {
		set[id] = true
	}
	return set
}

// failsTarget reports whether Options.FailIDs names target id, or
// FailTargets fails it: its FNV-1a hash, salted with FaultSeed, falls in
// the lowest FailTargets of the range.
func (s *Server) failsTarget(id string) bool {
	if s.failIDs[id] {
		return true
	}
	f := s.opts.FailTargets
	if !(f > 0) {
		return false
	}
	if f >= 1 {
		return true
	}
	h := uint64(14695981039346656037) ^ uint64(s.opts.FaultSeed)
	for i := 0; i < len(id); i++ {
		h ^= uint64(id[i])
		h *= 1099511628211
	}
	h ^= h >> 33 // FNV's low bits are weak; fold the high ones in
	h *= 0xff51afd7ed558ccd
	h ^= h >> 33
	return float64(h>>11)/(1<<53) < f
}
