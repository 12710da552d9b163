package memoryservice

import (
	"context"
	"errors"
	"net/http"
	"sort"
	"strconv"
	"time"
	"unicode/utf8"

	"github.com/agentmemory/agentmemory/store"
)

// memoryStore is a memory store as the API shows it and the registry keeps
// it.
type memoryStore struct {
	Object      string            `json:"object"`
	ID          string            `json:"id"`
	CreatedAt   int64             `json:"created_at"`
	UpdatedAt   int64             `json:"updated_at"`
	Name        string            `json:"name"`
	Description string            `json:"description,omitempty"`
	Metadata    map[string]string `json:"metadata,omitempty"`
	Definition  definition        `json:"definition"`
}

type definition struct {
	Kind           string          `json:"kind"`
	ChatModel      string          `json:"chat_model"`
	EmbeddingModel string          `json:"embedding_model"`
	Options        *defaultOptions `json:"options,omitempty"`
}

type defaultOptions struct {
	UserProfileEnabled      *bool  `json:"user_profile_enabled,omitempty"`
	UserProfileDetails      string `json:"user_profile_details,omitempty"`
	ChatSummaryEnabled      *bool  `json:"chat_summary_enabled,omitempty"`
	ProceduralMemoryEnabled *bool  `json:"procedural_memory_enabled,omitempty"`
	DefaultTTLSeconds       *int64 `json:"default_ttl_seconds,omitempty"`
}

func (m *memoryStore) profileEnabled() bool {
	o := m.Definition.Options
	return o == nil || o.UserProfileEnabled == nil || *o.UserProfileEnabled
}

// proceduralEnabled reports procedural_memory_enabled (off by default).
func (m *memoryStore) proceduralEnabled() bool {
	o := m.Definition.Options
	return o != nil && o.ProceduralMemoryEnabled != nil && *o.ProceduralMemoryEnabled
}

// kindEnabled reports whether the store keeps memory items of kind.
func (m *memoryStore) kindEnabled(kind string) bool {
	switch kind {
	case kindUserProfile:
		return m.profileEnabled()
	case kindChatSummary:
		return m.summaryEnabled()
	case kindProcedural:
		return m.proceduralEnabled()
	}
	return false
}

func (m *memoryStore) summaryEnabled() bool {
	o := m.Definition.Options
	return o == nil || o.ChatSummaryEnabled == nil || *o.ChatSummaryEnabled
}

// Limits on a store's fields.
const (
	maxDescription   = 512
	maxMetadataKeys  = 16
	maxMetadataKey   = 64
	maxMetadataValue = 512
	maxModelName     = 256
	maxProfileDetail = 4096
)

func checkText(param, v string, max int) error {
	if !utf8.ValidString(v) {
		return badRequest(param, "not valid UTF-8")
	}
	if len(v) > max {
		return badRequest(param, "%d bytes, at most %d", len(v), max)
	}
	return nil
}

func checkMetadata(md map[string]string) error {
	if len(md) > maxMetadataKeys {
		return badRequest("metadata", "%d keys, at most %d", len(md), maxMetadataKeys)
	}
	for k, v := range md {
		if k == "" {
			return badRequest("metadata", "empty key")
		}
		if err := checkText("metadata."+k, k, maxMetadataKey); err != nil {
			return err
		}
		if err := checkText("metadata."+k, v, maxMetadataValue); err != nil {
			return err
		}
	}
	return nil
}

func checkDefinition(d *definition) error {
	if d == nil {
		return badRequest("definition", "required")
	}
	if d.Kind != "default" {
		return badRequest("definition.kind", "%q: the only kind is \"default\"", d.Kind)
	}
	if d.ChatModel == "" {
		return badRequest("definition.chat_model", "required")
	}
	if err := checkText("definition.chat_model", d.ChatModel, maxModelName); err != nil {
		return err
	}
	if d.EmbeddingModel == "" {
		return badRequest("definition.embedding_model", "required")
	}
	if err := checkText("definition.embedding_model", d.EmbeddingModel, maxModelName); err != nil {
		return err
	}
	if o := d.Options; o != nil {
		if err := checkText("definition.options.user_profile_details", o.UserProfileDetails, maxProfileDetail); err != nil {
			return err
		}
		if o.DefaultTTLSeconds != nil && (*o.DefaultTTLSeconds < 0 || *o.DefaultTTLSeconds > maxTTLSeconds) {
			return badRequest("definition.options.default_ttl_seconds", "%d: from 0 (never expire) to %d seconds", *o.DefaultTTLSeconds, maxTTLSeconds)
		}
	}
	return nil
}

// loadStore reads memory store name, or a 404 naming it.
func (s *Service) loadStore(ctx context.Context, name string) (*memoryStore, string, error) {
	if err := checkName("name", name); err != nil {
		return nil, "", err
	}
	var m memoryStore
	etag, err := s.getRecord(ctx, storeDocID(name), &m)
	if errors.Is(err, store.ErrNotFound) {
		return nil, "", notFound("name", "memory store %q not found", name)
	}
	return &m, etag, err
}

func (s *Service) createStore(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Name        string            `json:"name"`
		Description string            `json:"description"`
		Metadata    map[string]string `json:"metadata"`
		Definition  *definition       `json:"definition"`
	}
	if err := s.decode(w, r, &req); err != nil {
		writeError(w, err)
		return
	}
	if err := checkName("name", req.Name); err != nil {
		writeError(w, err)
		return
	}
	if !mayReach(r, req.Name) {
		writeError(w, forbidden(req.Name))
		return
	}
	if err := checkText("description", req.Description, maxDescription); err != nil {
		writeError(w, err)
		return
	}
	if err := checkMetadata(req.Metadata); err != nil {
		writeError(w, err)
		return
	}
	if err := checkDefinition(req.Definition); err != nil {
		writeError(w, err)
		return
	}
	now := s.cfg.Now()
	m := &memoryStore{Object: "memory_store", ID: newID("memstore_"), CreatedAt: now.Unix(), UpdatedAt: now.Unix(),
		Name: req.Name, Description: req.Description, Metadata: req.Metadata, Definition: *req.Definition}
	// The models it names must serve: known to the endpoint, and vectors
	// the store can hold.
	if _, _, _, err := s.storeModels(r.Context(), m); err != nil {
		var ae *apiError
		if !errors.As(err, &ae) {
			s.log.WarnContext(r.Context(), "memoryservice: a new store's models could not be checked", "store", m.Name, "err", err)
			err = unavailable("the models of the definition could not be checked (the model endpoint failed); try again")
		}
		writeError(w, err)
		return
	}
	err := s.putRecord(r.Context(), storeDocID(m.Name), store.CreateOnly, now, false, m)
	if errors.Is(err, store.ErrConflict) {
		writeError(w, conflict("name", "a memory store named %q already exists", m.Name))
		return
	}
	if err != nil {
		s.fail(w, r, "create memory store", err)
		return
	}
	writeJSON(w, http.StatusOK, m)
}

func (s *Service) getStore(w http.ResponseWriter, r *http.Request, name string) {
	m, _, err := s.loadStore(r.Context(), name)
	if err != nil {
		s.fail(w, r, "get memory store", err)
		return
	}
	writeJSON(w, http.StatusOK, m)
}

func (s *Service) updateStore(w http.ResponseWriter, r *http.Request, name string) {
	var req struct {
		Description *string           `json:"description"`
		Metadata    map[string]string `json:"metadata"`
	}
	if err := s.decode(w, r, &req); err != nil {
		writeError(w, err)
		return
	}
	if req.Description != nil {
		if err := checkText("description", *req.Description, maxDescription); err != nil {
			writeError(w, err)
			return
		}
	}
	if err := checkMetadata(req.Metadata); err != nil {
		writeError(w, err)
		return
	}
	for attempt := 0; ; attempt++ {
		m, etag, err := s.loadStore(r.Context(), name)
		if err != nil {
			s.fail(w, r, "update memory store", err)
			return
		}
		if req.Description != nil {
			m.Description = *req.Description
		}
		if req.Metadata != nil {
			m.Metadata = req.Metadata
		}
		m.UpdatedAt = s.cfg.Now().Unix()
		err = s.putRecord(r.Context(), storeDocID(name), etag, time.Unix(m.CreatedAt, 0), false, m)
		if errors.Is(err, store.ErrConflict) && attempt < 5 {
			continue // changed meanwhile: apply the change to the new version
		}
		if err != nil {
			s.fail(w, r, "update memory store", err)
			return
		}
		writeJSON(w, http.StatusOK, m)
		return
	}
}

// listPage is the API's paged list.
type listPage[T any] struct {
	Object  string `json:"object"`
	Data    []T    `json:"data"`
	FirstID string `json:"first_id,omitempty"`
	LastID  string `json:"last_id,omitempty"`
	HasMore bool   `json:"has_more"`
}

// pageQuery is limit, order, after and before of a list request.
type pageQuery struct {
	limit         int
	desc          bool
	after, before string
}

func parsePage(r *http.Request) (pageQuery, error) {
	q := r.URL.Query()
	p := pageQuery{limit: 20, desc: true, after: q.Get("after"), before: q.Get("before")}
	if v := q.Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > 100 {
			return p, badRequest("limit", "%q: a whole number from 1 to 100", v)
		}
		p.limit = n
	}
	switch q.Get("order") {
	case "", "desc":
	case "asc":
		p.desc = false
	default:
		return p, badRequest("order", "%q: \"asc\" or \"desc\"", q.Get("order"))
	}
	return p, nil
}

// paginate returns the page of items (already in the requested order)
// after or before the item whose id is the cursor.
func paginate[T any](items []T, id func(T) string, p pageQuery) (listPage[T], error) {
	start, end := 0, len(items)
	find := func(param, cursor string) (int, error) {
		for i, it := range items {
			if id(it) == cursor {
				return i, nil
			}
		}
		return 0, badRequest(param, "%q is not an id of this list", cursor)
	}
	if p.after != "" {
		i, err := find("after", p.after)
		if err != nil {
			return listPage[T]{}, err
		}
		start = i + 1
	}
	if p.before != "" {
		i, err := find("before", p.before)
		if err != nil {
			return listPage[T]{}, err
		}
		end = i
	}
	page := listPage[T]{Object: "list", Data: []T{}}
	if start >= end {
		return page, nil
	}
	sel := items[start:end]
	if p.before != "" && p.after == "" && len(sel) > p.limit {
		// before alone: the page just before the cursor
		sel = sel[len(sel)-p.limit:]
		page.HasMore = true
	} else if len(sel) > p.limit {
		sel = sel[:p.limit]
		page.HasMore = true
	}
	page.Data = sel
	page.FirstID, page.LastID = id(sel[0]), id(sel[len(sel)-1])
	return page, nil
}

func (s *Service) listStores(w http.ResponseWriter, r *http.Request) {
	p, err := parsePage(r)
	if err != nil {
		writeError(w, err)
		return
	}
	docs, err := s.listRecords(r.Context(), "store.", store.SessionFilter{})
	if err != nil {
		s.fail(w, r, "list memory stores", err)
		return
	}
	stores := make([]*memoryStore, 0, len(docs))
	for _, d := range docs {
		var m memoryStore
		if _, err := s.getRecordFrom(d, &m); err != nil {
			s.log.WarnContext(r.Context(), "memoryservice: unreadable memory store record skipped", "id", d.ID, "err", err)
			continue
		}
		if !mayReach(r, m.Name) {
			continue
		}
		stores = append(stores, &m)
	}
	sort.Slice(stores, func(i, j int) bool {
		a, b := stores[i], stores[j]
		if a.CreatedAt != b.CreatedAt {
			return (a.CreatedAt < b.CreatedAt) != p.desc
		}
		return (a.Name < b.Name) != p.desc
	})
	page, err := paginate(stores, func(m *memoryStore) string { return m.ID }, p)
	if err != nil {
		writeError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, page)
}

func (s *Service) deleteStore(w http.ResponseWriter, r *http.Request, name string) {
	ctx := r.Context()
	if _, _, err := s.loadStore(ctx, name); err != nil {
		s.fail(w, r, "delete memory store", err)
		return
	}
	// Its searches go whatever else fails (a scope only searched has no
	// index record), and one still running records nothing.
	defer s.searches.drop(name, "", true, s.cfg.Now())
	// Forget every scope, then the store's updates, then the definition:
	// a failure midway leaves the definition, so the delete can be retried.
	scopes, err := s.listRecords(ctx, "scope."+name+".", store.SessionFilter{})
	if err != nil {
		s.fail(w, r, "delete memory store", err)
		return
	}
	for _, d := range scopes {
		var sc scopeRecord
		if _, err := s.getRecordFrom(d, &sc); err != nil || sc.Store != name {
			continue
		}
		if err := s.forgetScope(ctx, name, sc.Scope); err != nil {
			s.fail(w, r, "delete memory store", err)
			return
		}
	}
	if err := s.deleteUpdates(ctx, name); err != nil {
		s.fail(w, r, "delete memory store", err)
		return
	}
	s.dropProvider(ctx, name)
	if err := s.deleteRecord(ctx, storeDocID(name)); err != nil {
		s.fail(w, r, "delete memory store", err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"object": "memory_store.deleted", "name": name, "deleted": true})
}
