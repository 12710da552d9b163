package reflection

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/agentmemory/agentmemory/prompts"
	"github.com/agentmemory/agentmemory/store"
)

// SessionResult is what a session reflection did.
type SessionResult struct {
	// SessionIDs are the sessions reflected on together (one, or the
	// no-insight sessions of an aggregation).
	SessionIDs []string
	// Flag is store.FlagInsight when insights were kept, store.FlagNoInsight
	// otherwise.
	Flag string
	// Insights are the insights stored: new ones, and existing ones the
	// sessions restated (their SessionIDs extended).
	Insights []*store.Insight
	// Restated counts the insights of Insights that already existed (same
	// content hash).
	Restated int
	// Dropped counts the insights the model gave that were not kept: below
	// MinConfidence, or refused by the parser (unknown category, no text,
	// repeated, too many).
	Dropped int
	// Skipped is set when the session had been reflected on already;
	// nothing was done.
	Skipped bool
}

// ReflectSession reflects on the completed session sessionID of userID: it
// reads the session's interactions (those after ReflectedThrough, see
// ExtractSession), asks the model for insights, stores those at or above
// MinConfidence (an insight whose text is already stored gains the
// session and the higher confidence instead) and sets the session's
// reflection status (processed, or no-insight), ExtractedInsights and
// ReflectedThrough. A session already reflected on is skipped. It fails with ErrSessionActive
// for a session not yet ended and store.ErrNotFound for an unknown one;
// after a failure nothing is marked, and the call may be repeated.
func (r *Reflector) ReflectSession(ctx context.Context, userID, sessionID string) (*SessionResult, error) {
	unlock, err := r.lock(ctx, userID)
	if err != nil {
		return nil, err
	}
	defer unlock()
	doc, done, err := r.pendingSession(ctx, userID, sessionID)
	if err != nil || done != nil {
		return done, err
	}
	if doc.Status != store.SessionCompleted {
		return nil, fmt.Errorf("%w: %s", ErrSessionActive, sessionID)
	}
	return r.reflect(ctx, userID, []*store.Session{doc}, scopeEnd)
}

// pendingSession reads a session to reflect on; done is the Skipped
// result when it has been reflected on already.
func (r *Reflector) pendingSession(ctx context.Context, userID, sessionID string) (doc *store.Session, done *SessionResult, err error) {
	doc, err = r.st.GetSession(ctx, userID, sessionID)
	if err != nil {
		return nil, nil, fmt.Errorf("reflection: session %s: %w", sessionID, err)
	}
	if doc.ReflectionStatus != store.ReflectionPending {
		return nil, &SessionResult{SessionIDs: []string{sessionID}, Flag: flagOf(doc.ReflectionStatus), Skipped: true}, nil
	}
	return doc, nil, nil
}

// ExtractSession reflects on what is new in a session, active or
// completed: the interactions after its ReflectedThrough turn. It stores
// insights as ReflectSession does and advances ReflectedThrough, but
// leaves the reflection status to the session's end, when ReflectSession
// reads only what is left (and marks the session processed if any
// extraction found an insight). With nothing new it asks no model and
// reports Skipped; so it does for a completed session already reflected
// on. Called every few turns (provider.Config.ExtractEvery), it lets a
// long session yield insights before it ends.
func (r *Reflector) ExtractSession(ctx context.Context, userID, sessionID string) (*SessionResult, error) {
	unlock, err := r.lock(ctx, userID)
	if err != nil {
		return nil, err
	}
	defer unlock()
	doc, done, err := r.pendingSession(ctx, userID, sessionID)
	if err != nil || done != nil {
		return done, err
	}
	return r.reflect(ctx, userID, []*store.Session{doc}, scopeSoFar)
}

// scope is what a reflection reads and how it marks its sessions.
type scope int

const (
	// scopeEnd: a completed session, from its ReflectedThrough on; sets
	// its reflection status.
	scopeEnd scope = iota
	// scopeSoFar: a session's new interactions; the status stays.
	scopeSoFar
	// scopeAggregate: no-insight sessions together, whole; marks them
	// processed.
	scopeAggregate
)

func flagOf(s store.ReflectionStatus) string {
	if s == store.ReflectionNoInsight {
		return store.FlagNoInsight
	}
	return store.FlagInsight
}

// PendingResult is what ReflectPending did.
type PendingResult struct {
	// Sessions holds one result per session reflected on, oldest first.
	Sessions []*SessionResult
	// Aggregate is the reflection of no-insight sessions together, if one
	// ran.
	Aggregate *SessionResult
	// Remaining counts pending sessions left for a later call.
	Remaining int
}

// MaxPendingPerCall bounds the sessions one ReflectPending reflects on, so
// that a store full of sessions from before reflection was turned on is
// worked through a batch at a time.
const MaxPendingPerCall = 20

// ReflectPending reflects on the completed sessions of userID still
// pending, oldest first (at most MaxPendingPerCall; Remaining counts the
// rest), then, when at least AggregateAfter sessions are marked
// no-insight, on those together (the oldest, at most 4·AggregateAfter of
// them). Sessions of an aggregation are marked processed whatever it
// finds: together they have had their chance, and asking again would
// repeat the cost. A failing session is logged and the others go on; the
// first error is returned with what was done.
func (r *Reflector) ReflectPending(ctx context.Context, userID string) (*PendingResult, error) {
	unlock, err := r.lock(ctx, userID)
	if err != nil {
		return nil, err
	}
	defer unlock()
	res := &PendingResult{}
	pending, err := r.st.ListSessions(ctx, userID, store.SessionFilter{Status: store.SessionCompleted, ReflectionStatus: store.ReflectionPending})
	if err != nil {
		return res, fmt.Errorf("reflection: pending sessions: %w", err)
	}
	slices.Reverse(pending) // ListSessions is most recent first
	if len(pending) > MaxPendingPerCall {
		res.Remaining = len(pending) - MaxPendingPerCall
		pending = pending[:MaxPendingPerCall]
	}
	var first error
	for _, doc := range pending {
		sr, err := r.reflect(ctx, userID, []*store.Session{doc}, scopeEnd)
		if err != nil {
			r.cfg.Logger.WarnContext(ctx, "memory: session reflection failed", "user", userID, "session", doc.ID, "err", err)
			first = firstErr(first, err)
			continue
		}
		res.Sessions = append(res.Sessions, sr)
	}
	if r.cfg.AggregateAfter < 0 {
		return res, first
	}
	idle, err := r.st.ListSessions(ctx, userID, store.SessionFilter{ReflectionStatus: store.ReflectionNoInsight})
	if err != nil {
		return res, firstErr(first, fmt.Errorf("reflection: no-insight sessions: %w", err))
	}
	if len(idle) < r.cfg.AggregateAfter {
		return res, first
	}
	slices.Reverse(idle)
	if n := 4 * r.cfg.AggregateAfter; len(idle) > n {
		idle = idle[:n]
	}
	agg, err := r.reflect(ctx, userID, idle, scopeAggregate)
	if err != nil {
		return res, firstErr(first, err)
	}
	res.Aggregate = agg
	return res, first
}

// firstErr returns first, or err when first is nil.
func firstErr(first, err error) error {
	if first != nil {
		return first
	}
	return err
}

// reflect runs one reflection over sessions (one, or an aggregation) and
// marks them as sc says.
func (r *Reflector) reflect(ctx context.Context, userID string, sessions []*store.Session, sc scope) (*SessionResult, error) {
	res := &SessionResult{}
	var in []prompts.ReflectionSession
	var sources []string                  // interaction ids
	through := make([]int, len(sessions)) // per session, the last turn read
	for i, s := range sessions {
		res.SessionIDs = append(res.SessionIDs, s.ID)
		docs, err := r.st.ListInteractions(ctx, userID, store.InteractionFilter{SessionID: s.ID})
		if err != nil {
			return nil, fmt.Errorf("reflection: interactions of %s: %w", s.ID, err)
		}
		rs := prompts.ReflectionSession{ID: s.ID, Start: s.StartTime}
		through[i] = s.ReflectedThrough
		for _, d := range docs {
			if sc != scopeAggregate && d.LastTurn <= s.ReflectedThrough {
				continue // read by an earlier extraction
			}
			sources = append(sources, d.ID)
			rs.Turns = append(rs.Turns, turnsOf(d.Content)...)
			through[i] = max(through[i], d.LastTurn)
		}
		in = append(in, rs)
	}
	if sc == scopeSoFar && len(sources) == 0 {
		res.Flag, res.Skipped = store.FlagNoInsight, true
		return res, nil
	}
	var drafts []prompts.InsightDraft
	if countText(in) > 0 {
		req, err := r.cfg.Prompts.SessionReflection(in, r.cfg.Categories, r.cfg.Guidance)
		if err != nil {
			return nil, fmt.Errorf("reflection: %w", err)
		}
		names := make([]string, len(r.cfg.Categories))
		for i, c := range r.cfg.Categories {
			names[i] = c.Name
		}
		out, err := complete(ctx, r, "session reflection", req.Request(), func(b []byte) (prompts.ReflectionResult, error) {
			return prompts.ParseSessionReflection(b, names)
		})
		if err != nil {
			return nil, err
		}
		res.Dropped = out.Rejected
		for _, d := range out.Insights {
			if d.Confidence < r.cfg.MinConfidence {
				res.Dropped++
				continue
			}
			drafts = append(drafts, d)
		}
	}
	if err := r.storeDrafts(ctx, userID, res, drafts, sources); err != nil {
		return nil, err
	}
	res.Flag = store.FlagNoInsight
	if len(res.Insights) > 0 {
		res.Flag = store.FlagInsight
	}
	var ids []string
	for _, in := range res.Insights {
		ids = append(ids, in.ID)
	}
	for i, s := range sessions {
		var status store.ReflectionStatus // empty: unchanged
		switch {
		case sc == scopeAggregate:
			status = store.ReflectionProcessed
		case sc == scopeEnd && (len(res.Insights) > 0 || len(s.ExtractedInsights) > 0):
			status = store.ReflectionProcessed
		case sc == scopeEnd:
			status = store.ReflectionNoInsight
		}
		if err := r.markSession(ctx, userID, s.ID, status, ids, through[i]); err != nil {
			return nil, err
		}
	}
	r.cfg.Logger.InfoContext(ctx, "memory: sessions reflected", "user", userID, "sessions", res.SessionIDs,
		"flag", res.Flag, "insights", len(res.Insights), "restated", res.Restated, "dropped", res.Dropped, "through_turn", slices.Max(through))
	return res, nil
}

// storeDrafts stores the kept insights of a reflection over res.SessionIDs.
func (r *Reflector) storeDrafts(ctx context.Context, userID string, res *SessionResult, drafts []prompts.InsightDraft, sources []string) error {
	now := r.cfg.Now().UTC()
	var fresh []*store.Insight
	for _, d := range drafts {
		hash := store.ContentHash(d.Text)
		old, err := r.sessionInsightByHash(ctx, userID, hash)
		switch {
		case err == nil:
			// Restated: the existing insight gains the sessions, and the
			// surer confidence.
			merged := union(old.SessionIDs, res.SessionIDs)
			surer := old.Confidence == nil || d.Confidence > *old.Confidence
			if len(merged) != len(old.SessionIDs) || surer {
				old.SessionIDs = merged
				old.SourceInteractionIDs = union(old.SourceInteractionIDs, sources)
				if surer {
					old.Confidence = ptr(d.Confidence)
				}
				old.UpdatedAt = now
				if err := r.st.PutInsight(ctx, userID, old); err != nil {
					return fmt.Errorf("reflection: update insight %s: %w", old.ID, err)
				}
			}
			res.Insights = append(res.Insights, old)
			res.Restated++
			continue
		case err != nil && !errors.Is(err, store.ErrNotFound):
			return fmt.Errorf("reflection: look up insight: %w", err)
		}
		fresh = append(fresh, &store.Insight{
			ID:                   insightID("ins-", append([]string{userID, hash}, res.SessionIDs...)...),
			InsightType:          store.InsightSession,
			SessionIDs:           slices.Clone(res.SessionIDs),
			InsightText:          d.Text,
			Confidence:           ptr(d.Confidence),
			Importance:           d.Importance,
			Category:             d.Category,
			ReflectionFlag:       store.FlagInsight,
			SourceInteractionIDs: slices.Clone(sources),
			ContentHash:          hash,
			CreatedAt:            now,
			UpdatedAt:            now,
			EmbeddingModel:       r.cfg.Embedder.Model(),
		})
	}
	texts := make([]string, len(fresh))
	for i, in := range fresh {
		texts[i] = in.InsightText
	}
	vecs, err := r.embedTexts(ctx, texts)
	if err != nil {
		return err
	}
	for i, in := range fresh {
		in.InsightVector = vecs[i]
		if err := r.st.PutInsight(ctx, userID, in); err != nil {
			return fmt.Errorf("reflection: store insight: %w", err)
		}
		res.Insights = append(res.Insights, in)
	}
	return nil
}

// sessionInsightByHash returns the user's most recent active session
// insight whose ContentHash is hash, or store.ErrNotFound. The store's
// lookup by hash finds any active insight, the long-term profile
// included: a profile of one insight says exactly what that insight
// says, and would otherwise hide it, so that a restatement were stored
// as a second, identical insight.
func (r *Reflector) sessionInsightByHash(ctx context.Context, userID, hash string) (*store.Insight, error) {
	in, err := r.st.FindInsightByHash(ctx, userID, hash)
	if err != nil || in.InsightType == store.InsightSession {
		return in, err
	}
	all, err := r.st.ListInsights(ctx, userID, store.InsightFilter{Type: store.InsightSession}) // newest first
	if err != nil {
		return nil, err
	}
	for _, in := range all {
		h := in.ContentHash
		if h == "" {
			h = store.ContentHash(in.InsightText)
		}
		if h == hash {
			return in, nil
		}
	}
	return nil, fmt.Errorf("reflection: no session insight with hash %s: %w", hash, store.ErrNotFound)
}

// markSession sets a session's reflection status (unless empty), extracted
// insights and ReflectedThrough, retrying on a concurrent write (the
// keeper may be adding a turn).
func (r *Reflector) markSession(ctx context.Context, userID, id string, status store.ReflectionStatus, insights []string, through int) error {
	for attempt := 0; ; attempt++ {
		doc, err := r.st.GetSession(ctx, userID, id)
		if err != nil {
			return fmt.Errorf("reflection: mark session %s: %w", id, err)
		}
		if status != "" {
			doc.ReflectionStatus = status
		}
		doc.ExtractedInsights = union(doc.ExtractedInsights, insights)
		doc.ReflectedThrough = max(doc.ReflectedThrough, through)
		doc.UpdatedAt = r.cfg.Now().UTC()
		err = r.st.PutSession(ctx, userID, doc)
		if err == nil {
			return nil
		}
		if !errors.Is(err, store.ErrConflict) || attempt == 4 {
			return fmt.Errorf("reflection: mark session %s: %w", id, err)
		}
	}
}

// turnsOf splits an interaction's content ("role: text" lines, a line
// without a colon continuing the message before it) into messages.
func turnsOf(content string) []prompts.Turn {
	var out []prompts.Turn
	for line := range strings.Lines(content) {
		line = strings.TrimRight(line, "\r\n")
		who, text, ok := strings.Cut(line, ": ")
		if !ok || len(who) > 40 || strings.Count(who, " ") > 2 {
			if n := len(out); n > 0 {
				out[n-1].Text += "\n" + line
				continue
			}
			who, text = "user", line
		}
		out = append(out, prompts.Turn{Role: who, Text: text})
	}
	return out
}

func countText(sessions []prompts.ReflectionSession) int {
	n := 0
	for _, s := range sessions {
		for _, t := range s.Turns {
			if strings.TrimSpace(t.Text) != "" {
				n++
			}
		}
	}
	return n
}
