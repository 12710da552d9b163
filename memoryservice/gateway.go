package memoryservice

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"time"

	"github.com/agentmemory/agentmemory/provider"
	"github.com/agentmemory/agentmemory/store"
)

// GatewayStore is one memory store as seen by a door other than this
// API — the OpenAI-compatible gateway (package gateway): a scope of the
// store is one of the door's users, so what the door writes is listed,
// searched and deleted here and over MCP too.
type GatewayStore struct {
	svc *Service
	def *memoryStore
}

// GatewayStore returns memory store name, creating it when it does not
// exist with chatModel and embeddingModel as its definition's models
// (checked as a creation through the API checks them).
func (s *Service) GatewayStore(ctx context.Context, name, chatModel, embeddingModel string) (*GatewayStore, error) {
	def, _, err := s.loadStore(ctx, name)
	var ae *apiError
	if errors.As(err, &ae) && ae.Status == http.StatusNotFound && checkName("name", name) == nil {
		now := s.cfg.Now()
		m := &memoryStore{Object: "memory_store", ID: newID("memstore_"), CreatedAt: now.Unix(), UpdatedAt: now.Unix(),
			Name: name, Description: "created by the OpenAI-compatible gateway",
			Definition: definition{Kind: "default", ChatModel: chatModel, EmbeddingModel: embeddingModel}}
		if err := checkDefinition(&m.Definition); err != nil {
			return nil, err
		}
		if _, _, _, err := s.storeModels(ctx, m); err != nil {
			return nil, err
		}
		err = s.putRecord(ctx, storeKey(name), store.CreateOnly, now, false, m)
		if errors.Is(err, store.ErrConflict) { // created meanwhile
			def, _, err = s.loadStore(ctx, name)
		} else {
			def = m
		}
	}
	if err != nil {
		return nil, err
	}
	return &GatewayStore{svc: s, def: def}, nil
}

// Name is the memory store's name.
func (g *GatewayStore) Name() string { return g.def.Name }

// Store is the store the service runs on.
func (g *GatewayStore) Store() store.Store { return g.svc.st }

// Provider is the store's provider, the one the API's own operations
// use: a door that records and forgets through it shares its sessions,
// so that a forget through any door drops what the others hold of the
// scope. Its sessions end when the door ends them (EndSession).
func (g *GatewayStore) Provider() (*provider.MemoryProvider, error) {
	return g.svc.providerFor(g.def)
}

// UserID is the agentmemory user id of scope (UserID(name, scope)).
func (g *GatewayStore) UserID(scope string) string { return UserID(g.def.Name, scope) }

// NoteScope records that the store has scope, so that deleting the store
// forgets it and the sweep visits it. It is idempotent.
func (g *GatewayStore) NoteScope(ctx context.Context, scope string) error {
	return g.svc.noteScope(ctx, g.def.Name, scope)
}

// Protect puts h behind the service's browser guard and API keys, as the
// API's own routes are, and refuses with 403 a key limited to memory
// stores other than this one. Its requests get request ids and request
// logs, and Config.ObserveRequest is told of them as gateway_ operations
// (gateway_chat_completions, gateway_responses, gateway_models,
// gateway_memory), refused ones as "other".
func (g *GatewayStore) Protect(h http.Handler) http.Handler {
	name := g.def.Name
	inner := g.svc.guard(g.svc.authenticate(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !mayReach(r, name) {
			refuse(w, r, forbidden(name))
			return
		}
		start := time.Now()
		rec := &statusRecorder{ResponseWriter: w, status: http.StatusOK}
		h.ServeHTTP(rec, r)
		g.svc.observed(r, gatewayOperation(r.URL.Path), rec.status, time.Since(start))
	})))
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { g.svc.serve(w, r, inner) })
}

// gatewayOperation names the operation of a request to the gateway at
// path for Config.ObserveRequest: gateway_ and the route's last word.
func gatewayOperation(path string) string {
	rest, _ := strings.CutPrefix(path, "/v1/")
	switch {
	case rest == "chat/completions":
		return "gateway_chat_completions"
	case rest == "responses":
		return "gateway_responses"
	case rest == "models" || strings.HasPrefix(rest, "models/"):
		return "gateway_models"
	case rest == "memory" || strings.HasPrefix(rest, "memory/"):
		return "gateway_memory"
	}
	return otherOperation
}

// Memory is one memory item of a scope, as items:list shows it.
type Memory struct {
	// ID is the item's memory_id in the Memory Store API.
	ID string `json:"id"`
	// Kind is user_profile, chat_summary or procedural.
	Kind    string `json:"kind"`
	Content string `json:"content"`
	// UpdatedAt is in Unix seconds.
	UpdatedAt int64 `json:"updated_at"`
	// Scope is the scope the item belongs to.
	Scope string `json:"scope"`
	// Document is the id of the agentmemory document the item shows: an
	// insight (user_profile, procedural) or a session (chat_summary).
	Document string `json:"-"`
}

func exported(it memoryItem) Memory {
	return Memory{ID: it.MemoryID, Kind: it.Kind, Content: it.Content, UpdatedAt: it.UpdatedAt, Scope: it.Scope, Document: it.docID}
}

// Memories lists the memory items of scope, as items:list does.
func (g *GatewayStore) Memories(ctx context.Context, scope string) ([]Memory, error) {
	its, err := g.svc.scopeItems(ctx, g.def, scope)
	if err != nil {
		return nil, err
	}
	out := make([]Memory, len(its))
	for i, it := range its {
		out[i] = exported(it)
	}
	return out, nil
}

// ErrNoMemory is returned by FindMemory for an id that names no memory
// item of the store.
var ErrNoMemory = errors.New("memoryservice: no such memory item")

// FindMemory returns the memory item of the store with id (a memory_id
// of the API), or ErrNoMemory.
func (g *GatewayStore) FindMemory(ctx context.Context, id string) (Memory, error) {
	it, err := g.svc.findItem(ctx, g.def, id)
	var ae *apiError
	if errors.As(err, &ae) && ae.Status == http.StatusNotFound {
		return Memory{}, ErrNoMemory
	}
	if err != nil {
		return Memory{}, err
	}
	return exported(it), nil
}

// DropScope deletes the record of scope and its update records, for a
// door that has forgotten the scope's memories (provider.ForgetUser):
// the scope is then no longer listed or swept. Complete the forget
// (provider.MemoryProvider.CompleteForget) after it, so that the store's
// files are scrubbed of the record too.
func (g *GatewayStore) DropScope(ctx context.Context, scope string) error {
	userID := g.UserID(scope)
	unlockAccept := g.svc.lockScope("accept", userID)
	defer unlockAccept()
	unlockRun := g.svc.lockScope("run", userID)
	defer unlockRun()
	if err := g.svc.deleteScopeUpdates(ctx, g.def.Name, scope); err != nil {
		return err
	}
	return g.svc.deleteRecord(ctx, scopeKey(g.def.Name, scope))
}

// Expire forgets the memories of scope older than the store's
// default_ttl_seconds, as every read through the API and MCP hides them
// and the sweep deletes them: call it before reading a scope's memory.
// Without a TTL it does nothing.
func (g *GatewayStore) Expire(ctx context.Context, scope string) error {
	return g.svc.expireScope(ctx, g.def, scope)
}
