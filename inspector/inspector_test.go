package inspector_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"html"
	"io"
	"log/slog"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentmemory/agentmemory/embed/lexical"
	"github.com/agentmemory/agentmemory/inspector"
	"github.com/agentmemory/agentmemory/llm/offline"
	"github.com/agentmemory/agentmemory/memoryservice"
	"github.com/agentmemory/agentmemory/store"
	"github.com/agentmemory/agentmemory/store/sqlite"
)

// Keys of the test server: keyA reaches memory store alpha only, keyB
// beta only, keyAll every store.
const (
	keyA   = "alpha-key-0123456789"
	keyB   = "beta-key-0123456789"
	keyAll = "admin-key-0123456789"
)

// rig is a memory service on a SQLite file, with the inspector at
// /inspector/ and the API everywhere else, over real HTTP.
type rig struct {
	svc *memoryservice.Service
	st  store.Store
	srv *httptest.Server
	dir string
}

func quiet() *slog.Logger {
	if f := os.Getenv("INSPECTOR_TEST_LOG"); f != "" {
		out, _ := os.OpenFile(f, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
		return slog.New(slog.NewTextHandler(out, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	return slog.New(slog.NewTextHandler(io.Discard, nil))
}

// openRig starts a rig with keys on a SQLite file in a new temporary
// directory; close stops it and removes the directory.
func openRig(keys []memoryservice.APIKey, opts ...func(*memoryservice.Config)) (*rig, error) {
	dir, err := os.MkdirTemp("", "inspector-test-")
	if err != nil {
		return nil, err
	}
	emb, err := lexical.New(lexical.Config{})
	if err != nil {
		return nil, err
	}
	chat, err := offline.New(offline.Config{})
	if err != nil {
		return nil, err
	}
	st, err := sqlite.Open(context.Background(), filepath.Join(dir, "m.db"), sqlite.Config{Dimensions: emb.Dimensions(), Logger: quiet()})
	if err != nil {
		return nil, err
	}
	cfg := memoryservice.Config{Chat: chat, Mini: chat, Embedder: emb, Keys: keys,
		Logger: quiet(), RateLimit: -1, PollInterval: 20 * time.Millisecond}
	for _, o := range opts {
		o(&cfg)
	}
	svc, err := memoryservice.New(context.Background(), st, cfg)
	if err != nil {
		return nil, errors.Join(err, st.Close())
	}
	in, err := inspector.New(inspector.Config{Service: svc, Logger: quiet(), PageSize: 3})
	if err != nil {
		return nil, errors.Join(err, svc.Close(context.Background()), st.Close())
	}
	mux := http.NewServeMux()
	mux.Handle("/inspector/", in)
	mux.Handle("/inspector", in)
	mux.Handle("/", svc)
	return &rig{svc: svc, st: st, srv: httptest.NewServer(mux), dir: dir}, nil
}

func (r *rig) close() error {
	r.srv.Close()
	return errors.Join(r.svc.Close(context.Background()), r.st.Close(), os.RemoveAll(r.dir))
}

// newRig is a rig of its own for one test.
func newRig(tb testing.TB, keys []memoryservice.APIKey, opts ...func(*memoryservice.Config)) *rig {
	tb.Helper()
	r, err := openRig(keys, opts...)
	require.NoError(tb, err)
	tb.Cleanup(func() { require.NoError(tb, r.close()) })
	return r
}

// testKeys are the keys of a keyed rig.
var testKeys = []memoryservice.APIKey{{Key: keyA, Stores: []string{"alpha"}}, {Key: keyB, Stores: []string{"beta"}}, {Key: keyAll}}

func keyed(tb testing.TB) *rig { return newRig(tb, testKeys) }

// A world is a rig the package's tests share, with memories recorded
// once (the SQLite driver is slow under the race detector): each test
// that forgets has scopes of its own.
type world struct {
	once sync.Once
	r    *rig
	err  error
}

var keyedWorld, keylessWorld world

// memo is what one scope of a world remembers: each entry of updates is
// one update_memories, in order.
type memo struct {
	key, store, scope string
	updates           [][]string
}

// The keyed world's memories.
var keyedMemos = []memo{
	{keyA, "alpha", "alice", [][]string{{"I am a vegetarian and I live in Lisbon.", "My daughter Ana plays the cello."}}},
	{keyB, "beta", "bob", [][]string{{"I love to collect vintage typewriters."}}},
	{keyA, "alpha", "dora", [][]string{{"I am a vegetarian and I live in Lisbon."}}}, // her insight is forgotten
	{keyA, "alpha", "erin", [][]string{{"I am a vegetarian."}}},                      // her scope is forgotten
	{keyA, "alpha", "carol", [][]string{{"I live in Porto and play the oboe."}}},
	{keyA, "alpha", "paged", [][]string{{"Conversation 0: I am learning the cello."}, {"Conversation 1: I am learning the cello."},
		{"Conversation 2: I am learning the cello."}, {"Conversation 3: I am learning the cello."}}},
}

// get starts the world once (with keys, or without) and records memos,
// each scope's updates in order.
func (w *world) get(tb testing.TB, keys []memoryservice.APIKey, memos []memo) *rig {
	tb.Helper()
	w.once.Do(func() {
		w.r, w.err = openRig(keys)
		if w.err != nil {
			return
		}
		for _, m := range memos {
			if w.err = w.r.createStore(m.key, m.store); w.err != nil {
				return
			}
		}
		// One scope after another: accepting updates of several scopes
		// of one service at once sometimes leaves one queued for good
		// (seen as a status of queued two minutes after an
		// update_delay of 0), a fault of the service's queue this
		// package's tests do not test.
		for _, m := range memos {
			for _, texts := range m.updates {
				if w.err = w.r.record(m.key, m.store, m.scope, texts...); w.err != nil {
					return
				}
			}
		}
	})
	require.NoError(tb, w.err)
	return w.r
}

func (w *world) close() error {
	if w.r == nil {
		return nil
	}
	return w.r.close()
}

// sharedKeyed is the keyed world: keyA reaches alpha, keyB beta.
func sharedKeyed(tb testing.TB) *rig { return keyedWorld.get(tb, testKeys, keyedMemos) }

// sharedKeyless is the world without keys: alpha/alice.
func sharedKeyless(tb testing.TB) *rig {
	return keylessWorld.get(tb, nil, []memo{{"", "alpha", "alice", [][]string{{"I am a vegetarian."}}}})
}

func TestMain(m *testing.M) {
	code := m.Run()
	if err := errors.Join(keyedWorld.close(), keylessWorld.close()); err != nil {
		fmt.Fprintln(os.Stderr, "inspector tests: closing the shared rigs:", err)
		code = 1
	}
	os.Exit(code)
}

// call calls the Memory Store API with key and decodes the answer,
// failing on a status of 300 or more.
func (r *rig) call(key, method, path string, body any) (map[string]any, error) {
	var rd io.Reader
	if body != nil {
		raw, err := json.Marshal(body)
		if err != nil {
			return nil, err
		}
		rd = bytes.NewReader(raw)
	}
	req, err := http.NewRequest(method, r.srv.URL+path, rd)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	if key != "" {
		req.Header.Set("api-key", key)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	var out map[string]any
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		return nil, fmt.Errorf("%s %s: %w", method, path, err)
	}
	if resp.StatusCode >= 300 {
		return out, fmt.Errorf("%s %s: %d %v", method, path, resp.StatusCode, out)
	}
	return out, nil
}

// createStore creates memory store name, unless it exists.
func (r *rig) createStore(key, name string) error {
	if _, err := r.call(key, "GET", "/memory_stores/"+name, nil); err == nil {
		return nil
	}
	_, err := r.call(key, "POST", "/memory_stores", map[string]any{"name": name,
		"definition": map[string]any{"kind": "default", "chat_model": "offline", "embedding_model": "lexical"}})
	return err
}

// record records texts for scope of memory store name as one update and
// waits until it completes.
func (r *rig) record(key, name, scope string, texts ...string) error {
	var items []any
	for _, t := range texts {
		items = append(items, map[string]any{"type": "message", "role": "user", "content": t})
	}
	out, err := r.call(key, "POST", "/memory_stores/"+name+":update_memories", map[string]any{"scope": scope, "items": items, "update_delay": 0})
	if err != nil {
		return err
	}
	id, _ := out["update_id"].(string)
	for deadline := time.Now().Add(2 * time.Minute); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		out, err = r.call(key, "GET", "/memory_stores/"+name+"/updates/"+id, nil)
		if err != nil {
			return err
		}
		switch out["status"] {
		case "completed":
			return nil
		case "queued", "in_progress":
		default:
			return fmt.Errorf("update %s of %s/%s: %v", id, name, scope, out)
		}
	}
	return fmt.Errorf("update %s of %s/%s did not complete: %v", id, name, scope, out)
}

// remember creates memory store name if need be and records texts for
// scope as one update, waiting until it completes.
func (r *rig) remember(tb testing.TB, key, name, scope string, texts ...string) {
	tb.Helper()
	require.NoError(tb, r.createStore(key, name))
	require.NoError(tb, r.record(key, name, scope, texts...))
}

// browser is a client with a cookie jar that does not follow redirects.
type browser struct {
	t *testing.T
	r *rig
	c *http.Client
}

func (r *rig) browser(t *testing.T) *browser {
	return &browser{t: t, r: r, c: newClient(t)}
}

// newClient is an HTTP client with a cookie jar that does not follow
// redirects.
func newClient(tb testing.TB) *http.Client {
	jar, err := cookiejar.New(nil)
	require.NoError(tb, err)
	return &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
}

// page is an answer: its status, body and where it redirects.
type page struct {
	Status   int
	Body     string
	Location string
	Header   http.Header
}

func (b *browser) do(req *http.Request) page {
	b.t.Helper()
	resp, err := b.c.Do(req)
	require.NoError(b.t, err)
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	require.NoError(b.t, err)
	return page{Status: resp.StatusCode, Body: string(raw), Location: resp.Header.Get("Location"), Header: resp.Header}
}

func (b *browser) get(path string) page {
	b.t.Helper()
	req, err := http.NewRequest("GET", b.r.srv.URL+path, nil)
	require.NoError(b.t, err)
	return b.do(req)
}

// post sends a form as a same-origin page does.
func (b *browser) post(path string, form url.Values) page {
	b.t.Helper()
	req, err := http.NewRequest("POST", b.r.srv.URL+path, strings.NewReader(form.Encode()))
	require.NoError(b.t, err)
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Origin", b.r.srv.URL)
	req.Header.Set("Sec-Fetch-Site", "same-origin")
	return b.do(req)
}

// follow gets the page a redirect names.
func (b *browser) follow(p page) page {
	b.t.Helper()
	require.Equal(b.t, http.StatusSeeOther, p.Status, "%s", p.Body)
	u, err := url.Parse(p.Location)
	require.NoError(b.t, err)
	return b.get(u.RequestURI())
}

func (b *browser) signIn(key string) {
	b.t.Helper()
	p := b.post("/inspector/sign-in", url.Values{"key": {key}, "next": {"/inspector/"}})
	require.Equal(b.t, http.StatusSeeOther, p.Status, "%s", p.Body)
	require.Equal(b.t, "/inspector/", p.Location)
}

// text is a page's body with its tags dropped and entities decoded,
// spaces collapsed.
func text(body string) string {
	return strings.Join(strings.Fields(html.UnescapeString(regexp.MustCompile(`<[^>]*>`).ReplaceAllString(body, " "))), " ")
}

// profile is the text of the overview's profile section.
func profile(body string) string {
	m := regexp.MustCompile(`(?s)<section class="profile">(.*?)</section>`).FindStringSubmatch(body)
	if m == nil {
		return ""
	}
	return text(m[1])
}

// hrefs lists the page's links whose href matches re.
func hrefs(body string, re string) []string {
	var out []string
	for _, m := range regexp.MustCompile(`href="([^"]*)"`).FindAllStringSubmatch(body, -1) {
		h := html.UnescapeString(m[1])
		if regexp.MustCompile(re).MatchString(h) {
			out = append(out, h)
		}
	}
	return out
}

func TestSignInIsRequiredAndTheCookieIsStrict(t *testing.T) {
	t.Parallel()
	r := sharedKeyed(t)
	b := r.browser(t)
	p := b.get("/inspector/")
	require.Equal(t, http.StatusSeeOther, p.Status)
	assert.True(t, strings.HasPrefix(p.Location, "/inspector/sign-in?next="), p.Location)

	p = b.post("/inspector/sign-in", url.Values{"key": {"not-a-key-of-this-server"}})
	assert.Equal(t, http.StatusUnauthorized, p.Status)
	assert.Contains(t, text(p.Body), "That is not an API key of this server.")

	p = b.post("/inspector/sign-in", url.Values{"key": {keyA}, "next": {"https://evil.example/"}})
	require.Equal(t, http.StatusSeeOther, p.Status)
	assert.Equal(t, "/inspector/", p.Location, "a sign-in returns only to the inspector's own pages")
	cookie := p.Header.Get("Set-Cookie")
	assert.Contains(t, cookie, inspector.CookieName+"=")
	assert.Contains(t, cookie, "HttpOnly")
	assert.Contains(t, cookie, "SameSite=Strict")
	assert.Contains(t, cookie, "Path=/inspector/")
	assert.NotContains(t, cookie, keyA, "the cookie does not hold the key in clear text")

	p = b.get("/inspector/")
	assert.Equal(t, http.StatusOK, p.Status)
	assert.Contains(t, p.Header.Get("Content-Security-Policy"), "default-src 'none'")

	p = b.post("/inspector/sign-out", nil)
	require.Equal(t, http.StatusSeeOther, p.Status)
	assert.Equal(t, http.StatusSeeOther, b.get("/inspector/").Status, "signed out")
}

// The cookie is Secure when the browser reaches the server over HTTPS:
// over the server's own TLS, or through a proxy that terminates TLS when
// the service trusts what the proxy says (Config.TrustForwarded); a
// forwarded header is never taken from a client the service does not
// trust.
func TestTheCookieIsSecureOverHTTPS(t *testing.T) {
	t.Parallel()
	trusting := newRig(t, testKeys, func(c *memoryservice.Config) { c.TrustForwarded = true })
	for _, c := range []struct {
		name   string
		r      *rig
		header http.Header
		secure bool
	}{
		{"trusted X-Forwarded-Proto https", trusting, http.Header{"X-Forwarded-Proto": {"https"}}, true},
		{"trusted Forwarded proto=https", trusting, http.Header{"Forwarded": {`for=192.0.2.1;proto=https;host="memory.example"`}}, true},
		{"trusted X-Forwarded-Proto http", trusting, http.Header{"X-Forwarded-Proto": {"http"}}, false},
		{"trusted, no header", trusting, nil, false},
		{"untrusted X-Forwarded-Proto https", sharedKeyed(t), http.Header{"X-Forwarded-Proto": {"https"}}, false},
		{"untrusted Forwarded proto=https", sharedKeyed(t), http.Header{"Forwarded": {"proto=https"}}, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			b := c.r.browser(t)
			send := func(path string, form url.Values) *http.Cookie {
				req, err := http.NewRequest("POST", c.r.srv.URL+path, strings.NewReader(form.Encode()))
				require.NoError(t, err)
				req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
				req.Header.Set("Sec-Fetch-Site", "same-origin")
				for k, v := range c.header {
					req.Header[k] = v
				}
				p := b.do(req)
				require.Equal(t, http.StatusSeeOther, p.Status, "%s: %s", path, text(p.Body))
				cookie, err := http.ParseSetCookie(p.Header.Get("Set-Cookie"))
				require.NoError(t, err, path)
				require.Equal(t, inspector.CookieName, cookie.Name, path)
				return cookie
			}
			assert.Equal(t, c.secure, send("/inspector/sign-in", url.Values{"key": {keyA}}).Secure, "the sign-in's cookie")
			assert.Equal(t, c.secure, send("/inspector/sign-out", nil).Secure, "the sign-out's cookie")
		})
	}
	t.Run("own TLS", func(t *testing.T) {
		srv := httptest.NewTLSServer(trusting.srv.Config.Handler)
		t.Cleanup(srv.Close)
		req, err := http.NewRequest("POST", srv.URL+"/inspector/sign-in", strings.NewReader(url.Values{"key": {keyA}}.Encode()))
		require.NoError(t, err)
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.Header.Set("Sec-Fetch-Site", "same-origin")
		c := srv.Client()
		c.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
		resp, err := c.Do(req)
		require.NoError(t, err)
		resp.Body.Close()
		require.Equal(t, http.StatusSeeOther, resp.StatusCode)
		cookie, err := http.ParseSetCookie(resp.Header.Get("Set-Cookie"))
		require.NoError(t, err)
		assert.True(t, cookie.Secure, "the server's own TLS")
	})
}

func TestPagesShowTheScopesMemory(t *testing.T) {
	t.Parallel()
	r := sharedKeyed(t)
	b := r.browser(t)
	b.signIn(keyA)

	idx := b.get("/inspector/")
	require.Equal(t, http.StatusOK, idx.Status)
	assert.Contains(t, hrefs(idx.Body, `^/inspector/s/`), "/inspector/s/alpha/")

	st := b.get("/inspector/s/alpha/")
	require.Equal(t, http.StatusOK, st.Status, st.Body)
	assert.Contains(t, hrefs(st.Body, `/s/alpha/alice/$`), "/inspector/s/alpha/alice/")

	ov := b.get("/inspector/s/alpha/alice/")
	require.Equal(t, http.StatusOK, ov.Status, ov.Body)
	assert.Contains(t, text(ov.Body), "Long-term profile")
	assert.Contains(t, ov.Body, "<svg", "the timeline")

	ins := b.get("/inspector/s/alpha/alice/insights")
	require.Equal(t, http.StatusOK, ins.Status, ins.Body)
	links := hrefs(ins.Body, `/insights/.`)
	require.NotEmpty(t, links, "the insights page links each insight: %s", text(ins.Body))
	assert.Contains(t, strings.ToLower(text(ins.Body)), "vegetarian")

	// An insight links to its source session, which links back to it.
	var insightPage, sessionLink string
	for _, l := range links {
		p := b.get(l)
		require.Equal(t, http.StatusOK, p.Status, p.Body)
		if s := hrefs(p.Body, `/sessions/.`); len(s) > 0 && strings.Contains(strings.ToLower(text(p.Body)), "vegetarian") {
			insightPage, sessionLink = l, s[0]
			break
		}
	}
	require.NotEmpty(t, sessionLink, "an insight about being vegetarian links to its session")
	sess := b.get(sessionLink)
	require.Equal(t, http.StatusOK, sess.Status, sess.Body)
	assert.Contains(t, text(sess.Body), "I am a vegetarian and I live in Lisbon.", "the session shows its turns")
	assert.Contains(t, hrefs(sess.Body, `/insights/.`), insightPage, "the session links to the insight drawn from it")

	its := b.get("/inspector/s/alpha/alice/interactions")
	require.Equal(t, http.StatusOK, its.Status, its.Body)
	itLinks := hrefs(its.Body, `/interactions/.`)
	require.NotEmpty(t, itLinks)
	it := b.get(itLinks[0])
	require.Equal(t, http.StatusOK, it.Status, it.Body)
	assert.Contains(t, hrefs(it.Body, `/sessions/.`), sessionLink, "the interaction links to its session")

	found := b.get("/inspector/s/alpha/alice/search?q=" + url.QueryEscape("where does she live?"))
	require.Equal(t, http.StatusOK, found.Status, found.Body)
	assert.Contains(t, text(found.Body), "Lisbon")
	assert.Contains(t, text(found.Body), "score")

	up := b.get("/inspector/s/alpha/alice/updates")
	require.Equal(t, http.StatusOK, up.Status, up.Body)
	assert.Contains(t, text(up.Body), "completed")
	assert.Contains(t, up.Body, "<svg")

	ex := b.get("/inspector/s/alpha/alice/export")
	require.Equal(t, http.StatusOK, ex.Status)
	assert.Contains(t, ex.Header.Get("Content-Disposition"), "attachment")
	lines := strings.Split(strings.TrimSpace(ex.Body), "\n")
	require.Greater(t, len(lines), 2)
	var first map[string]any
	require.NoError(t, json.Unmarshal([]byte(lines[0]), &first), "JSON lines")
	assert.Contains(t, ex.Body, "Lisbon")

	dl := b.get("/inspector/s/alpha/alice/deletions")
	require.Equal(t, http.StatusOK, dl.Status)
	assert.Contains(t, text(dl.Body), "Nothing of this scope has been forgotten.")
}

func TestAKeyForOneStoreNeverSeesAnothers(t *testing.T) {
	t.Parallel()
	r := sharedKeyed(t)
	b := r.browser(t)
	b.signIn(keyA)

	idx := b.get("/inspector/")
	assert.NotContains(t, idx.Body, "beta", "the index lists only the stores the key reaches")
	for _, path := range []string{"/inspector/s/beta/", "/inspector/s/beta/bob/", "/inspector/s/beta/bob/insights", "/inspector/s/beta/bob/sessions",
		"/inspector/s/beta/bob/export", "/inspector/s/beta/bob/deletions", "/inspector/s/beta/bob/search?q=typewriters",
		"/inspector/s/nosuchstore/bob/"} {
		p := b.get(path)
		assert.Equal(t, http.StatusForbidden, p.Status, path)
		assert.NotContains(t, strings.ToLower(p.Body), "typewriter", path)
	}
	p := b.post("/inspector/s/beta/bob/forget", url.Values{"kind": {"scope"}, "confirm": {"yes"}})
	assert.Equal(t, http.StatusForbidden, p.Status)

	// bob's memory is intact, and keyB sees it.
	b2 := r.browser(t)
	b2.signIn(keyB)
	ins := b2.get("/inspector/s/beta/bob/insights")
	require.Equal(t, http.StatusOK, ins.Status)
	assert.Contains(t, strings.ToLower(text(ins.Body)), "typewriters")
	// A scope of another store is not reachable through the store the
	// key reaches, either: alpha has no scope bob.
	assert.Equal(t, http.StatusNotFound, b.get("/inspector/s/alpha/bob/insights").Status)
}

func TestForgettingAnInsightShowsItsReceipt(t *testing.T) {
	t.Parallel()
	r := sharedKeyed(t)
	b := r.browser(t)
	b.signIn(keyA)
	base := "/inspector/s/alpha/dora"

	ins := b.get(base + "/insights?show=active")
	var target string
	for _, l := range hrefs(ins.Body, `/insights/.`) {
		if p := b.get(l); strings.Contains(strings.ToLower(text(p.Body)), "vegetarian") && !strings.Contains(l, "longterm-") {
			target = l
			break
		}
	}
	require.NotEmpty(t, target, "an insight about being vegetarian: %s", text(ins.Body))
	id, err := url.PathUnescape(target[strings.LastIndex(target, "/")+1:])
	require.NoError(t, err)
	ov := b.get(base + "/")
	require.Contains(t, strings.ToLower(profile(ov.Body)), "vegetarian", "the profile folded it in")

	confirm := b.get(base + "/forget?kind=insight&id=" + url.QueryEscape(id))
	require.Equal(t, http.StatusOK, confirm.Status, confirm.Body)
	assert.Contains(t, strings.ToLower(text(confirm.Body)), "vegetarian", "the confirmation says what is forgotten")

	unconfirmed := b.post(base+"/forget", url.Values{"kind": {"insight"}, "id": {id}})
	assert.Equal(t, http.StatusBadRequest, unconfirmed.Status)
	assert.Equal(t, http.StatusOK, b.get(target).Status, "nothing forgotten without the confirmation")

	done := b.post(base+"/forget", url.Values{"kind": {"insight"}, "id": {id}, "confirm": {"yes"}})
	require.Equal(t, http.StatusSeeOther, done.Status, done.Body)
	receipt := b.follow(done)
	require.Equal(t, http.StatusOK, receipt.Status, receipt.Body)
	rt := text(receipt.Body)
	assert.Contains(t, rt, "forget_insight")
	assert.Contains(t, rt, id, "the receipt names the insight deleted")
	assert.Contains(t, rt, "The whole chain verifies")

	assert.Equal(t, http.StatusNotFound, b.get(target).Status, "the insight is gone")
	assert.NotContains(t, strings.ToLower(profile(b.get(base+"/").Body)), "vegetarian", "the profile is written anew without it")
	dl := b.get(base + "/deletions")
	loc, err := url.Parse(done.Location)
	require.NoError(t, err)
	assert.Contains(t, hrefs(dl.Body, `/deletions/\d+$`), loc.Path, "the scope's deletion log links the receipt")
}

func TestForgettingTheScope(t *testing.T) {
	t.Parallel()
	r := sharedKeyed(t)
	b := r.browser(t)
	b.signIn(keyA)
	p := b.post("/inspector/s/alpha/erin/forget", url.Values{"kind": {"scope"}, "confirm": {"yes"}})
	require.Equal(t, http.StatusSeeOther, p.Status, p.Body)
	dl := b.follow(p)
	require.Equal(t, http.StatusOK, dl.Status, dl.Body)
	assert.Contains(t, text(dl.Body), "forget_user")
	assert.Equal(t, http.StatusNotFound, b.get("/inspector/s/alpha/erin/").Status)
	st := b.get("/inspector/s/alpha/")
	assert.NotContains(t, text(st.Body), "erin")
	assert.Contains(t, text(st.Body), "carol")
	assert.Equal(t, http.StatusOK, b.get("/inspector/s/alpha/carol/").Status, "another scope is untouched")
}

func TestCrossOriginPostsAreRefused(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name string
		r    func(testing.TB) *rig
		key  string
	}{{"keyless", sharedKeyless, ""}, {"keyed", sharedKeyed, keyA}} {
		t.Run(c.name, func(t *testing.T) {
			r := c.r(t)
			b := r.browser(t)
			if c.key != "" {
				b.signIn(c.key)
			}
			req, err := http.NewRequest("POST", r.srv.URL+"/inspector/s/alpha/alice/forget",
				strings.NewReader(url.Values{"kind": {"scope"}, "confirm": {"yes"}}.Encode()))
			require.NoError(t, err)
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
			req.Header.Set("Origin", "https://evil.example")
			req.Header.Set("Sec-Fetch-Site", "cross-site")
			p := b.do(req)
			assert.Equal(t, http.StatusForbidden, p.Status, p.Body)
			assert.Equal(t, http.StatusOK, b.get("/inspector/s/alpha/alice/").Status, "nothing was forgotten")
		})
	}
}

func TestAnotherSiteCannotLoadPagesAsResources(t *testing.T) {
	t.Parallel()
	r := sharedKeyless(t)
	b := r.browser(t)
	load := func(mode string) int {
		req, err := http.NewRequest("GET", r.srv.URL+"/inspector/s/alpha/alice/search?q=vegetarian", nil)
		require.NoError(t, err)
		req.Header.Set("Sec-Fetch-Site", "cross-site")
		req.Header.Set("Sec-Fetch-Mode", mode)
		return b.do(req).Status
	}
	assert.Equal(t, http.StatusForbidden, load("no-cors"), "an <img> or <script> of another site")
	assert.Equal(t, http.StatusForbidden, load("cors"), "another site's fetch")
	assert.Equal(t, http.StatusOK, load("navigate"), "a link followed from another site")
}

// The pages are behind the API's rate limits: a key's own, and the
// limit on failed authentications of an address for sign-ins.
func TestPagesAreRateLimited(t *testing.T) {
	t.Parallel()
	r := newRig(t, testKeys, func(c *memoryservice.Config) { c.RateLimit, c.RateBurst = 0.001, 3 })
	b := r.browser(t)
	for i := range 3 {
		p := b.post("/inspector/sign-in", url.Values{"key": {"wrong-key-0123456789"}})
		require.Equal(t, http.StatusUnauthorized, p.Status, "failed sign-in %d", i+1)
	}
	p := b.post("/inspector/sign-in", url.Values{"key": {"wrong-key-9876543210"}})
	assert.Equal(t, http.StatusTooManyRequests, p.Status, "a fourth failed sign-in from the address")
	assert.NotEmpty(t, p.Header.Get("Retry-After"))

	b2 := r.browser(t)
	b2.c.Jar.SetCookies(mustURL(t, r.srv.URL+"/inspector/"), []*http.Cookie{{Name: inspector.CookieName, Value: base64.RawURLEncoding.EncodeToString([]byte(keyB)), Path: "/inspector/"}})
	for i := range 3 {
		assert.Equal(t, http.StatusOK, b2.get("/inspector/").Status, "page %d", i+1)
	}
	p = b2.get("/inspector/")
	assert.Equal(t, http.StatusTooManyRequests, p.Status, "a fourth page with the key")
	assert.Contains(t, text(p.Body), "Too many requests")
}

func mustURL(t *testing.T, s string) *url.URL {
	u, err := url.Parse(s)
	require.NoError(t, err)
	return u
}

func TestKeylessServesLoopbackOnlyWithoutSignIn(t *testing.T) {
	t.Parallel()
	r := sharedKeyless(t)
	b := r.browser(t)
	assert.Equal(t, http.StatusOK, b.get("/inspector/s/alpha/alice/").Status)
	req, err := http.NewRequest("GET", r.srv.URL+"/inspector/", nil)
	require.NoError(t, err)
	req.Host = "attacker.example" // DNS rebinding
	assert.Equal(t, http.StatusMisdirectedRequest, b.do(req).Status)
	p := b.get("/inspector/sign-in")
	assert.Equal(t, http.StatusSeeOther, p.Status, "nothing to sign in to")
}

func TestBadInputGetsAClearPage(t *testing.T) {
	t.Parallel()
	r := sharedKeyed(t)
	b := r.browser(t)
	b.signIn(keyA)
	for _, c := range []struct {
		path   string
		status int
		says   string
	}{
		{"/inspector/s/alpha/nobody/", http.StatusNotFound, `Scope "nobody" of memory store "alpha" holds no memories.`},
		{"/inspector/s/alpha/alice/insights/no-such-insight", http.StatusNotFound, `no insight "no-such-insight"`},
		{"/inspector/s/alpha/alice/sessions/no-such-session", http.StatusNotFound, `no session "no-such-session"`},
		{"/inspector/s/alpha/alice/interactions/nope", http.StatusNotFound, `no interaction "nope"`},
		{"/inspector/s/alpha/alice/insights/" + url.PathEscape(strings.Repeat("x", 300)), http.StatusBadRequest, "is not a valid insight id"},
		{"/inspector/s/alpha/alice/sessions?before=yesterday", http.StatusBadRequest, `before="yesterday" is not a time`},
		{"/inspector/s/alpha/alice/insights?show=everything", http.StatusBadRequest, "show is all, active or superseded"},
		{"/inspector/s/alpha/alice/forget?kind=user", http.StatusBadRequest, "an insight, a session or the scope"},
		{"/inspector/s/alpha/alice/deletions/0", http.StatusBadRequest, "is not a record number"},
		{"/inspector/s/alpha/alice/deletions/7", http.StatusNotFound, "no record 7"},
		{"/inspector/s/alpha/" + url.PathEscape("a?b") + "/", http.StatusBadRequest, "scope"},
		{"/inspector/s/alpha/alice/nothing-here", http.StatusNotFound, "There is no page"},
	} {
		p := b.get(c.path)
		assert.Equal(t, c.status, p.Status, c.path)
		assert.Contains(t, text(p.Body), c.says, c.path)
	}
}

func TestListsArePaginated(t *testing.T) {
	t.Parallel()
	r := sharedKeyed(t)
	b := r.browser(t)
	b.signIn(keyA)
	seen := map[string]bool{}
	next := "/inspector/s/alpha/paged/sessions"
	for pages := 0; next != ""; pages++ {
		require.Less(t, pages, 5)
		p := b.get(next)
		require.Equal(t, http.StatusOK, p.Status, p.Body)
		rows := hrefs(p.Body, `/sessions/.`)
		assert.LessOrEqual(t, len(rows), 3, "PageSize 3")
		for _, l := range rows {
			assert.False(t, seen[l], "%s on two pages", l)
			seen[l] = true
		}
		next = ""
		if older := hrefs(p.Body, `^\?before=`); len(older) > 0 {
			next = "/inspector/s/alpha/paged/sessions" + older[0]
		}
	}
	assert.Len(t, seen, 4, "every session on some page")
}
