package memoryservice

import (
	"bufio"
	"context"
	"errors"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentmemory/agentmemory/internal/logtest"
)

// Each key has its own bucket: a key over its rate gets 429 with
// Retry-After, in the API's error shape, and another key goes on.
func TestRateLimitPerKey(t *testing.T) {
	one, two := "rate-limit-key-one", "rate-limit-key-two"
	s := start(t, dbPath(t), Config{Keys: []APIKey{{Key: one}, {Key: two}}, RateLimit: 0.1, RateBurst: 3})
	get := func(key string) (int, map[string]any, http.Header) {
		return s.send("GET", "/memory_stores?api-version=v1", "", "", map[string]string{"api-key": key})
	}
	for range 3 {
		code, out, _ := get(one)
		require.Equal(t, http.StatusOK, code, "%v", out)
	}
	code, out, h := get(one)
	require.Equal(t, http.StatusTooManyRequests, code, "%v", out)
	assert.Equal(t, "too_many_requests", out["error"].(map[string]any)["code"])
	assert.Contains(t, []string{"9", "10"}, h.Get("Retry-After"), "a token every 10 s")
	code, _, _ = get(two)
	assert.Equal(t, http.StatusOK, code, "another key has its own bucket")

	// without keys, one bucket for every request
	keyless := start(t, dbPath(t), Config{RateLimit: 0.1, RateBurst: 2})
	for range 2 {
		code, _, _ := keyless.send("GET", "/memory_stores", "", "", nil)
		require.Equal(t, http.StatusOK, code)
	}
	code, _, h = keyless.send("GET", "/memory_stores", "", "", nil)
	assert.Equal(t, http.StatusTooManyRequests, code)
	assert.NotEmpty(t, h.Get("Retry-After"))
	code, _, _ = keyless.send("GET", "/healthz", "", "", nil)
	assert.Equal(t, http.StatusOK, code, "health is not limited")
}

func TestTokenBucket(t *testing.T) {
	now := time.Unix(0, 0)
	l := newLimiter(2, 3, 0, func() time.Time { return now })
	for range 3 {
		ok, _ := l.take(0)
		require.True(t, ok)
	}
	ok, wait := l.take(0)
	require.False(t, ok)
	assert.Equal(t, 500*time.Millisecond, wait)
	now = now.Add(500 * time.Millisecond)
	ok, _ = l.take(0)
	assert.True(t, ok, "a token every half second")
	now = now.Add(time.Hour)
	for range 3 {
		ok, _ := l.take(0)
		require.True(t, ok, "refilled to the burst")
	}
	ok, _ = l.take(0)
	assert.False(t, ok, "and no more")
	assert.Nil(t, newLimiter(-1, 0, 0, time.Now), "a negative rate is no limit")
}

// An unauthenticated request is answered 401 at once, before its body
// has come, and its connection closed: the server does not wait for the
// rest of a body it will not read.
func TestUnauthenticatedSlowBodyIsAnsweredAtOnce(t *testing.T) {
	s := start(t, dbPath(t), Config{Keys: []APIKey{{Key: "slow-body-test-key"}}})
	for _, key := range []string{"", "wrong-key-of-enough-length"} {
		conn, err := net.Dial("tcp", strings.TrimPrefix(s.srv.URL, "http://"))
		require.NoError(t, err)
		defer conn.Close()
		head := "POST /memory_stores?api-version=v1 HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 10\r\n"
		if key != "" {
			head += "api-key: " + key + "\r\n"
		}
		_, err = conn.Write([]byte(head + "\r\n{"))
		require.NoError(t, err)
		require.NoError(t, conn.SetReadDeadline(time.Now().Add(3*time.Second)))
		br := bufio.NewReader(conn)
		resp, err := http.ReadResponse(br, nil)
		require.NoError(t, err, "no answer before the body completed (key %q)", key)
		assert.Equal(t, http.StatusUnauthorized, resp.StatusCode)
		assert.True(t, resp.Close, "Connection: close")
		var out map[string]any
		require.NoError(t, jsonDecode(resp.Body, &out))
		assert.Equal(t, "unauthorized", out["error"].(map[string]any)["code"])
		_, err = br.ReadByte()
		assert.Error(t, err, "the connection is closed")
		var ne net.Error
		assert.False(t, errors.As(err, &ne) && ne.Timeout(), "closed, not left open: %v", err)
	}
}

// A request's log line is bounded whatever its path.
func TestRequestLogIsBounded(t *testing.T) {
	logs := &logtest.Logs{}
	s := start(t, dbPath(t), Config{Logger: logs.Logger(nil)})
	resp, err := http.Get(s.srv.URL + "/memory_stores/" + strings.Repeat("a", 900<<10) + "?api-version=v1")
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusBadRequest, resp.StatusCode, "a name too long")
	lines := strings.Split(strings.TrimSpace(logs.String()), "\n")
	require.NotEmpty(t, lines)
	for _, l := range lines {
		assert.Less(t, len(l), 2048, "a log line of %d bytes", len(l))
	}
	assert.Contains(t, logs.String(), "bytes)", "the path is said to be cut")
}

func TestShortKeysAreRefused(t *testing.T) {
	s := start(t, dbPath(t), Config{})
	_, err := New(context.Background(), s.st, Config{Chat: s.svc.cfg.Chat, Embedder: s.svc.cfg.Embedder,
		Keys: []APIKey{{Key: "long-enough-key-0123"}, {Key: "short"}}})
	require.ErrorIs(t, err, ErrShortKey)
	assert.ErrorContains(t, err, "Config.Keys[1]")
}

// Two scopes that differ in bytes that are not UTF-8 would decode to the
// same scope (both U+FFFD): such a scope is refused, naming it.
func TestScopeMustBeUTF8(t *testing.T) {
	s := start(t, dbPath(t), Config{})
	s.createStore("support", nil)
	for _, scope := range []string{"al\xffice", `al\udc00ice`, "al\uFFFDice"} {
		body := `{"scope":"` + scope + `","items":[{"type":"message","role":"user","content":"I like tea."}],"update_delay":3600}`
		code, out, _ := s.do("POST", "/memory_stores/support:update_memories", body)
		assert.Equal(t, http.StatusBadRequest, code, "%q: %v", scope, out)
		assert.Equal(t, "scope", errorParam(t, out))
		code, out, _ = s.do("POST", "/memory_stores/support/items:list", `{"scope":"`+scope+`"}`)
		assert.Equal(t, http.StatusBadRequest, code, "%q: %v", scope, out)
	}
	code, _, _ := s.send("POST", "/mcp/support/al%FFice", "", `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`,
		map[string]string{"Content-Type": "application/json", "Accept": "application/json, text/event-stream"})
	assert.Equal(t, http.StatusBadRequest, code)
}

// Requests that fail authentication are limited by the client's address:
// a flood of wrong keys gets 429 with Retry-After once the address's
// bucket is empty, while the right key, from the same address, goes on.
func TestFailedAuthenticationIsRateLimitedPerAddress(t *testing.T) {
	good := "rate-limit-good-key"
	s := start(t, dbPath(t), Config{Keys: []APIKey{{Key: good}}, RateLimit: 0.1, RateBurst: 3})
	get := func(key string) (int, map[string]any, http.Header) {
		return s.send("GET", "/memory_stores?api-version=v1", "", "", map[string]string{"api-key": key})
	}
	for i := range 3 {
		code, out, _ := get("a-wrong-key-guessed-" + string(rune('a'+i)))
		require.Equal(t, http.StatusUnauthorized, code, "%v", out)
	}
	code, out, h := get("a-wrong-key-guessed-z")
	require.Equal(t, http.StatusTooManyRequests, code, "%v", out)
	assert.Equal(t, "too_many_requests", out["error"].(map[string]any)["code"])
	assert.NotEmpty(t, h.Get("Retry-After"))
	code, out, _ = s.send("GET", "/memory_stores?api-version=v1", "", "", nil)
	assert.Equal(t, http.StatusTooManyRequests, code, "missing credentials count as failures too: %v", out)
	code, out, _ = get(good)
	assert.Equal(t, http.StatusOK, code, "the right key is not limited by the failures: %v", out)
}

// The addresses' buckets are bounded: past maxAddresses, the buckets of
// addresses idle long enough to be full again give way, and failing that
// new addresses share one bucket.
func TestAddressBucketsAreBounded(t *testing.T) {
	now := time.Unix(0, 0)
	l := newAddrLimiter(1, 2, 3, func() time.Time { return now })
	for _, a := range []string{"10.0.0.1", "10.0.0.2", "10.0.0.3"} {
		ok, _ := l.take(a)
		require.True(t, ok)
	}
	require.Len(t, l.buckets, 3)
	for range 2 { // a fourth address shares the overflow bucket
		ok, _ := l.take("10.0.0.4")
		require.True(t, ok)
	}
	ok, _ := l.take("10.0.0.5")
	assert.False(t, ok, "new addresses share one bucket while the table is full")
	assert.Len(t, l.buckets, 3)
	now = now.Add(10 * time.Second) // every bucket full again
	ok, _ = l.take("10.0.0.6")
	assert.True(t, ok)
	assert.LessOrEqual(t, len(l.buckets), 3)
	assert.Contains(t, l.buckets, "10.0.0.6", "idle buckets gave way")
}
