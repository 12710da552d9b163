package provider

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/agentmemory/agentmemory/agent"
	"github.com/agentmemory/agentmemory/keeper"
	"github.com/agentmemory/agentmemory/store"
)

// What the user may ask of their memory: to see it (ExportUser) and to
// erase it, in part (ForgetInsight) or whole (ForgetUser).

// ForgetInsight soft-deletes one of the user's insights (reason
// "forgotten") and follows what was derived from it, before returning:
// active insights merged from it (whose SourceInsightIDs name it) are
// forgotten too, and when the long-term profile had folded any of them in,
// the profile is synthesised anew from the remaining insights
// (Reflector.RebuildLongTerm), and the user's open sessions here reload
// their initialization block. The forgotten insights stay for the audit
// read; the conversation they came from stays too. It returns the ids it
// forgot, and fails with store.ErrNotFound for an insight the user does
// not have. Forgetting the profile itself (store.LongTermID) deletes it.
func (p *MemoryProvider) ForgetInsight(ctx context.Context, userID, insightID string) ([]string, error) {
	if err := agent.ValidateUserID(userID); err != nil {
		return nil, fmt.Errorf("provider: forget insight: %w", err)
	}
	if insightID == store.LongTermID(userID) {
		if err := p.st.DeleteDocument(ctx, userID, store.KindInsight, insightID); err != nil {
			return nil, fmt.Errorf("provider: forget profile: %w", err)
		}
		p.reloadInit(ctx, userID)
		return []string{insightID}, nil
	}
	sup := store.Supersession{Reason: store.ReasonForgotten, At: p.cfg.Now()}
	if err := p.st.SupersedeInsight(ctx, userID, insightID, sup); err != nil {
		return nil, fmt.Errorf("provider: forget insight %s: %w", insightID, err)
	}
	forgot := []string{insightID}
	active, err := p.st.ListInsights(ctx, userID, store.InsightFilter{Type: store.InsightSession})
	if err != nil {
		return forgot, fmt.Errorf("provider: forget insight %s: insights merged from it: %w", insightID, err)
	}
	for changed := true; changed; {
		changed = false
		for _, in := range active {
			if slices.Contains(forgot, in.ID) || !slices.ContainsFunc(in.SourceInsightIDs, func(id string) bool { return slices.Contains(forgot, id) }) {
				continue
			}
			if err := p.st.SupersedeInsight(ctx, userID, in.ID, sup); err != nil {
				return forgot, fmt.Errorf("provider: forget insight %s merged from %s: %w", in.ID, insightID, err)
			}
			forgot = append(forgot, in.ID)
			changed = true
		}
	}
	prof, err := p.st.GetInsight(ctx, userID, store.LongTermID(userID))
	switch {
	case errors.Is(err, store.ErrNotFound):
		return forgot, nil
	case err != nil:
		return forgot, fmt.Errorf("provider: forget insight %s: read the profile: %w", insightID, err)
	}
	if !slices.ContainsFunc(prof.SourceInsightIDs, func(id string) bool { return slices.Contains(forgot, id) }) {
		return forgot, nil
	}
	if _, err := p.rf.RebuildLongTerm(ctx, userID); err != nil {
		return forgot, fmt.Errorf("provider: forget insight %s: rebuild the profile without it: %w", insightID, err)
	}
	p.reloadInit(ctx, userID)
	return forgot, nil
}

// reloadInit makes the user's open sessions here read their
// initialization block again (after the profile changed under them).
func (p *MemoryProvider) reloadInit(ctx context.Context, userID string) {
	p.mu.Lock()
	var open []*keeper.Session
	p.live.each(func(_ string, ls *liveSession) {
		if ls.ks.UserID() == userID {
			open = append(open, ls.ks)
		}
	})
	p.mu.Unlock()
	for _, ks := range open {
		ks.ReloadInit(ctx)
	}
}

// ForgetUser deletes everything stored about the user, for good: every
// interaction, insight (the audit trail included), session and profile.
// It drops the user's live sessions held by this provider, waits for the
// background work queued so far (which may belong to the user) and then
// deletes. A run for the user still in flight may store its turn after
// this returns: call it when the user has no run going.
func (p *MemoryProvider) ForgetUser(ctx context.Context, userID string) error {
	if err := agent.ValidateUserID(userID); err != nil {
		return fmt.Errorf("provider: forget user: %w", err)
	}
	p.mu.Lock()
	var drop []string
	p.live.each(func(key string, ls *liveSession) {
		if ls.ks.UserID() == userID {
			drop = append(drop, key)
			if ls.timer != nil {
				ls.timer.Stop()
			}
		}
	})
	for _, k := range drop {
		p.live.remove(k)
	}
	drop = drop[:0]
	prefix := liveKey(userID, "")
	p.manifests.each(func(key string, _ keeper.Manifest) {
		if strings.HasPrefix(key, prefix) {
			drop = append(drop, key)
		}
	})
	for _, k := range drop {
		p.manifests.remove(k)
	}
	p.mu.Unlock()
	if err := p.q.flush(ctx); err != nil {
		return fmt.Errorf("provider: forget user: waiting for background work: %w", err)
	}
	if err := p.st.DeleteUser(ctx, userID); err != nil {
		return fmt.Errorf("provider: forget user: %w", err)
	}
	return nil
}

// ExportedDocument is one line of ExportUser's output.
type ExportedDocument struct {
	// Kind is store.KindSessionSummary, KindTurn (each session's turns
	// follow it), KindInteraction or KindInsight.
	Kind     store.Kind `json:"kind"`
	Document any        `json:"document"`
}

// ExportUser writes everything stored about the user to w as JSON lines,
// one ExportedDocument each: the sessions (oldest first), the
// interactions (oldest first) and the insights, the long-term profile and
// the superseded ones (the audit trail) included. Vectors are left out:
// they are derived from the text and unreadable. It returns the number of
// documents written; a failure midway leaves w with the lines written so
// far. With ForgetUser it serves a user's requests to see and to erase
// what is kept about them.
func (p *MemoryProvider) ExportUser(ctx context.Context, userID string, w io.Writer) (int, error) {
	if err := agent.ValidateUserID(userID); err != nil {
		return 0, fmt.Errorf("provider: export user: %w", err)
	}
	enc := json.NewEncoder(w)
	n := 0
	write := func(kind store.Kind, doc any) error {
		if err := enc.Encode(ExportedDocument{Kind: kind, Document: doc}); err != nil {
			return fmt.Errorf("provider: export user: %w", err)
		}
		n++
		return nil
	}
	sessions, err := p.st.ListSessions(ctx, userID, store.SessionFilter{})
	if err != nil {
		return n, fmt.Errorf("provider: export user: sessions: %w", err)
	}
	slices.Reverse(sessions) // oldest first
	for _, d := range sessions {
		d.SummaryVector, d.ETag = nil, ""
		if err := write(store.KindSessionSummary, d); err != nil {
			return n, err
		}
		turns, err := p.st.ListTurns(ctx, userID, d.ID, 0)
		if err != nil {
			return n, fmt.Errorf("provider: export user: turns of session %s: %w", d.ID, err)
		}
		for _, t := range turns {
			if err := write(store.KindTurn, t); err != nil {
				return n, err
			}
		}
	}
	interactions, err := p.st.ListInteractions(ctx, userID, store.InteractionFilter{})
	if err != nil {
		return n, fmt.Errorf("provider: export user: interactions: %w", err)
	}
	for _, d := range interactions {
		d.ContentVector, d.SummaryVector = nil, nil
		if err := write(store.KindInteraction, d); err != nil {
			return n, err
		}
	}
	insights, err := p.st.ListInsights(ctx, userID, store.InsightFilter{IncludeSuperseded: true})
	if err != nil {
		return n, fmt.Errorf("provider: export user: insights: %w", err)
	}
	slices.Reverse(insights) // oldest first
	for _, d := range insights {
		d.InsightVector = nil
		if err := write(store.KindInsight, d); err != nil {
			return n, err
		}
	}
	return n, nil
}
