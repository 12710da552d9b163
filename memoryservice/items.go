package memoryservice

import (
	"context"
	"errors"
	"net/http"
	"strings"

	"github.com/agentmemory/agentmemory/prompts"
	"github.com/agentmemory/agentmemory/provider"
	"github.com/agentmemory/agentmemory/store"
)

// ProceduralCategory is the insight category of procedural memory: a
// memory store with procedural_memory_enabled offers it to reflection
// beside reflection.DefaultCategories, and its insights are the memory
// items of kind procedural.
var ProceduralCategory = prompts.Category{Name: "procedural",
	Description: "how the user wants things done: steps, order, routines and rules to follow"}

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
func sessionItem(scope string, d *store.Session) (memoryItem, bool) {
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
func reopened(d *store.Session) bool {
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
			if expired(in.LastWritten(), cut) {
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
			if expired(d.LastWritten(), cut) {
				continue
			}
			if it, ok := sessionItem(scope, d); ok {
				out = append(out, it)
			}
		}
	}
	return out, nil
}

// listItemsRequest is the body of items:list; the query names the kind
// and the page.
type listItemsRequest struct {
	Scope string `json:"scope"`
}

func (s *Service) listItems(w http.ResponseWriter, r *http.Request) (listPage[memoryItem], error) {
	name := r.PathValue("name")
	var req listItemsRequest
	if err := s.decode(w, r, &req); err != nil {
		return listPage[memoryItem]{}, err
	}
	p, err := parsePage(r)
	if err != nil {
		return listPage[memoryItem]{}, err
	}
	kind := r.URL.Query().Get("kind")
	switch kind {
	case "", kindUserProfile, kindChatSummary, kindProcedural:
	default:
		return listPage[memoryItem]{}, badRequest("kind", "%q: user_profile, chat_summary or procedural", kind)
	}
	def, _, err := s.loadStore(r.Context(), name)
	if err != nil {
		return listPage[memoryItem]{}, err
	}
	if _, err := scopeUser(name, req.Scope); err != nil {
		return listPage[memoryItem]{}, err
	}
	all, err := s.scopeItems(r.Context(), def, req.Scope)
	if err != nil {
		return listPage[memoryItem]{}, err
	}
	items := all[:0]
	for _, it := range all {
		if kind == "" || it.Kind == kind {
			items = append(items, it)
		}
	}
	return paginate(items, listOrder[memoryItem]{
		id:  func(it memoryItem) string { return it.MemoryID },
		at:  func(it memoryItem) int64 { return it.UpdatedAt },
		tie: func(it memoryItem) string { return it.MemoryID },
	}, p)
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
		ok = ok && it.MemoryID == id && def.kindEnabled(it.Kind) && !expired(in.LastWritten(), s.cutoff(def))
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
		ok = ok && !expired(d.LastWritten(), s.cutoff(def))
	}
	if !ok {
		return memoryItem{}, missing
	}
	return it, nil
}

func (s *Service) getItem(w http.ResponseWriter, r *http.Request) (memoryItem, error) {
	def, _, err := s.loadStore(r.Context(), r.PathValue("name"))
	if err != nil {
		return memoryItem{}, err
	}
	return s.findItem(r.Context(), def, r.PathValue("id"))
}

// itemDeleted is the answer to a memory item's deletion.
type itemDeleted struct {
	Object   string `json:"object"`
	MemoryID string `json:"memory_id"`
	Deleted  bool   `json:"deleted"`
}

// deleteItem forgets a memory: a user_profile or procedural item with
// ForgetInsight (the profile's own id deletes the profile), a
// chat_summary item with ForgetSession (the session's turns and what was
// drawn from it alone go too).
func (s *Service) deleteItem(w http.ResponseWriter, r *http.Request) (itemDeleted, error) {
	ctx := r.Context()
	def, _, err := s.loadStore(ctx, r.PathValue("name"))
	if err != nil {
		return itemDeleted{}, err
	}
	id := r.PathValue("id")
	deleted := itemDeleted{Object: "memory_store.item.deleted", MemoryID: id, Deleted: true}
	it, err := s.findItem(ctx, def, id)
	if err != nil {
		// The retry of a delete not yet erased finds the item gone, and
		// completes it.
		if n, cerr := s.completeUnfinished(ctx, forgot(def.Name, id)); cerr != nil {
			s.log.ErrorContext(ctx, "memoryservice: a forget of the item is still not complete", "store", def.Name, "err", cerr)
			return itemDeleted{}, notErased()
		} else if n > 0 {
			return deleted, nil
		}
		return itemDeleted{}, err
	}
	p, err := s.providerFor(def)
	if err != nil {
		return itemDeleted{}, err
	}
	userID := UserID(def.Name, it.Scope)
	var rc *provider.Receipt
	if it.Kind == kindChatSummary {
		rc, err = p.ForgetSession(ctx, userID, it.docID)
	} else {
		rc, err = p.ForgetInsight(ctx, userID, it.docID, provider.ForgetOptions{})
	}
	if errors.Is(err, store.ErrNotFound) { // forgotten meanwhile
		return itemDeleted{}, notFound("memory_id", "memory item %q not found in memory store %q", id, def.Name)
	}
	if err := s.settle(ctx, def.Name, p, rc, err); err != nil {
		return itemDeleted{}, err
	}
	return deleted, nil
}

// forgot matches the kept forgets that deleted memory item id of memory
// store name.
func forgot(name, id string) func(*provider.Receipt) bool {
	_, scope, docID, ok := parseItemID(id)
	return func(rc *provider.Receipt) bool {
		if !ok || rc.UserID != UserID(name, scope) {
			return false
		}
		for _, it := range rc.Items {
			if it.ID == docID {
				return true
			}
		}
		return false
	}
}
