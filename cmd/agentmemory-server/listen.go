package main

import (
	"context"
	"flag"
	"fmt"
	"net"
	"net/http"
	"slices"
	"sync"
	"time"
)

// Connection limits' defaults: see connFlags.
const (
	defaultMaxConns          = 512
	defaultReadHeaderTimeout = 10 * time.Second
	defaultReadTimeout       = time.Minute
	defaultWriteTimeout      = 5 * time.Minute
	defaultIdleTimeout       = time.Minute
)

// connLimits bound what a connection may hold: how many are served at
// once, and how long a request's headers, its whole request (body
// included), its answer and an idle keep-alive connection may take.
type connLimits struct {
	maxConns                      int
	readHeader, read, write, idle time.Duration
}

// connFlags defines the flags of the connection limits on fs.
func connFlags(fs *flag.FlagSet) *connLimits {
	c := &connLimits{}
	fs.IntVar(&c.maxConns, "max-conns", defaultMaxConns, "connections served at once; more wait to be accepted")
	fs.DurationVar(&c.readHeader, "read-header-timeout", defaultReadHeaderTimeout, "how long a connection may take to send a request's headers (a new connection included)")
	fs.DurationVar(&c.read, "read-timeout", defaultReadTimeout, "how long a request, its body included, may take to arrive")
	fs.DurationVar(&c.write, "write-timeout", defaultWriteTimeout, "how long a request may take from its headers to the end of its answer, model work included")
	fs.DurationVar(&c.idle, "idle-timeout", defaultIdleTimeout, "how long a keep-alive connection may wait for its next request")
	return c
}

// check refuses limits that are not positive.
func (c *connLimits) check() error {
	if c.maxConns <= 0 {
		return fmt.Errorf("-max-conns %d: must be positive", c.maxConns)
	}
	for _, d := range []struct {
		name string
		v    time.Duration
	}{{"-read-header-timeout", c.readHeader}, {"-read-timeout", c.read}, {"-write-timeout", c.write}, {"-idle-timeout", c.idle}} {
		if d.v <= 0 {
			return fmt.Errorf("%s %s: must be positive", d.name, d.v)
		}
	}
	return nil
}

// apply sets the server's timeouts.
func (c *connLimits) apply(srv *http.Server) {
	srv.ReadHeaderTimeout, srv.ReadTimeout, srv.WriteTimeout, srv.IdleTimeout = c.readHeader, c.read, c.write, c.idle
}

// limitListener accepts at most n connections at once: Accept waits
// while n are open (the kernel's backlog holds the others), and closing
// the listener ends the wait.
type limitListener struct {
	net.Listener
	sem       chan struct{}
	done      chan struct{}
	closeOnce sync.Once
}

func newLimitListener(l net.Listener, n int) *limitListener {
	return &limitListener{Listener: l, sem: make(chan struct{}, n), done: make(chan struct{})}
}

// Accept waits for a free slot, then for a connection.
func (l *limitListener) Accept() (net.Conn, error) {
	select {
	case l.sem <- struct{}{}:
	case <-l.done:
		return nil, net.ErrClosed
	}
	c, err := l.Listener.Accept()
	if err != nil {
		<-l.sem
		return nil, err
	}
	return &limitConn{Conn: c, release: func() { <-l.sem }}, nil
}

// Close closes the listener and ends a wait for a slot.
func (l *limitListener) Close() error {
	l.closeOnce.Do(func() { close(l.done) })
	return l.Listener.Close()
}

// limitConn frees its slot when closed (once).
type limitConn struct {
	net.Conn
	once    sync.Once
	release func()
}

func (c *limitConn) Close() error {
	err := c.Conn.Close()
	c.once.Do(c.release)
	return err
}

// listenAddr returns where to listen: addr as given with keys; without
// keys only a loopback address: an empty host becomes 127.0.0.1, and a
// host name is resolved (with lookup) and must have loopback addresses
// only — the first is listened on, so the name cannot resolve elsewhere
// later.
func listenAddr(ctx context.Context, addr string, haveKeys bool, lookup func(ctx context.Context, host string) ([]net.IPAddr, error)) (string, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return "", fmt.Errorf("-addr %q: %w", addr, err)
	}
	if haveKeys {
		return addr, nil
	}
	loopbackOnly := fmt.Errorf("-addr %q: without an API key (AGENTMEMORY_SERVER_KEYS or AGENTMEMORY_SERVER_KEYS_FILE) the server listens on loopback only", addr)
	if host == "" {
		return net.JoinHostPort("127.0.0.1", port), nil
	}
	if ip := net.ParseIP(host); ip != nil {
		if !ip.IsLoopback() {
			return "", loopbackOnly
		}
		return addr, nil
	}
	ips, err := lookup(ctx, host)
	if err != nil {
		return "", fmt.Errorf("-addr %q: %w", addr, err)
	}
	if len(ips) == 0 || slices.ContainsFunc(ips, func(a net.IPAddr) bool { return !a.IP.IsLoopback() }) {
		return "", fmt.Errorf("%w: %s resolves to %v", loopbackOnly, host, ips)
	}
	// IPv4 first, as net.Listen would choose.
	first := ips[0]
	if i := slices.IndexFunc(ips, func(a net.IPAddr) bool { return a.IP.To4() != nil }); i >= 0 {
		first = ips[i]
	}
	return net.JoinHostPort(first.String(), port), nil
}
