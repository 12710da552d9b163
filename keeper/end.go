package keeper

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/agentmemory/agentmemory/embed"
	"github.com/agentmemory/agentmemory/prompts"
	"github.com/agentmemory/agentmemory/store"
)

// EndResult is what End produced.
type EndResult struct {
	// Session is the completed session document.
	Session *store.Session
	// Pruned lists the interactions written by End's final prune.
	Pruned []PruneResult
}

// End prunes every remaining turn (the last chunk may hold fewer than K),
// writes the session summary with its vector and key topics, and marks the
// session completed. The model failing does not stop it: chunks are stored
// without what the model did not give (flagged), the summary falls back to
// the cumulative summary, and a missing vector is logged. Only a store
// failure is returned, and End may then be called again: a short final
// chunk it stored is replaced, not duplicated, when the session resumes.
// Turns another process adds while End runs are pruned too.
func (s *Session) End(ctx context.Context) (*EndResult, error) {
	res := &EndResult{}
	pruned, err := s.ForcePrune(ctx)
	res.Pruned = pruned
	if err != nil {
		return res, err
	}
	s.pruneMu.Lock()
	defer s.pruneMu.Unlock()
	rest, err := s.pruneRest(ctx)
	if err != nil {
		return res, err
	}
	res.Pruned = append(res.Pruned, rest...)

	if n, err := s.RetryMetadata(ctx); err != nil {
		s.k.cfg.Logger.WarnContext(ctx, "memory: metadata retry failed; left flagged", "session", s.id, "err", err)
	} else if n > 0 {
		s.k.cfg.Logger.InfoContext(ctx, "memory: metadata completed on retry", "session", s.id, "interactions", n)
	}
	state := s.State()
	summary, topics, summaryPending := s.sessionSummary(ctx, state)
	var vec []float32
	if summary != "" && !embed.IsLexical(s.k.cfg.Embedder) {
		v, err := s.k.cfg.Embedder.Embed(ctx, []string{summary})
		switch {
		case err != nil:
			s.k.cfg.Logger.WarnContext(ctx, "memory: session summary stored without its vector", "session", s.id, "err", err)
		case len(v) == 1:
			vec = v[0]
		}
	}
	for _, p := range res.Pruned {
		topics = mergeTopics(topics, p.Interaction.Metadata.MentionedTopics)
	}
	err = s.update(ctx, "end session", func(d *store.Session) (bool, error) {
		if d.Status == store.SessionCompleted {
			return false, nil
		}
		d.Summary, d.SummaryVector, d.KeyTopics, d.SummaryPending = summary, vec, topics, summaryPending
		d.EndTime = s.k.cfg.Now().UTC()
		d.Status = store.SessionCompleted
		return true, nil
	})
	if err != nil {
		return res, err
	}
	// A turn another process added between the last read and the
	// completion would otherwise never reach an interaction.
	late, err := s.pruneRest(ctx)
	if err != nil {
		return res, err
	}
	res.Pruned = append(res.Pruned, late...)
	s.mu.Lock()
	s.doc.State.Turns = nil
	res.Session = cloneDoc(s.doc)
	s.mu.Unlock()
	return res, nil
}

// pruneRest stores every unpruned turn (fewer than K) as one interaction,
// after reading the turns other processes stored. The caller holds
// s.pruneMu.
func (s *Session) pruneRest(ctx context.Context) ([]PruneResult, error) {
	if err := s.refresh(ctx); err != nil {
		return nil, err
	}
	var out []PruneResult
	for {
		s.mu.Lock()
		rest := slices.Clone(unpruned(s.doc.State))
		s.mu.Unlock()
		if len(rest) == 0 {
			return out, nil
		}
		rest = rest[:min(len(rest), s.k.cfg.K)]
		r, err := s.pruneChunk(ctx, rest, true)
		if err != nil {
			return out, err
		}
		out = append(out, r)
	}
}

// sessionSummary asks the model for the session summary; when it fails,
// the cumulative summary stands in and pending is true.
func (s *Session) sessionSummary(ctx context.Context, st store.SessionState) (summary string, topics []string, pending bool) {
	if st.TurnCounter == 0 {
		return "", nil, false
	}
	last := st.Turns
	if n := s.k.cfg.ActiveTurns; len(last) > n {
		last = last[len(last)-n:]
	}
	summary, topics, err := s.k.summarize(ctx, st.CumulativeSummary, last)
	if err == nil {
		return summary, topics, false
	}
	s.k.cfg.Logger.WarnContext(ctx, "memory: session summary failed; the cumulative summary stands in until it is asked again", "session", s.id, "err", err)
	return st.CumulativeSummary, nil, true
}

// summarize asks the model for a session summary from the cumulative
// summary and the last turns.
func (k *Keeper) summarize(ctx context.Context, cumulative string, last []store.Turn) (string, []string, error) {
	r, err := k.cfg.Prompts.SessionSummary(cumulative, promptTurns(last))
	if err != nil {
		return "", nil, err
	}
	out, err := k.cfg.Mini.Complete(ctx, r.Request())
	if err != nil {
		return "", nil, err
	}
	res, err := prompts.ParseSessionSummary([]byte(out.Message.Text))
	if err != nil {
		return "", nil, err
	}
	return res.Summary, res.KeyTopics, nil
}

// maxSummaryRetries bounds the sessions one RetrySummaries call looks at.
const maxSummaryRetries = 20

// RetrySummaries asks the model again for the summaries of the user's
// completed sessions that ended while it was failing (SummaryPending), the
// most recent first, and stores those it gets. It returns how many it
// completed; a session another process changed meanwhile is left for the
// next call.
func (k *Keeper) RetrySummaries(ctx context.Context, userID string) (int, error) {
	docs, err := k.st.ListSessions(ctx, userID, store.SessionFilter{Status: store.SessionCompleted, Limit: maxSummaryRetries})
	if err != nil {
		return 0, fmt.Errorf("keeper: list sessions awaiting a summary: %w", err)
	}
	done := 0
	for _, d := range docs {
		if !d.SummaryPending {
			continue
		}
		turns, err := k.st.ListTurns(ctx, userID, d.ID, max(1, d.State.PrunedThrough-k.cfg.ActiveTurns+1))
		if err != nil {
			return done, fmt.Errorf("keeper: read turns of session %s: %w", d.ID, err)
		}
		last := make([]store.Turn, 0, len(turns))
		for _, t := range turns[max(0, len(turns)-k.cfg.ActiveTurns):] {
			last = append(last, *t)
		}
		summary, topics, err := k.summarize(ctx, d.State.CumulativeSummary, last)
		if err != nil {
			return done, fmt.Errorf("keeper: summary of session %s: %w", d.ID, err)
		}
		d.Summary, d.KeyTopics, d.SummaryVector, d.SummaryPending = summary, mergeTopics(topics, d.KeyTopics), nil, false
		if !embed.IsLexical(k.cfg.Embedder) { // retrieval never searches a lexical vector
			if v, err := k.cfg.Embedder.Embed(ctx, []string{summary}); err == nil && len(v) == 1 {
				d.SummaryVector = v[0]
			}
		}
		d.UpdatedAt = k.cfg.Now().UTC()
		if err := k.st.PutSession(ctx, userID, d); err != nil {
			if errors.Is(err, store.ErrConflict) {
				continue
			}
			return done, fmt.Errorf("keeper: store summary of session %s: %w", d.ID, err)
		}
		done++
	}
	return done, nil
}

func mergeTopics(a, b []string) []string {
	for _, t := range b {
		if len(a) >= prompts.MaxTopics {
			break
		}
		if !slices.ContainsFunc(a, func(x string) bool { return strings.EqualFold(x, t) }) {
			a = append(a, t)
		}
	}
	return a
}
