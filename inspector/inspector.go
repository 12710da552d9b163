package inspector

import (
	"bytes"
	"cmp"
	"context"
	"embed"
	"encoding/base64"
	"errors"
	"fmt"
	"html/template"
	"io/fs"
	"log/slog"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/agentmemory/agentmemory/memoryservice"
	"github.com/agentmemory/agentmemory/store"
)

// DefaultPrefix is where cmd/agentmemory-server serves the inspector.
const DefaultPrefix = "/inspector"

// DefaultPageSize is how many rows a list page shows when
// Config.PageSize is zero.
const DefaultPageSize = 50

// CookieName is the cookie that keeps a signed-in browser's API key.
const CookieName = "agentmemory_inspector"

// Config configures an Inspector. Service is required.
type Config struct {
	// Service is the memory service whose stores the pages show, and
	// whose keys and browser protections they are behind.
	Service *memoryservice.Service
	// Prefix is the path the pages are served under, without a trailing
	// slash; empty means DefaultPrefix.
	Prefix string
	// PageSize is how many rows a list page shows; zero means
	// DefaultPageSize.
	PageSize int
	// Logger receives the failures the pages answer 500 for; nil means
	// slog.Default().
	Logger *slog.Logger
}

// Inspector serves the pages. It is an http.Handler, safe for
// concurrent use; serve it at Config.Prefix and below.
type Inspector struct {
	svc    *memoryservice.Service
	prefix string
	size   int
	log    *slog.Logger
	pages  map[string]*template.Template
	static http.Handler
	h      http.Handler
}

//go:embed templates/*.html
var templateFiles embed.FS

//go:embed static
var staticFiles embed.FS

// New returns an inspector of cfg.Service's stores.
func New(cfg Config) (*Inspector, error) {
	if cfg.Service == nil {
		return nil, errors.New("inspector: Config.Service is required")
	}
	prefix := cmp.Or(cfg.Prefix, DefaultPrefix)
	if !strings.HasPrefix(prefix, "/") || strings.HasSuffix(prefix, "/") {
		return nil, fmt.Errorf("inspector: Config.Prefix %q must start with '/' and not end with one", prefix)
	}
	if cfg.PageSize < 0 {
		return nil, fmt.Errorf("inspector: Config.PageSize %d is negative", cfg.PageSize)
	}
	pages, err := parsePages(prefix)
	if err != nil {
		return nil, err
	}
	sub, err := fs.Sub(staticFiles, "static")
	if err != nil {
		return nil, err
	}
	in := &Inspector{svc: cfg.Service, prefix: prefix, size: cmp.Or(cfg.PageSize, DefaultPageSize),
		log: cmp.Or(cfg.Logger, slog.Default()), pages: pages,
		static: http.StripPrefix(prefix+"/static/", http.FileServerFS(sub))}
	in.h = cfg.Service.GuardPages(in.routes())
	return in, nil
}

// ServeHTTP serves the pages, behind the service's browser protections.
func (in *Inspector) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	h.Set("Content-Security-Policy", "default-src 'none'; style-src 'self'; img-src 'self' data:; form-action 'self'; frame-ancestors 'none'; base-uri 'none'")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("X-Frame-Options", "DENY")
	h.Set("Cache-Control", "no-store")
	// Another site's page may link here, but not load a page as a
	// resource (an image, a script, a fetch): a search costs the model's
	// tokens, and a server without keys has no cookie to withhold.
	if r.Header.Get("Sec-Fetch-Site") == "cross-site" && r.Header.Get("Sec-Fetch-Mode") != "navigate" {
		in.fail(w, r, http.StatusForbidden, "Another site's page cannot load the inspector's pages; open them directly.")
		return
	}
	in.h.ServeHTTP(w, r)
}

// routes maps the pages' paths to their handlers.
func (in *Inspector) routes() http.Handler {
	p := in.prefix
	mux := http.NewServeMux()
	mux.Handle("GET "+p+"/static/", in.static)
	mux.HandleFunc("GET "+p+"/sign-in", in.signInPage)
	mux.HandleFunc("POST "+p+"/sign-in", in.signIn)
	mux.HandleFunc("POST "+p+"/sign-out", in.signOut)
	mux.HandleFunc("GET "+p+"/{$}", in.signedIn(in.index))
	mux.HandleFunc("GET "+p, func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, p+"/", http.StatusSeeOther)
	})
	mux.HandleFunc("GET "+p+"/s/{store}/{$}", in.signedIn(in.storePage))
	sc := p + "/s/{store}/{scope}"
	for _, rt := range []struct {
		pattern string
		serve   func(http.ResponseWriter, *http.Request, *scope)
		known   bool // the scope must hold something
	}{
		{"GET " + sc + "/{$}", in.overview, true},
		{"GET " + sc + "/insights", in.insights, true},
		{"GET " + sc + "/insights/{id}", in.insight, true},
		{"GET " + sc + "/sessions", in.sessions, true},
		{"GET " + sc + "/sessions/{id}", in.session, true},
		{"GET " + sc + "/interactions", in.interactions, true},
		{"GET " + sc + "/interactions/{id}", in.interaction, true},
		{"GET " + sc + "/search", in.search, true},
		{"GET " + sc + "/updates", in.updates, true},
		{"GET " + sc + "/export", in.export, true},
		{"GET " + sc + "/forget", in.confirmForget, true},
		{"POST " + sc + "/forget", in.forget, false},
		{"GET " + sc + "/deletions", in.deletions, false},
		{"GET " + sc + "/deletions/{seq}", in.receipt, false},
	} {
		mux.HandleFunc(rt.pattern, in.signedIn(in.inScope(rt.serve, rt.known)))
	}
	mux.HandleFunc(p+"/", in.signedIn(func(w http.ResponseWriter, r *http.Request, _ *access) {
		in.fail(w, r, http.StatusNotFound, "There is no page at %s.", r.URL.Path)
	}))
	return mux
}

// access is what the request's key reaches.
type access struct {
	stores []string // nil: every store
	signIn bool     // signed in with a key (not keyless)
}

func (a *access) reaches(name string) bool { return a.stores == nil || slices.Contains(a.stores, name) }

// keyOf reads the API key a signed-in browser's cookie keeps.
func keyOf(r *http.Request) (string, bool) {
	c, err := r.Cookie(CookieName)
	if err != nil || c.Value == "" {
		return "", false
	}
	b, err := base64.RawURLEncoding.DecodeString(c.Value)
	if err != nil {
		return "", false
	}
	return string(b), true
}

// signedIn admits a request the service would serve: any, without keys;
// with keys, one whose cookie keeps a key the service takes. A browser
// not signed in is sent to the sign-in page.
func (in *Inspector) signedIn(next func(http.ResponseWriter, *http.Request, *access)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if in.svc.Keyless() {
			if in.throttled(w, r, "") {
				return
			}
			next(w, r, &access{})
			return
		}
		key, ok := keyOf(r)
		var stores []string
		if ok {
			stores, ok = in.svc.KeyStores(key)
		}
		if !ok {
			if r.Method == http.MethodGet || r.Method == http.MethodHead {
				http.Redirect(w, r, in.prefix+"/sign-in?next="+url.QueryEscape(r.URL.RequestURI()), http.StatusSeeOther)
				return
			}
			if !in.throttled(w, r, key) {
				in.fail(w, r, http.StatusUnauthorized, "Sign in with an API key first.")
			}
			return
		}
		if in.throttled(w, r, key) {
			return
		}
		if len(stores) == 0 {
			stores = nil // every store
		}
		next(w, r, &access{stores: stores, signIn: true})
	}
}

// scope is the memory store and scope a page is about.
type scope struct {
	acc    *access
	store  *memoryservice.GatewayStore
	name   string // the memory store's
	scope  string
	userID string
	base   string // the scope's pages' path
}

// scopeBase is the path of a scope's pages.
func scopeBase(prefix, name, sc string) string {
	return prefix + "/s/" + url.PathEscape(name) + "/" + url.PathEscape(sc)
}

// inScope admits a request for a store the key reaches (403 otherwise,
// before the store is read: a key learns nothing of another store) and a
// valid scope of it; known also requires the scope to hold something.
func (in *Inspector) inScope(next func(http.ResponseWriter, *http.Request, *scope), known bool) func(http.ResponseWriter, *http.Request, *access) {
	return func(w http.ResponseWriter, r *http.Request, acc *access) {
		name, sc := r.PathValue("store"), r.PathValue("scope")
		g, ok := in.openStore(w, r, acc, name)
		if !ok {
			return
		}
		if err := g.CheckScope(sc); err != nil {
			in.fail(w, r, http.StatusBadRequest, "%v", err)
			return
		}
		s := &scope{acc: acc, store: g, name: name, scope: sc, userID: g.UserID(sc), base: scopeBase(in.prefix, name, sc)}
		if known {
			if err := g.Expire(r.Context(), sc); err != nil {
				in.internal(w, r, err)
				return
			}
			holds, err := in.holds(r.Context(), s)
			if err != nil {
				in.internal(w, r, err)
				return
			}
			if !holds {
				in.fail(w, r, http.StatusNotFound, "Scope %q of memory store %q holds no memories.", sc, name)
				return
			}
		}
		next(w, r, s)
	}
}

// openStore opens memory store name for a request whose key reaches it,
// answering 403 for a store it does not reach and 404 for one that does
// not exist.
func (in *Inspector) openStore(w http.ResponseWriter, r *http.Request, acc *access, name string) (*memoryservice.GatewayStore, bool) {
	if !acc.reaches(name) {
		in.fail(w, r, http.StatusForbidden, "This API key does not reach memory store %q.", name)
		return nil, false
	}
	g, err := in.svc.OpenStore(r.Context(), name)
	switch {
	case errors.Is(err, memoryservice.ErrNoStore):
		in.fail(w, r, http.StatusNotFound, "There is no memory store %q.", name)
		return nil, false
	case err != nil:
		in.fail(w, r, http.StatusBadRequest, "Memory store %q: %v", name, err)
		return nil, false
	}
	return g, true
}

// holds reports whether a scope has a record or any session or insight.
func (in *Inspector) holds(ctx context.Context, s *scope) (bool, error) {
	st := s.store.Store()
	ss, err := st.ListSessions(ctx, s.userID, store.SessionFilter{Limit: 1})
	if err != nil || len(ss) > 0 {
		return len(ss) > 0, err
	}
	ins, err := st.ListInsights(ctx, s.userID, store.InsightFilter{IncludeSuperseded: true, Limit: 1})
	if err != nil || len(ins) > 0 {
		return len(ins) > 0, err
	}
	scopes, err := s.store.Scopes(ctx)
	return slices.Contains(scopes, s.scope), err
}

// signedInWith reports whether the request carries a key the service
// takes (a server without keys has no signing in).
func (in *Inspector) signedInWith(r *http.Request) bool {
	if in.svc.Keyless() {
		return false
	}
	key, ok := keyOf(r)
	if !ok {
		return false
	}
	_, ok = in.svc.KeyStores(key)
	return ok
}

// throttled applies the service's rate limits to a request made with
// key (see memoryservice.Service.Throttle), answering 429 with
// Retry-After when it is over them.
func (in *Inspector) throttled(w http.ResponseWriter, r *http.Request, key string) bool {
	wait := in.svc.Throttle(r, key)
	if wait <= 0 {
		return false
	}
	secs := int((wait + time.Second - 1) / time.Second)
	w.Header().Set("Retry-After", strconv.Itoa(secs))
	in.fail(w, r, http.StatusTooManyRequests, "Too many requests; try again in %d s.", secs)
	return true
}

// signInPage asks for an API key; without keys there is nothing to ask.
func (in *Inspector) signInPage(w http.ResponseWriter, r *http.Request) {
	if in.svc.Keyless() {
		http.Redirect(w, r, in.prefix+"/", http.StatusSeeOther)
		return
	}
	in.render(w, r, http.StatusOK, "signin", nil, signInData{Next: safeNext(in.prefix, r.URL.Query().Get("next"))})
}

type signInData struct {
	Next  string
	Error string
}

// safeNext keeps a sign-in's return path only when it is one of the
// inspector's own pages.
func safeNext(prefix, next string) string {
	u, err := url.Parse(next)
	if err != nil || u.Scheme != "" || u.Host != "" || strings.HasPrefix(next, "//") || !strings.HasPrefix(u.Path, prefix+"/") {
		return prefix + "/"
	}
	return u.RequestURI()
}

// signIn checks the key pasted and keeps it in the cookie.
func (in *Inspector) signIn(w http.ResponseWriter, r *http.Request) {
	r.Body = http.MaxBytesReader(w, r.Body, 16<<10)
	key := strings.TrimSpace(r.PostFormValue("key"))
	next := safeNext(in.prefix, r.PostFormValue("next"))
	if in.svc.Keyless() {
		http.Redirect(w, r, next, http.StatusSeeOther)
		return
	}
	if in.throttled(w, r, key) { // a failed sign-in counts against the address's limit
		return
	}
	if _, ok := in.svc.KeyStores(key); !ok {
		in.render(w, r, http.StatusUnauthorized, "signin", nil, signInData{Next: next, Error: "That is not an API key of this server."})
		return
	}
	http.SetCookie(w, &http.Cookie{Name: CookieName, Value: base64.RawURLEncoding.EncodeToString([]byte(key)), Path: in.prefix + "/",
		HttpOnly: true, SameSite: http.SameSiteStrictMode, Secure: in.overHTTPS(r)})
	http.Redirect(w, r, next, http.StatusSeeOther)
}

// signOut drops the cookie.
func (in *Inspector) signOut(w http.ResponseWriter, r *http.Request) {
	http.SetCookie(w, &http.Cookie{Name: CookieName, Value: "", Path: in.prefix + "/", MaxAge: -1,
		HttpOnly: true, SameSite: http.SameSiteStrictMode, Secure: in.overHTTPS(r)})
	http.Redirect(w, r, in.prefix+"/sign-in", http.StatusSeeOther)
}

// overHTTPS reports whether the browser reached the server over HTTPS,
// as the service decides it (memoryservice.Service.PublicScheme): over
// the server's own TLS, or through a TLS-terminating proxy whose
// forwarded headers the service trusts.
func (in *Inspector) overHTTPS(r *http.Request) bool { return in.svc.PublicScheme(r) == "https" }

// view is what every page's layout reads.
type view struct {
	Title    string
	Prefix   string
	SignedIn bool // signed in with a key: offer signing out
	Scope    *scope
	Data     any
}

// Store and ScopeName name the page's scope for the layout.
func (v view) Store() string {
	if v.Scope == nil {
		return ""
	}
	return v.Scope.name
}

func (v view) ScopeName() string {
	if v.Scope == nil {
		return ""
	}
	return v.Scope.scope
}

func (v view) Base() string {
	if v.Scope == nil {
		return ""
	}
	return v.Scope.base
}

// render writes page name with data, answering status.
func (in *Inspector) render(w http.ResponseWriter, r *http.Request, status int, name string, s *scope, data any) {
	t, ok := in.pages[name]
	if !ok {
		in.internal(w, r, fmt.Errorf("inspector: no page template %q", name))
		return
	}
	v := view{Prefix: in.prefix, SignedIn: in.signedInWith(r), Scope: s, Data: data}
	var buf bytes.Buffer
	if err := t.ExecuteTemplate(&buf, "layout", v); err != nil {
		in.internal(w, r, err)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	_, _ = buf.WriteTo(w)
}

// errorData is the error page's.
type errorData struct {
	Status  int
	Text    string
	Message string
}

// fail answers an error page with status and a message saying what was
// wrong.
func (in *Inspector) fail(w http.ResponseWriter, r *http.Request, status int, format string, args ...any) {
	in.render(w, r, status, "error", nil, errorData{Status: status, Text: http.StatusText(status), Message: fmt.Sprintf(format, args...)})
}

// internal logs err and answers a 500 that names nothing of it.
func (in *Inspector) internal(w http.ResponseWriter, r *http.Request, err error) {
	in.log.ErrorContext(r.Context(), "inspector: page failed", "path", r.URL.Path, "err", err)
	t := in.pages["error"]
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(http.StatusInternalServerError)
	_ = t.ExecuteTemplate(w, "layout", view{Prefix: in.prefix, Data: errorData{Status: 500, Text: http.StatusText(500),
		Message: "The page failed; the server's log says why."}})
}

// parsePages parses each page of templates/ with the layout.
func parsePages(prefix string) (map[string]*template.Template, error) {
	funcs := template.FuncMap{
		"when": func(t time.Time) string {
			if t.IsZero() {
				return "—"
			}
			return t.UTC().Format("2006-01-02 15:04:05 UTC")
		},
		"esc":  url.PathEscape,
		"qesc": url.QueryEscape,
		"pct": func(f *float64) string {
			if f == nil {
				return "—"
			}
			return fmt.Sprintf("%.0f%%", *f*100)
		},
		"join": strings.Join,
		"static": func(file string) string {
			return prefix + "/static/" + file
		},
		"scopeURL": func(name, sc string) string { return scopeBase(prefix, name, sc) + "/" },
		"ms": func(d time.Duration) string {
			if d <= 0 {
				return "—"
			}
			return fmt.Sprintf("%.0f ms", float64(d)/float64(time.Millisecond))
		},
	}
	layout, err := template.New("layout").Funcs(funcs).ParseFS(templateFiles, "templates/layout.html")
	if err != nil {
		return nil, fmt.Errorf("inspector: layout: %w", err)
	}
	files, err := fs.Glob(templateFiles, "templates/*.html")
	if err != nil {
		return nil, err
	}
	pages := map[string]*template.Template{}
	for _, f := range files {
		name := strings.TrimSuffix(strings.TrimPrefix(f, "templates/"), ".html")
		if name == "layout" {
			continue
		}
		t, err := template.Must(layout.Clone()).ParseFS(templateFiles, f)
		if err != nil {
			return nil, fmt.Errorf("inspector: page %s: %w", name, err)
		}
		pages[name] = t
	}
	return pages, nil
}
