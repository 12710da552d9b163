package memoryservice

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestKeyStoresChecksKeysAsTheAPIDoes(t *testing.T) {
	s := start(t, dbPath(t), Config{Keys: []APIKey{{Key: "limited-key-0123456789", Stores: []string{"alpha"}}, {Key: "every-store-0123456789"}}})
	assert.False(t, s.svc.Keyless())
	stores, ok := s.svc.KeyStores("limited-key-0123456789")
	assert.True(t, ok)
	assert.Equal(t, []string{"alpha"}, stores)
	stores, ok = s.svc.KeyStores("every-store-0123456789")
	assert.True(t, ok)
	assert.Empty(t, stores, "a key for every store")
	_, ok = s.svc.KeyStores("limited-key-012345678") // one byte short
	assert.False(t, ok)
	_, ok = s.svc.KeyStores("")
	assert.False(t, ok)

	keyless := start(t, dbPath(t), Config{})
	assert.True(t, keyless.svc.Keyless())
}

func TestOpenStoreScopesAndUpdates(t *testing.T) {
	s := start(t, dbPath(t), Config{})
	ctx := context.Background()
	s.createStore("beta", nil)
	s.createStore("alpha", nil)
	names, err := s.svc.StoreNames(ctx)
	require.NoError(t, err)
	assert.Equal(t, []string{"alpha", "beta"}, names)

	_, err = s.svc.OpenStore(ctx, "gamma")
	assert.ErrorIs(t, err, ErrNoStore)
	assert.Contains(t, err.Error(), `"gamma"`)
	_, err = s.svc.OpenStore(ctx, "no/slash")
	require.Error(t, err)
	assert.False(t, errors.Is(err, ErrNoStore), "a malformed name is not a missing store")
	assert.Contains(t, err.Error(), "only letters, digits")

	id := s.update("alpha", "zoe", 0, "I am a vegetarian and I live in Lisbon.")
	s.wait("alpha", id)
	s.update("alpha", "yann", 3600, "I live in Porto.")
	g, err := s.svc.OpenStore(ctx, "alpha")
	require.NoError(t, err)
	scopes, err := g.Scopes(ctx)
	require.NoError(t, err)
	assert.Equal(t, []string{"yann", "zoe"}, scopes)

	ups, err := g.Updates(ctx, "zoe", 10)
	require.NoError(t, err)
	require.Len(t, ups, 1)
	u := ups[0]
	assert.Equal(t, id, u.ID)
	assert.Equal(t, statusCompleted, u.Status)
	assert.NotEmpty(t, u.SessionID)
	assert.Equal(t, 1, u.Turns)
	assert.Positive(t, u.Operations)
	assert.False(t, u.RunAt.IsZero())
	assert.False(t, u.EndedAt.Before(u.RunAt))
	assert.Positive(t, u.Usage.Total)
	assert.Equal(t, u.Usage.Input+u.Usage.Output+u.Usage.Embedding, u.Usage.Total)
	queued, err := g.Updates(ctx, "yann", 0)
	require.NoError(t, err)
	require.Len(t, queued, 1)
	assert.Equal(t, statusQueued, queued[0].Status)
	assert.True(t, queued[0].RunAt.IsZero())

	assert.NoError(t, g.CheckScope("zoe"))
	err = g.CheckScope("a?b")
	require.Error(t, err)
	assert.Contains(t, err.Error(), "scope")
}

func TestForgetScopeThroughTheDoor(t *testing.T) {
	s := start(t, dbPath(t), Config{})
	ctx := context.Background()
	s.createStore("alpha", nil)
	s.wait("alpha", s.update("alpha", "zoe", 0, "I am a vegetarian."))
	g, err := s.svc.OpenStore(ctx, "alpha")
	require.NoError(t, err)
	require.NoError(t, g.ForgetScope(ctx, "zoe"))
	assert.Empty(t, s.list("alpha", "zoe", ""), "nothing left of the scope")
	scopes, err := g.Scopes(ctx)
	require.NoError(t, err)
	assert.Empty(t, scopes)
	assert.ErrorIs(t, g.ForgetScope(ctx, "zoe"), ErrNoScope)
	assert.ErrorIs(t, g.ForgetScope(ctx, "nobody"), ErrNoScope)
}

func TestGuardPagesTakesFormsAndRefusesOtherOrigins(t *testing.T) {
	s := start(t, dbPath(t), Config{AllowedOrigins: []string{"https://app.example"}})
	srv := httptest.NewServer(s.svc.GuardPages(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusNoContent)
	})))
	defer srv.Close()
	send := func(origin, site, host string) int {
		req, err := http.NewRequest("POST", srv.URL+"/page", strings.NewReader("a=b"))
		require.NoError(t, err)
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		if origin != "" {
			req.Header.Set("Origin", origin)
		}
		if site != "" {
			req.Header.Set("Sec-Fetch-Site", site)
		}
		if host != "" {
			req.Host = host
		}
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		resp.Body.Close()
		return resp.StatusCode
	}
	assert.Equal(t, http.StatusNoContent, send(srv.URL, "same-origin", ""), "a form of the same origin")
	assert.Equal(t, http.StatusNoContent, send("", "", ""), "no browser")
	assert.Equal(t, http.StatusForbidden, send("https://evil.example", "cross-site", ""))
	assert.Equal(t, http.StatusForbidden, send("https://app.example", "cross-site", ""), "an allowed origin of the API posts no page's forms")
	assert.Equal(t, http.StatusMisdirectedRequest, send("", "", "rebound.example"), "keyless: loopback hosts only")
}

func TestThrottleAppliesTheAPIsLimits(t *testing.T) {
	s := start(t, dbPath(t), Config{Keys: []APIKey{{Key: "first-key-0123456789"}, {Key: "second-key-0123456789"}}, RateLimit: 0.001, RateBurst: 2})
	r := httptest.NewRequest("GET", "/inspector/", nil)
	for i := range 2 {
		assert.Zero(t, s.svc.Throttle(r, "first-key-0123456789"), "request %d within the burst", i+1)
	}
	assert.Positive(t, s.svc.Throttle(r, "first-key-0123456789"), "over the key's burst")
	assert.Zero(t, s.svc.Throttle(r, "second-key-0123456789"), "each key has its own limit")
	for range 2 {
		assert.Zero(t, s.svc.Throttle(r, "not-a-key-0123456789"))
	}
	assert.Positive(t, s.svc.Throttle(r, "not-a-key-0123456789"), "failed authentications of the address")
	other := httptest.NewRequest("GET", "/inspector/", nil)
	other.RemoteAddr = "192.0.2.7:4321"
	assert.Zero(t, s.svc.Throttle(other, "not-a-key-0123456789"), "another address")

	keyless := start(t, dbPath(t), Config{RateLimit: 0.001, RateBurst: 1})
	assert.Zero(t, keyless.svc.Throttle(r, ""))
	assert.Positive(t, keyless.svc.Throttle(other, ""), "one limit for every request of a server without keys")
}

func TestPublicSchemeTrustsForwardedHeadersOnlyWhenConfigured(t *testing.T) {
	plain := start(t, dbPath(t), Config{})
	proxied := start(t, dbPath(t), Config{TrustForwarded: true})
	req := func(h map[string]string, tls bool) *http.Request {
		target := "http://memory.example/inspector/"
		if tls {
			target = "https://memory.example/inspector/"
		}
		r := httptest.NewRequest("GET", target, nil)
		for k, v := range h {
			r.Header.Set(k, v)
		}
		return r
	}
	xf := map[string]string{"X-Forwarded-Proto": "https"}
	fwd := map[string]string{"Forwarded": `for=192.0.2.1;proto=https;host="memory.example"`}
	for _, c := range []struct {
		name string
		svc  *Service
		r    *http.Request
		want string
	}{
		{"plain", plain.svc, req(nil, false), "http"},
		{"own TLS", plain.svc, req(nil, true), "https"},
		{"untrusted X-Forwarded-Proto", plain.svc, req(xf, false), "http"},
		{"untrusted Forwarded", plain.svc, req(fwd, false), "http"},
		{"trusted X-Forwarded-Proto", proxied.svc, req(xf, false), "https"},
		{"trusted Forwarded", proxied.svc, req(fwd, false), "https"},
		{"trusted, proxy over http", proxied.svc, req(map[string]string{"X-Forwarded-Proto": "http"}, true), "http"},
		{"trusted, malformed", proxied.svc, req(map[string]string{"X-Forwarded-Proto": "gopher"}, false), "http"},
	} {
		assert.Equal(t, c.want, c.svc.PublicScheme(c.r), c.name)
	}
}
