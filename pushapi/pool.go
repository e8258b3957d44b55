package pushapi

import "sync"

// The memory a client reuses from one request or answer to the next.

// resultMem is the memory of one answer's results and device counts. A
// client lends it to the SendResponse decoded into it, and takes it back
// at SendResponse.Release: a 500-target answer's results are 60 KB, and
// a million targets' answers would otherwise be half of what apply
// allocates.
type resultMem struct {
	rs     []Result
	counts []int
}

// size makes room for n results, zero (a pooled mem is cleared).
func (m *resultMem) size(n int) {
	if cap(m.rs) < n || cap(m.counts) < n {
		m.rs, m.counts = make([]Result, n), make([]int, n)
		return
	}
	m.rs, m.counts = m.rs[:n], m.counts[:n]
}

// scratch is what decoding an answer needs only while it runs: the
// targets and the entries, kept for a later answer.
type scratch struct {
	ts []target
	es []entry
}

// maxPooledTargets bounds the scratch kept: the spec's requests have at
// most 500 targets, a larger one is a caller's exception.
const maxPooledTargets = 4096

// scratchPool recycles the scratch of a client's answers, and the memory
// of their results once released; a nil pool allocates afresh.
type scratchPool struct{ p, results sync.Pool }

func (p *scratchPool) get() *scratch {
	if p == nil {
		return &scratch{}
	}
	return fromPool[scratch](&p.p)
}

// fromPool takes a *T from pool, or a new one.
func fromPool[T any](pool *sync.Pool) *T {
	if v, ok := pool.Get().(*T); ok {
		return v
	}
	return new(T)
}

// put keeps sc, cleared so it holds on to no request or results.
func (p *scratchPool) put(sc *scratch) {
	if p == nil || cap(sc.ts) > maxPooledTargets || cap(sc.es) > maxPooledTargets {
		return
	}
	clear(sc.ts[:cap(sc.ts)])
	clear(sc.es[:cap(sc.es)])
	p.p.Put(sc)
}

// mem is memory for an answer's results.
func (p *scratchPool) mem() *resultMem {
	if p == nil {
		return &resultMem{}
	}
	return fromPool[resultMem](&p.results)
}

// putMem keeps m, cleared so it holds on to no strings of an answer.
func (p *scratchPool) putMem(m *resultMem) {
	if p == nil || cap(m.rs) > maxPooledTargets {
		return
	}
	clear(m.rs[:cap(m.rs)])
	clear(m.counts[:cap(m.counts)])
	p.results.Put(m)
}

// maxPooledBody keeps one huge request from pinning its buffer in the pool.
const maxPooledBody = 4 << 20

// bufPool recycles byte slices for request and response bodies.
type bufPool struct{ p sync.Pool }

func (p *bufPool) get() *[]byte {
	if b, ok := p.p.Get().(*[]byte); ok {
		*b = (*b)[:0]
		return b
	}
	b := make([]byte, 0, 64<<10)
	return &b
}

func (p *bufPool) put(b *[]byte) {
	if cap(*b) <= maxPooledBody {
		p.p.Put(b)
	}
}
