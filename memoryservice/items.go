package memoryservice

import (
	"context"
	"errors"
	"net/http"
	"slices"
	"sort"
	"strings"

	"github.com/agentmemory/agentmemory/prompts"
	"github.com/agentmemory/agentmemory/provider"
	"github.com/agentmemory/agentmemory/retrieval"
	"github.com/agentmemory/agentmemory/store"
	"github.com/agentmemory/agentmemory/usage"
)

// Memory item kinds.
const (
	kindUserProfile = "user_profile"
	kindChatSummary = "chat_summary"
	kindProcedural  = "procedural"
)

// memoryItem is a memory as the API shows it.
type memoryItem struct {
	MemoryID  string `json:"memory_id"`
	UpdatedAt int64  `json:"updated_at"`
	Scope     string `json:"scope"`
	Content   string `json:"content"`
	Kind      string `json:"kind"`
	docID     string
	// version is the document's last write in nanoseconds: an update
	// tells a changed item by it (UpdatedAt has whole seconds).
	version int64
}

func kindOfID(id string) string {
	switch {
	case strings.HasPrefix(id, itemSummary+"."):
		return kindChatSummary
	case strings.HasPrefix(id, itemProcedural+"."):
		return kindProcedural
	}
	return kindUserProfile
}

func insightItem(scope string, in *store.Insight) (memoryItem, bool) {
	if in.ReflectionFlag == store.FlagNoInsight || strings.TrimSpace(in.InsightText) == "" || in.Superseded() {
		return memoryItem{}, false
	}
	at := in.UpdatedAt
	if at.IsZero() {
		at = in.CreatedAt
	}
	letter, kind := itemProfile, kindUserProfile
	if in.Category == ProceduralCategory.Name {
		letter, kind = itemProcedural, kindProcedural
	}
	return memoryItem{MemoryID: itemID(letter, scope, in.ID), UpdatedAt: at.Unix(), Scope: scope,
		Content: in.InsightText, Kind: kind, docID: in.ID, version: at.UnixNano()}, true
}

// sessionItem is a session's chat_summary item: a completed session's,
// or a reopened one's (continued by previous_update_id), which shows the
// summary of its earlier end until it ends again.
func sessionItem(scope string, d *store.SessionSummary) (memoryItem, bool) {
	if (d.Status != store.SessionCompleted && !reopened(d)) || strings.TrimSpace(d.Summary) == "" {
		return memoryItem{}, false
	}
	at := d.UpdatedAt
	if at.IsZero() {
		at = d.EndTime
	}
	return memoryItem{MemoryID: itemID(itemSummary, scope, d.ID), UpdatedAt: at.Unix(), Scope: scope,
		Content: d.Summary, Kind: kindChatSummary, docID: d.ID, version: at.UnixNano()}, true
}

// reopened reports an active session that had ended once: a session an
// update continues with previous_update_id (reopenSession).
func reopened(d *store.SessionSummary) bool {
	return d.Status == store.SessionActive && !d.EndTime.IsZero()
}

// scopeItems lists every memory item of a scope, by kinds the store has
// enabled: the insights and the long-term profile (user_profile), then the
// completed sessions' summaries (chat_summary).
func (s *Service) scopeItems(ctx context.Context, def *memoryStore, scope string) ([]memoryItem, error) {
	userID := UserID(def.Name, scope)
	cut := s.cutoff(def)
	var out []memoryItem
	if def.profileEnabled() || def.proceduralEnabled() {
		ins, err := s.st.ListInsights(ctx, userID, store.InsightFilter{})
		if err != nil {
			return nil, err
		}
		for _, in := range ins {
			if expired(provider.LastWritten(in), cut) {
				continue
			}
			if it, ok := insightItem(scope, in); ok && def.kindEnabled(it.Kind) {
				out = append(out, it)
			}
		}
	}
	if def.summaryEnabled() {
		ss, err := s.st.ListSessions(ctx, userID, store.SessionFilter{}) // completed and reopened
		if err != nil {
			return nil, err
		}
		for _, d := range ss {
			if expired(provider.LastWritten(d), cut) {
				continue
			}
			if it, ok := sessionItem(scope, d); ok {
				out = append(out, it)
			}
		}
	}
	return out, nil
}

func (s *Service) listItems(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("name")
	var req struct {
		Scope string `json:"scope"`
	}
	if err := s.decode(w, r, &req); err != nil {
		writeError(w, err)
		return
	}
	p, err := parsePage(r)
	if err != nil {
		writeError(w, err)
		return
	}
	kind := r.URL.Query().Get("kind")
	switch kind {
	case "", kindUserProfile, kindChatSummary, kindProcedural:
	default:
		writeError(w, badRequest("kind", "%q: user_profile, chat_summary or procedural", kind))
		return
	}
	def, _, err := s.loadStore(r.Context(), name)
	if err != nil {
		s.fail(w, r, "list memories", err)
		return
	}
	if _, err := scopeUser(name, req.Scope); err != nil {
		writeError(w, err)
		return
	}
	all, err := s.scopeItems(r.Context(), def, req.Scope)
	if err != nil {
		s.fail(w, r, "list memories", err)
		return
	}
	items := all[:0]
	for _, it := range all {
		if kind == "" || it.Kind == kind {
			items = append(items, it)
		}
	}
	sort.Slice(items, func(i, j int) bool {
		a, b := items[i], items[j]
		if a.UpdatedAt != b.UpdatedAt {
			return (a.UpdatedAt < b.UpdatedAt) != p.desc
		}
		return (a.MemoryID < b.MemoryID) != p.desc
	})
	page, err := paginate(items, func(it memoryItem) string { return it.MemoryID }, p)
	if err != nil {
		writeError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, page)
}

// findItem reads the item id of memory store def, or a 404.
func (s *Service) findItem(ctx context.Context, def *memoryStore, id string) (memoryItem, error) {
	missing := notFound("memory_id", "memory item %q not found in memory store %q", id, def.Name)
	letter, scope, docID, ok := parseItemID(id)
	if !ok {
		return memoryItem{}, missing
	}
	userID, err := scopeUser(def.Name, scope)
	if err != nil {
		return memoryItem{}, missing
	}
	var it memoryItem
	switch letter {
	case itemProfile, itemProcedural:
		in, err := s.st.GetInsight(ctx, userID, docID)
		if err != nil {
			if errors.Is(err, store.ErrNotFound) || errors.Is(err, store.ErrInvalid) {
				return memoryItem{}, missing
			}
			return memoryItem{}, err
		}
		it, ok = insightItem(scope, in)
		ok = ok && it.MemoryID == id && def.kindEnabled(it.Kind) && !expired(provider.LastWritten(in), s.cutoff(def))
	default:
		if !def.summaryEnabled() {
			return memoryItem{}, missing
		}
		d, err := s.st.GetSession(ctx, userID, docID)
		if err != nil {
			if errors.Is(err, store.ErrNotFound) || errors.Is(err, store.ErrInvalid) {
				return memoryItem{}, missing
			}
			return memoryItem{}, err
		}
		it, ok = sessionItem(scope, d)
		ok = ok && !expired(provider.LastWritten(d), s.cutoff(def))
	}
	if !ok {
		return memoryItem{}, missing
	}
	return it, nil
}

func (s *Service) getItem(w http.ResponseWriter, r *http.Request) {
	def, _, err := s.loadStore(r.Context(), r.PathValue("name"))
	if err != nil {
		s.fail(w, r, "get memory", err)
		return
	}
	it, err := s.findItem(r.Context(), def, r.PathValue("id"))
	if err != nil {
		s.fail(w, r, "get memory", err)
		return
	}
	writeJSON(w, http.StatusOK, it)
}

// deleteItem forgets a memory: a user_profile item with
// ForgetInsight (the profile's own id deletes the profile), a chat_summary
// item with ForgetSession (the session's turns and what was drawn from it
// alone go too).
func (s *Service) deleteItem(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	def, _, err := s.loadStore(ctx, r.PathValue("name"))
	if err != nil {
		s.fail(w, r, "delete memory", err)
		return
	}
	it, err := s.findItem(ctx, def, r.PathValue("id"))
	if err != nil {
		s.fail(w, r, "delete memory", err)
		return
	}
	p, err := s.providerFor(def)
	if err != nil {
		s.fail(w, r, "delete memory", err)
		return
	}
	userID := UserID(def.Name, it.Scope)
	if it.Kind == kindChatSummary {
		_, err = p.ForgetSession(ctx, userID, it.docID)
	} else {
		_, err = p.ForgetInsight(ctx, userID, it.docID, provider.ForgetOptions{})
	}
	if err != nil && !errors.Is(err, provider.ErrNotLogged) {
		s.fail(w, r, "delete memory", err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"object": "memory_store.item.deleted", "memory_id": it.MemoryID, "deleted": true})
}

// maxSearchMemories caps search_memories' options.max_memories.
const maxSearchMemories = 100

func (s *Service) searchMemories(w http.ResponseWriter, r *http.Request, name string) {
	var req struct {
		Scope            string      `json:"scope"`
		Items            []inputItem `json:"items"`
		PreviousSearchID string      `json:"previous_search_id"`
		Options          *struct {
			MaxMemories *int `json:"max_memories"`
		} `json:"options"`
	}
	if err := s.decode(w, r, &req); err != nil {
		writeError(w, err)
		return
	}
	meter := &usage.Meter{}
	ctx := usage.WithMeter(r.Context(), meter)
	began, startedAt := s.searches.begin(), s.cfg.Now()
	def, _, err := s.loadStore(ctx, name)
	if err != nil {
		s.fail(w, r, "search memories", err)
		return
	}
	userID, err := scopeUser(name, req.Scope)
	if err != nil {
		writeError(w, err)
		return
	}
	// The conversation so far: the earlier search's, which this one
	// continues.
	var earlier []prompts.Turn
	if req.PreviousSearchID != "" {
		prev, ok := s.searches.get(req.PreviousSearchID, startedAt)
		// A store whose memories expire sooner expires its searches too.
		if !ok || prev.store != name || prev.scope != req.Scope || expired(prev.at, s.cutoff(def)) {
			writeError(w, badRequest("previous_search_id", "%.80q is not a search of this scope of memory store %q still kept (searches are kept %v, in the server's memory, and not across restarts); search again without it",
				req.PreviousSearchID, name, s.cfg.SearchTTL))
			return
		}
		earlier = prev.turns
	}
	top := 10
	if req.Options != nil && req.Options.MaxMemories != nil {
		top = *req.Options.MaxMemories
		if top < 1 || top > maxSearchMemories {
			writeError(w, badRequest("options.max_memories", "%d: from 1 to %d", top, maxSearchMemories))
			return
		}
	}
	if len(req.Items) > maxUpdateItems {
		writeError(w, badRequest("items", "%d items, at most %d", len(req.Items), maxUpdateItems))
		return
	}
	var query []string
	var said []prompts.Turn
	for i, it := range req.Items {
		text, role, keep, err := itemText(i, it)
		if err != nil {
			writeError(w, err)
			return
		}
		if keep {
			query = append(query, text)
			said = append(said, prompts.Turn{Role: string(role), Text: text})
		}
	}
	var found []memoryItem
	if len(query) == 0 {
		// No conversation: the scope's static memories (its profile items).
		all, err := s.scopeItems(ctx, def, req.Scope)
		if err != nil {
			s.fail(w, r, "search memories", err)
			return
		}
		for _, it := range all {
			if it.Kind != kindChatSummary && len(found) < top {
				found = append(found, it)
			}
		}
	} else {
		var kinds []store.Kind
		if def.profileEnabled() || def.proceduralEnabled() {
			kinds = append(kinds, store.KindInsight)
		}
		if def.summaryEnabled() {
			kinds = append(kinds, store.KindSessionSummary)
		}
		p, err := s.providerFor(def)
		if err != nil {
			s.fail(w, r, "search memories", err)
			return
		}
		// With a TTL or procedural memory, retrieval's results are read
		// through the scope's items: kept only if not expired (the sweep
		// may not have removed them yet), with an insight's kind from its
		// category. Ask for more, as some may drop.
		live, err := s.liveItems(ctx, def, req.Scope)
		if err != nil {
			s.fail(w, r, "search memories", err)
			return
		}
		ask := top
		if live != nil {
			ask = min(2*top, maxSearchMemories)
		}
		// The new messages are the query; after an earlier search, a vague
		// one is read in the light of the conversation (retrieval's query
		// rewriting).
		q := strings.Join(query, "\n")
		if len(earlier) > 0 {
			q = p.Retriever().Rewrite(ctx, earlier, q)
		}
		if len(kinds) > 0 {
			ms, err := p.Retriever().Search(ctx, userID, q, retrieval.SearchOptions{TopK: ask, Kinds: kinds})
			if err != nil {
				s.fail(w, r, "search memories", err)
				return
			}
			for _, m := range ms {
				if len(found) >= top {
					break
				}
				if live != nil {
					if it, ok := live[docKey(m.Kind, m.ID)]; ok {
						it.Content = m.Text
						found = append(found, it)
					}
					continue
				}
				letter := itemProfile
				kind := kindUserProfile
				if m.Kind == store.KindSessionSummary {
					letter, kind = itemSummary, kindChatSummary
				}
				found = append(found, memoryItem{MemoryID: itemID(letter, req.Scope, m.ID), UpdatedAt: m.Time.Unix(),
					Scope: req.Scope, Content: m.Text, Kind: kind})
			}
		}
	}
	out := make([]map[string]any, 0, len(found))
	for _, it := range found {
		out = append(out, map[string]any{"memory_item": it})
	}
	id := newID("memsearch_")
	s.searches.put(id, &searchRecord{store: name, scope: req.Scope, at: startedAt,
		turns: append(slices.Clone(earlier), said...)}, began)
	writeJSON(w, http.StatusOK, map[string]any{"search_id": id, "memories": out, "usage": usageOf(meter)})
}

func (s *Service) deleteScope(w http.ResponseWriter, r *http.Request, name string) {
	var req struct {
		Scope string `json:"scope"`
	}
	if err := s.decode(w, r, &req); err != nil {
		writeError(w, err)
		return
	}
	if _, _, err := s.loadStore(r.Context(), name); err != nil {
		s.fail(w, r, "delete scope", err)
		return
	}
	if _, err := scopeUser(name, req.Scope); err != nil {
		writeError(w, err)
		return
	}
	if err := s.forgetScope(r.Context(), name, req.Scope); err != nil {
		s.fail(w, r, "delete scope", err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"object": "memory_store.scope.deleted", "name": name, "scope": req.Scope, "deleted": true})
}

// forgetScope deletes everything of a scope: its queued and past updates,
// then every memory and turn (provider.ForgetUser), then its index record.
func (s *Service) forgetScope(ctx context.Context, name, scope string) error {
	def, _, err := s.loadStore(ctx, name)
	if err != nil {
		return err
	}
	userID := UserID(name, scope)
	// Its searches go whatever else fails, and one still running records
	// nothing.
	defer s.searches.drop(name, scope, false, s.cfg.Now())
	// Not while an update of the scope is accepted or runs.
	unlockAccept := s.lockScope("accept", userID)
	defer unlockAccept()
	unlockRun := s.lockScope("run", userID)
	defer unlockRun()
	if err := s.deleteScopeUpdates(ctx, name, scope); err != nil {
		return err
	}
	p, err := s.providerFor(def)
	if err != nil {
		return err
	}
	if _, err := p.ForgetUser(ctx, userID); err != nil && !errors.Is(err, provider.ErrNotLogged) {
		return err
	}
	return s.deleteRecord(ctx, scopeDocID(name, scope))
}
