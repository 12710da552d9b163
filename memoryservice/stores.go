package memoryservice

import (
	"context"
	"errors"
	"fmt"
	"net/http"
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
	etag, err := s.getRecord(ctx, storeKey(name), &m)
	if errors.Is(err, store.ErrNotFound) {
		return nil, "", notFound("name", "memory store %q not found", name)
	}
	return &m, etag, err
}

// storeVersion is a memory store's definition as read, with its ETag.
type storeVersion struct {
	def  *memoryStore
	etag string
}

// errStaleStore is an accept's batch failed by its check of the memory
// store's definition: changed, or deleted, since it was read.
var errStaleStore = errors.New("memoryservice: the memory store changed since its definition was read")

// acceptingStore returns memory store name's definition and ETag for an
// accept. Where the store writes an accept's batch whole, it is the one
// this replica read last, unless fresh: the batch checks its ETag
// (enqueue), so that one changed or deleted since fails it with
// errStaleStore, and the accept asks again, fresh. Elsewhere it is read.
// The definition returned is shared: it is not to be changed.
func (s *Service) acceptingStore(ctx context.Context, name string, fresh bool) (*memoryStore, string, error) {
	_, batched := s.rec.(store.RecordBatch)
	if batched && !fresh {
		if v, ok := s.defs.get(name); ok {
			return v.def, v.etag, nil
		}
	}
	def, etag, err := s.loadStore(ctx, name)
	if err != nil {
		s.defs.drop(name)
		return nil, "", err
	}
	if batched {
		s.defs.put(name, storeVersion{def, etag})
	}
	return def, etag, nil
}

// createStoreRequest is the body of a memory store's creation.
type createStoreRequest struct {
	Name        string            `json:"name"`
	Description string            `json:"description"`
	Metadata    map[string]string `json:"metadata"`
	Definition  *definition       `json:"definition"`
}

func (s *Service) createStore(w http.ResponseWriter, r *http.Request) (*memoryStore, error) {
	var req createStoreRequest
	if err := s.decode(w, r, &req); err != nil {
		return nil, err
	}
	if err := checkName("name", req.Name); err != nil {
		return nil, err
	}
	if !mayReach(r, req.Name) {
		return nil, forbidden(req.Name)
	}
	if err := checkText("description", req.Description, maxDescription); err != nil {
		return nil, err
	}
	if err := checkMetadata(req.Metadata); err != nil {
		return nil, err
	}
	if err := checkDefinition(req.Definition); err != nil {
		return nil, err
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
		return nil, err
	}
	err := s.putRecord(r.Context(), storeKey(m.Name), store.CreateOnly, now, false, m)
	if errors.Is(err, store.ErrConflict) {
		return nil, conflict("name", "a memory store named %q already exists", m.Name)
	}
	if err != nil {
		return nil, err
	}
	return m, nil
}

func (s *Service) getStore(w http.ResponseWriter, r *http.Request) (*memoryStore, error) {
	m, _, err := s.loadStore(r.Context(), r.PathValue("name"))
	return m, err
}

// updateStoreRequest is the body of a memory store's update: what it
// gives replaces what the store has.
type updateStoreRequest struct {
	Description *string           `json:"description"`
	Metadata    map[string]string `json:"metadata"`
}

// maxStoreAttempts bounds the retries of a store's update on an ETag
// conflict (another request writing the same store).
const maxStoreAttempts = 5

func (s *Service) updateStore(w http.ResponseWriter, r *http.Request) (*memoryStore, error) {
	name := r.PathValue("name")
	var req updateStoreRequest
	if err := s.decode(w, r, &req); err != nil {
		return nil, err
	}
	if req.Description != nil {
		if err := checkText("description", *req.Description, maxDescription); err != nil {
			return nil, err
		}
	}
	if err := checkMetadata(req.Metadata); err != nil {
		return nil, err
	}
	for attempt := 0; ; attempt++ {
		m, etag, err := s.loadStore(r.Context(), name)
		if err != nil {
			return nil, err
		}
		if req.Description != nil {
			m.Description = *req.Description
		}
		if req.Metadata != nil {
			m.Metadata = req.Metadata
		}
		m.UpdatedAt = s.cfg.Now().Unix()
		s.defs.drop(name)
		err = s.putRecord(r.Context(), storeKey(name), etag, time.Unix(m.CreatedAt, 0), false, m)
		if errors.Is(err, store.ErrConflict) && attempt < maxStoreAttempts {
			continue // changed meanwhile: apply the change to the new version
		}
		if err != nil {
			return nil, err
		}
		return m, nil
	}
}

func (s *Service) listStores(w http.ResponseWriter, r *http.Request) (listPage[*memoryStore], error) {
	p, err := parsePage(r)
	if err != nil {
		return listPage[*memoryStore]{}, err
	}
	docs, err := s.listRecords(r.Context(), RegistryUserID, store.RecordFilter{Prefix: "store."})
	if err != nil {
		return listPage[*memoryStore]{}, err
	}
	stores := make([]*memoryStore, 0, len(docs))
	for _, d := range docs {
		var m memoryStore
		if _, err := decodeRecord(d, &m); err != nil {
			s.log.ErrorContext(r.Context(), "memoryservice: unreadable memory store record skipped", "id", d.ID, "err", err)
			continue
		}
		if !mayReach(r, m.Name) {
			continue
		}
		stores = append(stores, &m)
	}
	return paginate(stores, listOrder[*memoryStore]{
		id:  func(m *memoryStore) string { return m.ID },
		at:  func(m *memoryStore) int64 { return m.CreatedAt },
		tie: func(m *memoryStore) string { return m.Name },
	}, p)
}

// storeDeleted is the answer to a memory store's deletion.
type storeDeleted struct {
	Object  string `json:"object"`
	Name    string `json:"name"`
	Deleted bool   `json:"deleted"`
}

func (s *Service) deleteStore(w http.ResponseWriter, r *http.Request) (storeDeleted, error) {
	ctx, name := r.Context(), r.PathValue("name")
	if _, _, err := s.loadStore(ctx, name); err != nil {
		return storeDeleted{}, err
	}
	// Its searches go first (a scope only searched has no index record).
	if err := s.dropSearches(ctx, name, ""); err != nil {
		return storeDeleted{}, err
	}
	// Forget every scope, then the store's updates, then the definition:
	// a failure midway leaves the definition, so the delete can be retried.
	scopes, err := s.listRecords(ctx, scopesUser(name), store.RecordFilter{Prefix: "scope."})
	if err != nil {
		return storeDeleted{}, err
	}
	for _, d := range scopes {
		var sc scopeRecord
		if _, err := decodeRecord(d, &sc); err != nil || sc.Store != name {
			// Its scope cannot be forgotten: the store stays, rather than
			// leave the scope's memories orphaned (answered 500, logged).
			return storeDeleted{}, errors.Join(err, fmt.Errorf("memoryservice: scope record %s of memory store %q is unreadable", d.ID, name))
		}
		var ae *apiError
		if err := s.forgetScope(ctx, name, sc.Scope); err != nil && !(errors.As(err, &ae) && ae.Status == http.StatusNotFound) {
			return storeDeleted{}, err
		}
	}
	if err := s.deleteUpdates(ctx, name); err != nil {
		return storeDeleted{}, err
	}
	s.dropProvider(ctx, name)
	s.defs.drop(name)
	if err := s.deleteRecord(ctx, storeKey(name)); err != nil {
		return storeDeleted{}, err
	}
	return storeDeleted{Object: "memory_store.deleted", Name: name, Deleted: true}, nil
}
