package memoryservice

import (
	"context"
	"net/http"
	"slices"
	"strings"

	"github.com/agentmemory/agentmemory/prompts"
	"github.com/agentmemory/agentmemory/retrieval"
	"github.com/agentmemory/agentmemory/store"
	"github.com/agentmemory/agentmemory/usage"
)

// Bounds of search_memories' options.max_memories.
const (
	defaultSearchMemories = 10
	maxSearchMemories     = 100
)

// searchRequest is the body of search_memories.
type searchRequest struct {
	Scope            string         `json:"scope"`
	Items            []inputItem    `json:"items"`
	PreviousSearchID string         `json:"previous_search_id"`
	Options          *searchOptions `json:"options"`
}

type searchOptions struct {
	MaxMemories *int `json:"max_memories"`
}

// searchResponse is the answer to search_memories.
type searchResponse struct {
	SearchID string        `json:"search_id"`
	Memories []searchFound `json:"memories"`
	Usage    apiUsage      `json:"usage"`
}

// searchFound is one memory a search found.
type searchFound struct {
	MemoryItem memoryItem `json:"memory_item"`
}

// searchMemories finds the memories of a scope that bear on the
// conversation the request gives (after previous_search_id's, which it
// continues), or, given none, the scope's profile items.
func (s *Service) searchMemories(w http.ResponseWriter, r *http.Request) (searchResponse, error) {
	name := r.PathValue("name")
	var req searchRequest
	if err := s.decode(w, r, &req); err != nil {
		return searchResponse{}, err
	}
	meter := &usage.Meter{}
	ctx := usage.WithMeter(r.Context(), meter)
	startedAt := s.cfg.Now()
	def, _, err := s.loadStore(ctx, name)
	if err != nil {
		return searchResponse{}, err
	}
	userID, err := scopeUser(name, req.Scope)
	if err != nil {
		return searchResponse{}, err
	}
	// The conversation so far: the earlier search's, which this one
	// continues.
	var earlier []prompts.Turn
	if req.PreviousSearchID != "" {
		prev, ok, err := s.getSearch(ctx, name, req.PreviousSearchID, startedAt)
		if err != nil {
			return searchResponse{}, err
		}
		// A store whose memories expire sooner expires its searches too.
		if !ok || prev.Scope != req.Scope || expired(prev.At, s.cutoff(def)) {
			return searchResponse{}, badRequest("previous_search_id", "%.80q is not a search of this scope of memory store %q still kept (searches are kept %v); search again without it",
				req.PreviousSearchID, name, s.cfg.SearchTTL)
		}
		earlier = prev.turns()
	}
	top := defaultSearchMemories
	if req.Options != nil && req.Options.MaxMemories != nil {
		top = *req.Options.MaxMemories
		if top < 1 || top > maxSearchMemories {
			return searchResponse{}, badRequest("options.max_memories", "%d: from 1 to %d", top, maxSearchMemories)
		}
	}
	msgs, err := conversation(req.Items)
	if err != nil {
		return searchResponse{}, err
	}
	said := make([]prompts.Turn, 0, len(msgs))
	for _, m := range msgs {
		said = append(said, prompts.Turn{Role: string(m.Role), Text: m.Text})
	}
	// Kept before the search reads anything: a delete_scope that begins
	// after this finds it.
	id := newID("memsearch_")
	if err := s.putSearch(ctx, name, id, req.Scope, append(slices.Clone(earlier), said...), startedAt); err != nil {
		return searchResponse{}, err
	}
	var found []memoryItem
	if len(said) == 0 {
		found, err = s.staticItems(ctx, def, req.Scope, top)
	} else {
		found, err = s.recall(ctx, def, req.Scope, userID, earlier, said, top)
	}
	if err != nil {
		return searchResponse{}, err
	}
	out := make([]searchFound, 0, len(found))
	for _, it := range found {
		out = append(out, searchFound{MemoryItem: it})
	}
	return searchResponse{SearchID: id, Memories: out, Usage: usageOf(meter)}, nil
}

// staticItems is a search without a conversation: the scope's static
// memories (its profile items), at most top of them.
func (s *Service) staticItems(ctx context.Context, def *memoryStore, scope string, top int) ([]memoryItem, error) {
	all, err := s.scopeItems(ctx, def, scope)
	if err != nil {
		return nil, err
	}
	var found []memoryItem
	seen := map[string]bool{}
	for _, it := range all {
		if it.Kind != kindChatSummary && len(found) < top && firstSaying(seen, it) {
			found = append(found, it)
		}
	}
	return found, nil
}

// firstSaying reports whether no memory of seen says what it says
// (store.ContentHash: case and spacing aside), and adds it to seen. A
// search gives each statement once, not once per document that makes
// it: a long-term profile of one insight says what that insight says,
// and several sessions may end with the same summary.
func firstSaying(seen map[string]bool, it memoryItem) bool {
	h := store.ContentHash(it.Content)
	if seen[h] {
		return false
	}
	seen[h] = true
	return true
}

// recall is retrieval's search for what was said, read in the light of
// the earlier conversation: at most top memories of the kinds the store
// keeps.
func (s *Service) recall(ctx context.Context, def *memoryStore, scope, userID string, earlier, said []prompts.Turn, top int) ([]memoryItem, error) {
	var kinds []store.Kind
	if def.profileEnabled() || def.proceduralEnabled() {
		kinds = append(kinds, store.KindInsight)
	}
	if def.summaryEnabled() {
		kinds = append(kinds, store.KindSessionSummary)
	}
	p, err := s.providerFor(def)
	if err != nil {
		return nil, err
	}
	// With a TTL or procedural memory, retrieval's results are read
	// through the scope's items: kept only if not expired (the sweep may
	// not have removed them yet), with an insight's kind from its
	// category. Ask for more, as some may drop.
	live, err := s.liveItems(ctx, def, scope)
	if err != nil {
		return nil, err
	}
	ask := top
	if live != nil {
		ask = min(2*top, maxSearchMemories)
	}
	// The new messages are the query; after an earlier search, a vague
	// one is read in the light of the conversation (retrieval's query
	// rewriting).
	texts := make([]string, len(said))
	for i, t := range said {
		texts[i] = t.Text
	}
	q := strings.Join(texts, "\n")
	if len(earlier) > 0 {
		q = p.Retriever().Rewrite(ctx, earlier, q)
	}
	if len(kinds) == 0 {
		return nil, nil
	}
	ms, err := p.Retriever().Search(ctx, userID, q, retrieval.SearchOptions{TopK: ask, Kinds: kinds})
	if err != nil {
		return nil, err
	}
	var found []memoryItem
	seen := map[string]bool{}
	for _, m := range ms {
		if len(found) >= top {
			break
		}
		var it memoryItem
		if live != nil {
			var ok bool
			if it, ok = live[docKey(m.Kind, m.ID)]; !ok {
				continue
			}
			it.Content = m.Text
		} else {
			letter, kind := itemProfile, kindUserProfile
			if m.Kind == store.KindSessionSummary {
				letter, kind = itemSummary, kindChatSummary
			}
			it = memoryItem{MemoryID: itemID(letter, scope, m.ID), UpdatedAt: m.Time.Unix(),
				Scope: scope, Content: m.Text, Kind: kind}
		}
		if firstSaying(seen, it) {
			found = append(found, it)
		}
	}
	return found, nil
}

// liveItems returns a scope's memory items by docKey, for reading
// retrieval's results: only the items not expired and of kinds the store
// keeps (an insight's kind is its category). It is nil when every
// insight and summary the store holds is an item of the kind its document
// says (no TTL, no procedural memory, both other kinds on).
func (s *Service) liveItems(ctx context.Context, def *memoryStore, scope string) (map[string]memoryItem, error) {
	if def.ttl() <= 0 && !def.proceduralEnabled() && def.profileEnabled() && def.summaryEnabled() {
		return nil, nil
	}
	items, err := s.scopeItems(ctx, def, scope)
	if err != nil {
		return nil, err
	}
	live := make(map[string]memoryItem, len(items))
	for _, it := range items {
		live[it.key()] = it
	}
	return live, nil
}

// docKey names a document of a scope across kinds.
func docKey(kind store.Kind, id string) string { return string(kind) + "\x00" + id }

// key is the docKey of the item's document.
func (it memoryItem) key() string {
	if it.Kind == kindChatSummary {
		return docKey(store.KindSessionSummary, it.docID)
	}
	return docKey(store.KindInsight, it.docID)
}
