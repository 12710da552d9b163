package main

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// resolver answers lookups from a table, as DNS or /etc/hosts would.
func resolver(table map[string][]string) func(context.Context, string) ([]net.IPAddr, error) {
	return func(_ context.Context, host string) ([]net.IPAddr, error) {
		addrs, ok := table[host]
		if !ok {
			return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
		}
		var out []net.IPAddr
		for _, a := range addrs {
			out = append(out, net.IPAddr{IP: net.ParseIP(a)})
		}
		return out, nil
	}
}

func TestListenAddr(t *testing.T) {
	ctx := context.Background()
	hosts := resolver(map[string][]string{"localhost": {"::1", "127.0.0.1"}, "hijacked": {"127.0.0.1", "10.0.0.7"}, "lan": {"192.168.1.2"}})
	for _, c := range []struct {
		addr, want string
		keys       bool
		err        string
	}{
		{":8080", "127.0.0.1:8080", false, ""},
		{"0.0.0.0:8080", "", false, "loopback only"},
		{"[::1]:9", "[::1]:9", false, ""},
		{"127.0.0.2:9", "127.0.0.2:9", false, ""},
		{"localhost:9", "127.0.0.1:9", false, ""}, // the resolved address, IPv4 first
		{"hijacked:9", "", false, "10.0.0.7"},     // every address must be loopback
		{"lan:9", "", false, "loopback only"},
		{"nowhere:9", "", false, "no such host"},
		{":8080", ":8080", true, ""},
		{"lan:9", "lan:9", true, ""},
		{"8080", "", false, "missing port"},
	} {
		got, err := listenAddr(ctx, c.addr, c.keys, hosts)
		if c.err != "" {
			assert.ErrorContains(t, err, c.err, c.addr)
			continue
		}
		require.NoError(t, err, c.addr)
		assert.Equal(t, c.want, got, c.addr)
	}
	// the machine's own resolver: localhost is loopback
	got, err := listenAddr(ctx, "localhost:0", false, net.DefaultResolver.LookupIPAddr)
	require.NoError(t, err)
	host, _, _ := net.SplitHostPort(got)
	assert.True(t, net.ParseIP(host).IsLoopback(), got)
}

// The listener serves at most n connections at once: the next waits
// until one closes, and closing the listener ends the wait.
func TestLimitListener(t *testing.T) {
	tcp, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	ln := newLimitListener(tcp, 2)
	accepted := make(chan net.Conn, 10)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				close(accepted)
				return
			}
			accepted <- c
		}
	}()
	var clients []net.Conn
	for range 3 {
		c, err := net.Dial("tcp", tcp.Addr().String())
		require.NoError(t, err)
		defer c.Close()
		clients = append(clients, c)
	}
	first, second := <-accepted, <-accepted
	select {
	case <-accepted:
		t.Fatal("a third connection was accepted while two were open")
	case <-time.After(200 * time.Millisecond):
	}
	require.NoError(t, first.Close())
	_ = first.Close() // frees nothing more
	var third net.Conn
	select {
	case third = <-accepted:
		defer third.Close()
	case <-time.After(5 * time.Second):
		t.Fatal("the third connection was not accepted after one closed")
	}
	fourth, err := net.Dial("tcp", tcp.Addr().String())
	require.NoError(t, err)
	defer fourth.Close()
	select {
	case <-accepted:
		t.Fatal("a connection closed twice freed two slots")
	case <-time.After(200 * time.Millisecond):
	}
	second.Close()
	select {
	case c := <-accepted:
		c.Close()
	case <-time.After(5 * time.Second):
		t.Fatal("the fourth connection was not accepted after one closed")
	}
	require.NoError(t, ln.Close())
	select {
	case _, ok := <-accepted:
		assert.False(t, ok, "Accept ended")
	case <-time.After(5 * time.Second):
		t.Fatal("Accept still waiting after Close")
	}
}

// The server closes a connection whose body stops halfway once the read
// timeout passes, and an idle one once its timeout passes; the limits are
// flags, refused when not positive.
func TestConnectionTimeouts(t *testing.T) {
	for _, bad := range [][]string{{"-max-conns", "0"}, {"-read-timeout", "0s"}, {"-write-timeout", "-1s"}, {"-idle-timeout", "0s"}, {"-read-header-timeout", "0s"}, {"-rate-limit", "0"}, {"-rate-burst", "0"}} {
		err := run(context.Background(), append([]string{"-addr", "127.0.0.1:0"}, bad...), env(nil), io.Discard, nil)
		require.Error(t, err, "%v", bad)
		assert.Contains(t, err.Error(), bad[0])
	}
	base, _, stop := serveOn(t, env(nil), "-read-timeout", "500ms", "-read-header-timeout", "500ms", "-idle-timeout", "500ms")
	defer func() { assert.NoError(t, stop()) }()
	code, out := call(t, "POST", base+"/memory_stores", "", storeBody)
	require.Equal(t, http.StatusOK, code, "%v", out)
	addr := strings.TrimPrefix(base, "http://")
	closedWithin := func(c net.Conn, d time.Duration) bool {
		require.NoError(t, c.SetReadDeadline(time.Now().Add(d)))
		_, err := io.Copy(io.Discard, c)
		var ne net.Error
		return !(errors.As(err, &ne) && ne.Timeout())
	}
	slow, err := net.Dial("tcp", addr)
	require.NoError(t, err)
	defer slow.Close()
	_, err = slow.Write([]byte("POST /memory_stores/support:search_memories HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{\"sc"))
	require.NoError(t, err)
	assert.True(t, closedWithin(slow, 5*time.Second), "a body sent partway keeps its connection")

	silent, err := net.Dial("tcp", addr)
	require.NoError(t, err)
	defer silent.Close()
	assert.True(t, closedWithin(silent, 5*time.Second), "a connection that sends nothing stays open")

	idle, err := net.Dial("tcp", addr)
	require.NoError(t, err)
	defer idle.Close()
	_, err = idle.Write([]byte("GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"))
	require.NoError(t, err)
	resp, err := http.ReadResponse(bufio.NewReader(idle), nil)
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	assert.True(t, closedWithin(idle, 5*time.Second), "an idle keep-alive connection stays open")
}
