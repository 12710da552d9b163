package memoryservice

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/agentmemory/agentmemory/store"
)

// maxItemContent caps a memory item's content written directly.
const maxItemContent = 16 << 10

// embedOne embeds text with the embedding model of memory store def and
// returns the vector and the model's name, or nil and "" (the item is
// then found by full text alone) when the embedder fails, which is
// logged.
func (s *Service) embedOne(ctx context.Context, def *memoryStore, text string) ([]float32, string) {
	_, _, emb, err := s.storeModels(ctx, def)
	if err != nil {
		s.log.WarnContext(ctx, "memoryservice: memory stored without its vector", "store", def.Name, "err", err)
		return nil, ""
	}
	vs, err := emb.Embed(ctx, []string{text})
	if err != nil || len(vs) != 1 {
		s.log.WarnContext(ctx, "memoryservice: memory stored without its vector", "store", def.Name, "err", err)
		return nil, ""
	}
	return vs[0], emb.Model()
}

func checkContent(content string) error {
	if strings.TrimSpace(content) == "" {
		return badRequest("content", "required")
	}
	return checkText("content", content, maxItemContent)
}

// createItemRequest is the body of a memory item's creation.
type createItemRequest struct {
	Scope   string `json:"scope"`
	Content string `json:"content"`
	Kind    string `json:"kind"`
}

// createItem stores a memory item written by the caller: a user_profile
// item as a session insight (folded into the profile at the scope's next
// update), a chat_summary item as a completed session with that summary.
func (s *Service) createItem(w http.ResponseWriter, r *http.Request) (memoryItem, error) {
	ctx := r.Context()
	name := r.PathValue("name")
	var req createItemRequest
	if err := s.decode(w, r, &req); err != nil {
		return memoryItem{}, err
	}
	def, _, err := s.loadStore(ctx, name)
	if err != nil {
		return memoryItem{}, err
	}
	userID, err := scopeUser(name, req.Scope)
	if err != nil {
		return memoryItem{}, err
	}
	if err := checkContent(req.Content); err != nil {
		return memoryItem{}, err
	}
	switch req.Kind {
	case kindUserProfile:
		if !def.profileEnabled() {
			return memoryItem{}, badRequest("kind", "user_profile memories are disabled in memory store %q", name)
		}
	case kindChatSummary:
		if !def.summaryEnabled() {
			return memoryItem{}, badRequest("kind", "chat_summary memories are disabled in memory store %q", name)
		}
	case kindProcedural:
		if !def.proceduralEnabled() {
			return memoryItem{}, badRequest("kind", "procedural memories are disabled in memory store %q (procedural_memory_enabled)", name)
		}
	case "":
		return memoryItem{}, badRequest("kind", "required")
	default:
		return memoryItem{}, badRequest("kind", "%q: user_profile, chat_summary or procedural", req.Kind)
	}
	unlock := s.lockScope("accept", userID) // not during the scope's delete_scope
	defer unlock()
	if err := s.noteScope(ctx, name, req.Scope); err != nil {
		return memoryItem{}, err
	}
	now := s.cfg.Now()
	vec, model := s.embedOne(ctx, def, req.Content)
	var it memoryItem
	if req.Kind != kindChatSummary {
		one := 1.0
		in := &store.Insight{ID: newID("ins-"), InsightType: store.InsightSession, InsightText: req.Content, InsightVector: vec,
			Confidence: &one, Importance: "medium", ReflectionFlag: store.FlagInsight, CreatedAt: now, UpdatedAt: now,
			EmbeddingModel: model}
		if req.Kind == kindProcedural {
			in.Category = ProceduralCategory.Name
		}
		if err := s.st.PutInsight(ctx, userID, in); err != nil {
			return memoryItem{}, err
		}
		it, _ = insightItem(req.Scope, in)
	} else {
		d := &store.Session{ID: newID("mss_"), StartTime: now, EndTime: now, Summary: req.Content, SummaryVector: vec,
			Status: store.SessionCompleted, ReflectionStatus: store.ReflectionProcessed, UpdatedAt: now, ETag: store.CreateOnly}
		d.EmbeddingModel = model
		if err := s.st.PutSession(ctx, userID, d); err != nil {
			return memoryItem{}, err
		}
		it, _ = sessionItem(req.Scope, d)
	}
	return it, nil
}

// updateItemRequest is the body of a memory item's update.
type updateItemRequest struct {
	Content string `json:"content"`
}

// updateItem replaces a memory item's content (and its vector).
func (s *Service) updateItem(w http.ResponseWriter, r *http.Request) (memoryItem, error) {
	ctx := r.Context()
	var req updateItemRequest
	if err := s.decode(w, r, &req); err != nil {
		return memoryItem{}, err
	}
	def, _, err := s.loadStore(ctx, r.PathValue("name"))
	if err != nil {
		return memoryItem{}, err
	}
	if err := checkContent(req.Content); err != nil {
		return memoryItem{}, err
	}
	it, err := s.findItem(ctx, def, r.PathValue("id"))
	if err != nil {
		return memoryItem{}, err
	}
	userID := UserID(def.Name, it.Scope)
	unlock, err := s.lockRun(ctx, def.Name, it.Scope) // not while an update of the scope rewrites its memories
	if err != nil {
		return memoryItem{}, err
	}
	defer unlock()
	// Forgotten while this waited for the lock: as if never found.
	gone := notFound("memory_id", "memory item %q not found in memory store %q", it.MemoryID, def.Name)
	if it.Kind != kindChatSummary {
		// Through the provider: the old text leaves the profile too.
		p, err := s.providerFor(def)
		if err == nil {
			var in *store.Insight
			if in, err = p.UpdateInsight(ctx, userID, it.docID, req.Content); in != nil {
				it, _ = insightItem(it.Scope, in)
			}
		}
		if errors.Is(err, store.ErrNotFound) {
			return memoryItem{}, gone
		}
		if err != nil {
			return memoryItem{}, err
		}
	} else {
		vec, model := s.embedOne(ctx, def, req.Content)
		now := s.cfg.Now()
		for attempt := 0; ; attempt++ {
			d, err := s.st.GetSession(ctx, userID, it.docID)
			if errors.Is(err, store.ErrNotFound) {
				return memoryItem{}, gone
			}
			if err != nil {
				return memoryItem{}, err
			}
			d.Summary, d.SummaryVector, d.EmbeddingModel, d.UpdatedAt, d.SummaryPending = req.Content, vec, model, now, false
			err = s.st.PutSession(ctx, userID, d)
			if errors.Is(err, store.ErrConflict) && attempt < 5 {
				continue
			}
			if errors.Is(err, store.ErrNotFound) {
				return memoryItem{}, gone
			}
			if err != nil {
				return memoryItem{}, fmt.Errorf("session %s: %w", d.ID, err)
			}
			it, _ = sessionItem(it.Scope, d)
			break
		}
	}
	return it, nil
}
