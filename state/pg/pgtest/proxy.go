package pgtest

import (
	"net"
	"net/url"
	"sync"
	"sync/atomic"
	"testing"
)

// StallProxy forwards TCP connections to the test server until Stall is
// called; from then on it forwards nothing, as a network that drops every
// packet, but a side that closes still closes the other, as a firewall's
// reset would.
type StallProxy struct {
	ln      net.Listener
	stalled atomic.Bool
	wg      sync.WaitGroup
	mu      sync.Mutex
	conns   []net.Conn
}

// NewStallProxy starts a proxy to the server of connURL on loopback and
// returns it with connURL pointed at it. It stops when the test ends.
func NewStallProxy(tb testing.TB, connURL string) (*StallProxy, string) {
	tb.Helper()
	u, err := url.Parse(connURL)
	if err != nil {
		tb.Fatal("the test server's URL does not parse")
	}
	target := u.Host
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	p := &StallProxy{ln: ln}
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			up, err := net.Dial("tcp", target)
			if err != nil {
				c.Close()
				continue
			}
			p.mu.Lock()
			p.conns = append(p.conns, c, up)
			p.mu.Unlock()
			p.wg.Add(2)
			go p.pipe(c, up)
			go p.pipe(up, c)
		}
	}()
	tb.Cleanup(func() {
		ln.Close()
		p.mu.Lock()
		for _, c := range p.conns {
			c.Close() // a driver's cancel request, stalled, would wait 15 s
		}
		p.mu.Unlock()
		p.wg.Wait()
	})
	u.Host = ln.Addr().String()
	return p, u.String()
}

// pipe copies from src to dst while not stalled, discarding afterwards;
// when src ends, both are closed.
func (p *StallProxy) pipe(src, dst net.Conn) {
	defer p.wg.Done()
	defer src.Close()
	defer dst.Close()
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		if n > 0 && !p.stalled.Load() {
			if _, werr := dst.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			return
		}
	}
}

// Stall stops forwarding, for good.
func (p *StallProxy) Stall() { p.stalled.Store(true) }

// Silent starts a server on loopback that accepts connections and never
// answers, and returns its address. It stops when the test ends.
func Silent(tb testing.TB) string {
	tb.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	var mu sync.Mutex
	var conns []net.Conn
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
		}
	}()
	tb.Cleanup(func() {
		ln.Close()
		mu.Lock()
		defer mu.Unlock()
		for _, c := range conns {
			c.Close()
		}
	})
	return ln.Addr().String()
}
