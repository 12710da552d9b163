package main

import (
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// Attack sizes of TestSearchesUnderConnectionAttack.
const (
	idleAttackers     = 200
	slowBodyAttackers = 50
	searchClients     = 8
	searchesEach      = 25
)

// While 200 connections send nothing and 50 send a body partway, 8
// clients searching are all answered; the attackers are cut off by the
// server's timeouts, and its open files and goroutines return to what they
// were. Loopback only. The searches' p95 with and without the attackers is
// logged, not asserted: timings are measured, never tested (see
// docs/performance.md).
func TestSearchesUnderConnectionAttack(t *testing.T) {
	if _, err := os.Stat("/proc/self/fd"); err != nil {
		t.Skip("counts open files in /proc/self/fd")
	}
	const timeout = time.Second
	base, _, stop := serveOn(t, env(nil), "-rate-limit", "-1",
		"-read-header-timeout", timeout.String(), "-read-timeout", timeout.String(), "-idle-timeout", timeout.String())
	defer func() { require.NoError(t, stop()) }()
	addr := strings.TrimPrefix(base, "http://")

	code, out := call(t, "POST", base+"/memory_stores", "", storeBody)
	require.Equal(t, http.StatusOK, code, "%v", out)
	topics := []string{"dark roast coffee", "a peanut allergy", "jazz concerts", "window seats"}
	for i, topic := range topics {
		code, out := call(t, "POST", base+"/memory_stores/support:update_memories", "", map[string]any{
			"scope": fmt.Sprint("user-", i), "update_delay": 0,
			"items": []any{map[string]any{"role": "user", "content": "I care about " + topic + " a lot."}}})
		require.Equal(t, http.StatusAccepted, code, "%v", out)
		done := waitUpdate(t, base, "support", out["update_id"].(string))
		require.Equal(t, "completed", done["status"], "%v", done)
	}

	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: searchClients}}
	defer client.CloseIdleConnections()
	search := func(n int) []time.Duration {
		var mu sync.Mutex
		var lat []time.Duration
		var wg sync.WaitGroup
		for c := range searchClients {
			wg.Go(func() {
				for i := range n {
					body := fmt.Sprintf(`{"scope":"user-%d","items":[{"role":"user","content":"What about %s?"}]}`, (c+i)%len(topics), topics[(c+i)%len(topics)])
					start := time.Now()
					resp, err := client.Post(base+"/memory_stores/support:search_memories?api-version=v1", "application/json", strings.NewReader(body))
					if err != nil {
						t.Error(err)
						return
					}
					_, _ = io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
					d := time.Since(start)
					if resp.StatusCode != http.StatusOK {
						t.Errorf("search: %d", resp.StatusCode)
						return
					}
					mu.Lock()
					lat = append(lat, d)
					mu.Unlock()
				}
			})
		}
		wg.Wait()
		return lat
	}
	search(5) // connections open, caches warm
	fds, goroutines := openFiles(t), runtime.NumGoroutine()

	p95 := percentile(search(searchesEach), 95)
	g0 := runtime.NumGoroutine()
	held := attack(t, addr)
	// Searched while the attackers are held, not while they connect: the
	// server has a goroutine on each.
	for settle := time.Now().Add(timeout / 2); runtime.NumGoroutine() < g0+len(held) && time.Now().Before(settle); {
		time.Sleep(10 * time.Millisecond)
	}
	lat := search(searchesEach)
	require.Len(t, lat, searchClients*searchesEach, "every search answered while the attackers are held")
	t.Logf("p95 %v without the attackers, %v with %d idle and %d slow-body connections", p95, percentile(lat, 95), idleAttackers, slowBodyAttackers)

	// The server closes every attacker's connection; each attacker then
	// closes its own end, as a client seeing EOF would.
	var wg sync.WaitGroup
	var open atomic.Int32
	for _, c := range held {
		wg.Go(func() {
			_ = c.SetReadDeadline(time.Now().Add(3 * timeout))
			_, err := io.Copy(io.Discard, c)
			if ne := net.Error(nil); errors.As(err, &ne) && ne.Timeout() {
				open.Add(1)
			}
			c.Close()
		})
	}
	wg.Wait()
	require.Zero(t, open.Load(), "connections the server left open after %v", 3*timeout)
	client.CloseIdleConnections()
	deadline := time.Now().Add(3 * timeout)
	for {
		f, g := openFiles(t), runtime.NumGoroutine()
		if f <= fds && g <= goroutines+2 {
			t.Logf("open files %d (before the attack %d), goroutines %d (before %d)", f, fds, g, goroutines)
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("open files %d (before the attack %d), goroutines %d (before %d)", f, fds, g, goroutines)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// attack opens the idle connections, which send nothing, and the
// slow-body ones, which send a search's headers and one byte of its
// 1000-byte body.
func attack(t *testing.T, addr string) []net.Conn {
	t.Helper()
	var conns []net.Conn
	for i := range idleAttackers + slowBodyAttackers {
		c, err := net.Dial("tcp", addr)
		require.NoError(t, err)
		conns = append(conns, c)
		if i >= idleAttackers {
			_, err := c.Write([]byte("POST /memory_stores/support:search_memories HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{"))
			require.NoError(t, err)
		}
	}
	return conns
}

// percentile returns the p-th percentile of ds.
func percentile(ds []time.Duration, p int) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	slices.Sort(ds)
	return ds[min(len(ds)-1, len(ds)*p/100)]
}

// openFiles counts this process's open files.
func openFiles(t *testing.T) int {
	t.Helper()
	es, err := os.ReadDir("/proc/self/fd")
	require.NoError(t, err)
	return len(es)
}
