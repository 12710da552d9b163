package provider

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"slices"

	"github.com/agentmemory/agentmemory/agent"
	"github.com/agentmemory/agentmemory/store"
)

// What the user may see of their memory: ExportUser. What they may have
// forgotten: forget.go.

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
	sessions, err := p.store.ListSessions(ctx, userID, store.SessionFilter{})
	if err != nil {
		return n, fmt.Errorf("provider: export user: sessions: %w", err)
	}
	slices.Reverse(sessions) // oldest first
	for _, d := range sessions {
		d.SummaryVector, d.ETag = nil, ""
		if err := write(store.KindSessionSummary, d); err != nil {
			return n, err
		}
		turns, err := p.store.ListTurns(ctx, userID, d.ID, 0)
		if err != nil {
			return n, fmt.Errorf("provider: export user: turns of session %s: %w", d.ID, err)
		}
		for _, t := range turns {
			if err := write(store.KindTurn, t); err != nil {
				return n, err
			}
		}
	}
	interactions, err := p.store.ListInteractions(ctx, userID, store.InteractionFilter{})
	if err != nil {
		return n, fmt.Errorf("provider: export user: interactions: %w", err)
	}
	for _, d := range interactions {
		d.ContentVector, d.SummaryVector = nil, nil
		if err := write(store.KindInteraction, d); err != nil {
			return n, err
		}
	}
	insights, err := p.store.ListInsights(ctx, userID, store.InsightFilter{IncludeSuperseded: true})
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
