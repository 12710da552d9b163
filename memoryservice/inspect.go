package memoryservice

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"errors"
	"fmt"
	"net"
	"net/http"
	"slices"
	"sort"
	"time"

	"github.com/agentmemory/agentmemory/provider"
	"github.com/agentmemory/agentmemory/store"
)

// What a door other than the API — the memory inspector (package
// inspector) — reads and does through the service: the memory stores
// and their scopes, a scope's update records, and the forgets the API
// makes, with the same keys and browser protections.

// ErrNoStore is returned by OpenStore for a memory store that does not
// exist.
var ErrNoStore = errors.New("memoryservice: no such memory store")

// ErrNoScope is returned by ForgetScope for a scope that holds nothing.
var ErrNoScope = errors.New("memoryservice: the scope holds no memories")

// ErrForgetIncomplete is returned by ForgetScope and SettleForget for a
// forget whose deletions were made but not yet logged or erased from the
// store's files: the service keeps it, and repeating the forget (or the
// sweep) completes it.
var ErrForgetIncomplete = errors.New("memoryservice: deleted, but not yet erased from the server's files; repeat to complete it")

// Keyless reports whether the service takes no API keys: then it
// answers only requests addressed to a loopback host, and every store is
// reachable.
func (s *Service) Keyless() bool { return len(s.cfg.Keys) == 0 }

// KeyStores reports whether key is one of Config.Keys (compared in
// constant time) and the memory stores it is limited to: nil means
// every store.
func (s *Service) KeyStores(key string) (stores []string, ok bool) {
	i := s.keyIndex(key)
	if i < 0 {
		return nil, false
	}
	return slices.Clone(s.cfg.Keys[i].Stores), true
}

// keyIndex returns the index of key in Config.Keys, or -1, comparing
// every key in constant time.
func (s *Service) keyIndex(key string) int {
	got := sha256.Sum256([]byte(key))
	match := -1
	for i, k := range s.cfg.Keys {
		want := sha256.Sum256([]byte(k.Key))
		if subtle.ConstantTimeCompare(got[:], want[:]) == 1 {
			match = i
		}
	}
	return match
}

// Throttle applies the API's rate limits (Config.RateLimit) to a request
// of another door: it takes a token of key's limit when key is one of
// Config.Keys (of the one limit of a service without keys), and
// otherwise one of the limit on failed authentications of the request's
// address. It returns zero when the request may go on, else how long
// until it may.
func (s *Service) Throttle(r *http.Request, key string) time.Duration {
	var ok bool
	var wait time.Duration
	switch i := s.keyIndex(key); {
	case s.Keyless():
		if s.limit != nil {
			ok, wait = s.limit.take(0)
		} else {
			ok = true
		}
	case i >= 0:
		if s.limit != nil {
			ok, wait = s.limit.take(i)
		} else {
			ok = true
		}
	default:
		if s.failures == nil {
			return 0
		}
		addr, _, err := net.SplitHostPort(r.RemoteAddr)
		if err != nil {
			addr = r.RemoteAddr
		}
		ok, wait = s.failures.take(addr)
	}
	if ok {
		return 0
	}
	return max(wait, time.Millisecond)
}

// PublicScheme returns the scheme, "http" or "https", a client reached
// the service at, as the address clients poll (Operation-Location) is
// made: the connection's, or, with Config.TrustForwarded, what the proxy
// in front says in the Forwarded or X-Forwarded-Proto header (never read
// otherwise). A door that sets cookies marks them Secure when it is
// "https", so that a browser behind a TLS-terminating proxy keeps them
// to HTTPS.
func (s *Service) PublicScheme(r *http.Request) string {
	scheme, _ := s.publicAddress(r)
	return scheme
}

// GuardPages puts h, web pages for a browser, behind the service's
// browser protections: without keys, a request whose Host is not a
// loopback name or address is refused (421, against DNS rebinding), and
// a cross-origin request that is not GET, HEAD or OPTIONS is refused
// (403), by http.CrossOriginProtection. Config.AllowedOrigins are not
// trusted here: they are web apps calling the API, not pages to post
// the inspector's forms. Form bodies pass (the API's guard takes only
// JSON). Authentication is h's.
func (s *Service) GuardPages(h http.Handler) http.Handler {
	cop := http.NewCrossOriginProtection()
	keyless := s.Keyless()
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if keyless && !loopbackHost(r.Host) {
			refuse(w, r, &apiError{Status: http.StatusMisdirectedRequest, Code: "misdirected_request", Type: "invalid_request_error", Param: "Host",
				Message: fmt.Sprintf("Host: %q is not a loopback name or address; a server without API keys answers only requests addressed to localhost, 127.0.0.0/8 or [::1]", truncate(r.Host, 256))})
			return
		}
		if err := cop.Check(r); err != nil {
			refuse(w, r, &apiError{Status: http.StatusForbidden, Code: "cross_origin_refused", Type: "permission_error", Param: "Origin",
				Message: fmt.Sprintf("a cross-origin %s from %q is refused", r.Method, truncate(r.Header.Get("Origin"), 256))})
			return
		}
		h.ServeHTTP(w, r)
	})
}

// StoreNames lists the names of the memory stores, sorted.
func (s *Service) StoreNames(ctx context.Context) ([]string, error) {
	docs, err := s.listRecords(ctx, RegistryUserID, store.RecordFilter{Prefix: "store."})
	if err != nil {
		return nil, err
	}
	names := make([]string, 0, len(docs))
	for _, d := range docs {
		var m memoryStore
		if _, err := decodeRecord(d, &m); err != nil {
			s.log.ErrorContext(ctx, "memoryservice: unreadable memory store record skipped", "id", d.ID, "err", err)
			continue
		}
		names = append(names, m.Name)
	}
	sort.Strings(names)
	return names, nil
}

// OpenStore returns memory store name as a door other than the API sees
// it, without creating it: ErrNoStore when it does not exist, and an
// error naming what is wrong with a malformed name.
func (s *Service) OpenStore(ctx context.Context, name string) (*GatewayStore, error) {
	def, _, err := s.loadStore(ctx, name)
	var ae *apiError
	if errors.As(err, &ae) && ae.Status == http.StatusNotFound {
		return nil, fmt.Errorf("%w: %q", ErrNoStore, name)
	}
	if err != nil {
		return nil, err
	}
	return &GatewayStore{svc: s, def: def}, nil
}

// Scopes lists the scopes the store has recorded, sorted.
func (g *GatewayStore) Scopes(ctx context.Context) ([]string, error) {
	docs, err := g.svc.listRecords(ctx, scopesUser(g.def.Name), store.RecordFilter{Prefix: "scope."})
	if err != nil {
		return nil, err
	}
	out := make([]string, 0, len(docs))
	for _, d := range docs {
		var sc scopeRecord
		if _, err := decodeRecord(d, &sc); err != nil || sc.Store != g.def.Name {
			g.svc.log.ErrorContext(ctx, "memoryservice: unreadable scope record skipped", "id", d.ID, "err", err)
			continue
		}
		out = append(out, sc.Scope)
	}
	sort.Strings(out)
	return out, nil
}

// CheckScope reports, as an error naming what is wrong, a scope the
// store cannot have (empty, not UTF-8, too long, holding / \ ? # or
// control characters).
func (g *GatewayStore) CheckScope(scope string) error {
	if _, err := scopeUser(g.def.Name, scope); err != nil {
		return errors.New(err.Error())
	}
	return nil
}

// ForgetScope forgets everything of scope, as delete_scope does: its
// updates, every memory and turn, its record, logged in the deletion
// log and erased from the store's files. A scope that holds nothing is
// ErrNoScope; one deleted but not yet erased is ErrForgetIncomplete.
func (g *GatewayStore) ForgetScope(ctx context.Context, scope string) error {
	err := g.svc.forgetScope(ctx, g.def.Name, scope)
	var ae *apiError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &ae) && ae.Status == http.StatusNotFound:
		return fmt.Errorf("%w: %q", ErrNoScope, scope)
	case errors.As(err, &ae) && ae.Code == "forget_incomplete":
		return ErrForgetIncomplete
	}
	return err
}

// SettleForget completes a forget call of the store's provider
// (ForgetInsight, ForgetSession, ForgetInteraction) that returned rc and
// err, as the API's own forgets are: nil when the call succeeded or is
// completed now, ErrForgetIncomplete when it could not be (the service
// keeps rc and completes it later), and err for any other failure.
func (g *GatewayStore) SettleForget(ctx context.Context, rc *provider.Receipt, err error) error {
	p, perr := g.Provider()
	if perr != nil {
		return errors.Join(err, perr)
	}
	err = g.svc.settle(ctx, g.def.Name, p, rc, err)
	var ae *apiError
	if errors.As(err, &ae) && ae.Code == "forget_incomplete" {
		return ErrForgetIncomplete
	}
	return err
}

// Update is one update_memories operation of a scope, as its record
// keeps it until Config.UpdateRetention after it finished.
type Update struct {
	ID        string
	SessionID string
	// Status is queued, in_progress, completed, failed or superseded.
	Status string
	// CreatedAt is when it was accepted, DueAt when it was due to run.
	CreatedAt, DueAt time.Time
	// RunAt and EndedAt are when its last run began (holding the scope's
	// lease) and ended; zero when it has not run or not ended.
	RunAt, EndedAt time.Time
	// Turns is how many turns it recorded; Operations how many memory
	// items it created, updated or deleted.
	Turns, Operations int
	// Usage is what its model calls spent (accept and run).
	Usage UpdateUsage
}

// UpdateUsage is the tokens an update's model calls spent.
type UpdateUsage struct {
	Input, Output, Embedding, Total int
}

// Updates returns the scope's update records, newest first, at most
// limit of them (all of them when limit is zero).
func (g *GatewayStore) Updates(ctx context.Context, scope string, limit int) ([]Update, error) {
	docs, err := g.svc.listRecords(ctx, updatesUser(scopeHash(g.def.Name, scope)), store.RecordFilter{Prefix: "update.", Limit: limit})
	if err != nil {
		return nil, err
	}
	out := make([]Update, 0, len(docs))
	for _, d := range docs {
		var rec updateRecord
		if _, err := decodeRecord(d, &rec); err != nil {
			continue
		}
		u := Update{ID: rec.ID, SessionID: rec.SessionID, Status: rec.Status, CreatedAt: rec.CreatedAt, DueAt: rec.DueAt, Turns: rec.Turns}
		if n := len(rec.Claims); n > 0 {
			u.RunAt, u.EndedAt = rec.Claims[n-1].RunAt, rec.Claims[n-1].EndedAt
		}
		var spent apiUsage
		if rec.Result != nil {
			u.Operations = len(rec.Result.MemoryOperations)
			spent = rec.Result.Usage
		} else {
			spent = spent.plus(rec.Spent)
		}
		u.Usage = UpdateUsage{Input: spent.InputTokens, Output: spent.OutputTokens, Embedding: spent.EmbeddingTokens, Total: spent.TotalTokens}
		out = append(out, u)
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].CreatedAt.After(out[j].CreatedAt) })
	if limit > 0 && len(out) > limit {
		out = out[:limit]
	}
	return out, nil
}
