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

// maxCatchUpTurns bounds the turns one cumulative summary call folds in
// when the summary fell behind while the model was failing.
const maxCatchUpTurns = 30

// unpruned returns the turns of st after the last pruned one.
func unpruned(st store.SessionState) []store.Turn {
	for i, t := range st.Turns {
		if t.Seq > st.PrunedThrough {
			return st.Turns[i:]
		}
	}
	return nil
}

// PruneResult tells what one prune wrote.
type PruneResult struct {
	// Interaction is the document written.
	Interaction *store.Interaction
	// MetadataPending is set when the model's metadata (or the embedder's
	// vectors) were unusable or unavailable and the interaction was stored
	// without them, flagged for a later retry.
	MetadataPending bool
	// SummaryPending is set when the cumulative summary could not be
	// updated: it catches up at the next prune.
	SummaryPending bool
}

// Prune turns every full chunk of K unpruned turns into an interaction
// document and folds it into the cumulative summary, oldest chunk first. A
// failure leaves the failed chunk unpruned, so that calling Prune again
// redoes it (replacing, never duplicating, a document already written: an
// interaction's id depends only on the session and its first turn).
func (s *Session) Prune(ctx context.Context) ([]PruneResult, error) {
	return s.prune(ctx, false)
}

// ForcePrune is Prune for when the model has failed too often: a chunk
// whose metadata or vectors the model or embedder do not give is stored
// without them (flagged, completed by RetryMetadata), and a cumulative
// summary that fails is left behind to catch up later. Only a store
// failure stops it.
func (s *Session) ForcePrune(ctx context.Context) ([]PruneResult, error) {
	return s.prune(ctx, true)
}

func (s *Session) prune(ctx context.Context, force bool) ([]PruneResult, error) {
	s.pruneMu.Lock()
	defer s.pruneMu.Unlock()
	if err := s.refresh(ctx); err != nil {
		return nil, err
	}
	var out []PruneResult
	for {
		s.mu.Lock()
		pending := unpruned(s.doc.State)
		if len(pending) < s.k.cfg.K {
			s.mu.Unlock()
			return out, nil
		}
		chunk := slices.Clone(pending[:s.k.cfg.K])
		s.mu.Unlock()
		r, err := s.pruneChunk(ctx, chunk, force)
		if err != nil {
			return out, err
		}
		out = append(out, r)
	}
}

func (s *Session) pruneChunk(ctx context.Context, chunk []store.Turn, force bool) (PruneResult, error) {
	first, last := chunk[0].Seq, chunk[len(chunk)-1].Seq
	doc, pending, err := s.interaction(ctx, chunk, force)
	if err != nil {
		return PruneResult{}, err
	}
	if err := s.k.st.PutInteraction(ctx, s.userID, doc); err != nil {
		return PruneResult{}, fmt.Errorf("keeper: store interaction of turns %d-%d: %w", first, last, err)
	}
	if s.legacy {
		if err := s.dropOverlaps(ctx, doc); err != nil {
			return PruneResult{}, err
		}
	}
	summary, through, err := s.foldSummary(ctx, last)
	if err != nil && !force {
		return PruneResult{}, err
	}
	if err != nil {
		s.k.cfg.Logger.WarnContext(ctx, "memory: cumulative summary failed; it catches up at the next prune", "session", s.id, "turns", fmt.Sprintf("%d-%d", first, last), "err", err)
	}
	err = s.update(ctx, "record prune", func(d *store.Session) (bool, error) {
		if d.State.PrunedThrough >= last {
			return false, nil // already recorded (a retry, or another process)
		}
		d.State.PrunedThrough = last
		if through > d.State.SummaryThrough {
			d.State.CumulativeSummary, d.State.SummaryThrough = summary, through
		}
		return true, nil
	})
	if err != nil {
		return PruneResult{}, err
	}
	s.mu.Lock()
	s.trim()
	s.mu.Unlock()
	return PruneResult{Interaction: doc, MetadataPending: pending, SummaryPending: through < last}, nil
}

// dropOverlaps removes the session's other interactions that hold any turn
// of doc: those an earlier version stored under ids by turn range (a short
// final chunk of an interrupted end, say).
func (s *Session) dropOverlaps(ctx context.Context, doc *store.Interaction) error {
	all, err := s.k.st.ListInteractions(ctx, s.userID, store.InteractionFilter{SessionID: s.id})
	if err != nil {
		return fmt.Errorf("keeper: list interactions of session %s: %w", s.id, err)
	}
	for _, d := range all {
		if d.ID != doc.ID && d.FirstTurn <= doc.LastTurn && d.LastTurn >= doc.FirstTurn {
			if err := s.k.st.DeleteDocument(ctx, s.userID, store.KindInteraction, d.ID); err != nil && !errors.Is(err, store.ErrNotFound) {
				return fmt.Errorf("keeper: remove overlapping interaction %s: %w", d.ID, err)
			}
		}
	}
	return nil
}

// foldSummary folds the turns after the cumulative summary's last one, up
// to turn last, into it. It returns the new summary and the turn it now
// covers; on failure, the current ones and the error.
func (s *Session) foldSummary(ctx context.Context, last int) (string, int, error) {
	s.mu.Lock()
	prev, through := s.doc.State.CumulativeSummary, s.doc.State.SummaryThrough
	var turns []store.Turn
	for _, t := range s.doc.State.Turns {
		if t.Seq > through && t.Seq <= last {
			turns = append(turns, t)
		}
	}
	s.mu.Unlock()
	if len(turns) == 0 || turns[0].Seq != through+1 {
		// Turns the summary missed while the model failed are no longer
		// cached: read them back.
		stored, err := s.k.st.ListTurns(ctx, s.userID, s.id, max(through+1, last-maxCatchUpTurns+1))
		if err != nil {
			return prev, through, fmt.Errorf("keeper: read turns for the cumulative summary: %w", err)
		}
		turns = turns[:0]
		for _, t := range stored {
			if t.Seq <= last {
				turns = append(turns, *t)
			}
		}
	}
	if len(turns) > maxCatchUpTurns {
		turns = turns[len(turns)-maxCatchUpTurns:]
	}
	if len(turns) == 0 {
		return prev, through, nil
	}
	sum, err := s.cumulativeSummary(ctx, prev, turns)
	if err != nil {
		return prev, through, err
	}
	return sum, last, nil
}

// interaction builds the interaction document of a chunk: content, LLM
// metadata and vectors. Metadata the model answers unusably twice is left
// out and the document flagged; a failed model or embedder call is an
// error, unless force, when the document is flagged instead.
func (s *Session) interaction(ctx context.Context, chunk []store.Turn, force bool) (*store.Interaction, bool, error) {
	first, last := chunk[0].Seq, chunk[len(chunk)-1].Seq
	doc := &store.Interaction{
		ID:             store.ChunkID(s.id, first),
		UserID:         s.userID,
		SessionID:      s.id,
		Timestamp:      chunk[0].Time.UTC(),
		FirstTurn:      first,
		LastTurn:       last,
		Content:        flattenBounded(chunk, MaxInteractionContentBytes),
		EmbeddingModel: s.k.cfg.Embedder.Model(),
	}
	for _, t := range chunk {
		for _, m := range t.Messages {
			doc.TurnIDs = append(doc.TurnIDs, m.ID)
		}
	}
	meta, pending, err := s.metadata(ctx, chunk, first, last)
	if err != nil && !force {
		return nil, false, err
	}
	if err != nil {
		s.k.cfg.Logger.WarnContext(ctx, "memory: interaction stored without metadata; completed later", "session", s.id, "turns", fmt.Sprintf("%d-%d", first, last), "err", err)
		meta, pending = prompts.Metadata{}, true
	}
	doc.Summary = meta.Summary
	doc.Metadata = store.Metadata{MentionedTopics: meta.MentionedTopics, Entities: meta.Entities}
	doc.MetadataPending = pending

	if err := s.embed(ctx, doc); err != nil {
		if !force {
			return nil, false, err
		}
		s.k.cfg.Logger.WarnContext(ctx, "memory: interaction stored without vectors; completed later", "session", s.id, "turns", fmt.Sprintf("%d-%d", first, last), "err", err)
		doc.ContentVector, doc.SummaryVector, doc.MetadataPending = nil, nil, true
	}
	return doc, doc.MetadataPending, nil
}

// embed sets the vectors of an interaction's content and summary; none
// with a lexical embedder (embed.IsLexical), whose vectors retrieval
// never searches.
func (s *Session) embed(ctx context.Context, doc *store.Interaction) error {
	if embed.IsLexical(s.k.cfg.Embedder) {
		doc.ContentVector, doc.SummaryVector = nil, nil
		return nil
	}
	texts := []string{embedText(doc.Content)}
	if doc.Summary != "" {
		texts = append(texts, doc.Summary)
	}
	vecs, err := s.k.cfg.Embedder.Embed(ctx, texts)
	if err != nil {
		return fmt.Errorf("keeper: embed turns %d-%d: %w", doc.FirstTurn, doc.LastTurn, err)
	}
	if len(vecs) != len(texts) {
		return fmt.Errorf("keeper: embed turns %d-%d: %d vectors for %d texts", doc.FirstTurn, doc.LastTurn, len(vecs), len(texts))
	}
	doc.ContentVector, doc.SummaryVector = vecs[0], nil
	if len(vecs) > 1 {
		doc.SummaryVector = vecs[1]
	}
	return nil
}

// metadata asks the model for a chunk's metadata. An unusable answer is
// asked for once more; if that fails too, pending is true and meta empty. A
// failed model call is an error.
func (s *Session) metadata(ctx context.Context, chunk []store.Turn, first, last int) (meta prompts.Metadata, pending bool, err error) {
	r, err := s.k.cfg.Prompts.InteractionMetadata(promptTurns(chunk))
	if err != nil {
		return meta, false, fmt.Errorf("keeper: metadata prompt: %w", err)
	}
	for attempt := 1; attempt <= 2; attempt++ {
		out, err := s.k.cfg.Mini.Complete(ctx, r.Request())
		if err != nil {
			return meta, false, fmt.Errorf("keeper: metadata of turns %d-%d: %w", first, last, err)
		}
		meta, err = prompts.ParseInteractionMetadata([]byte(out.Message.Text))
		if err == nil {
			return meta, false, nil
		}
		s.k.cfg.Logger.WarnContext(ctx, "memory: unusable interaction metadata from the model", "session", s.id, "turns", fmt.Sprintf("%d-%d", first, last), "attempt", attempt, "err", err)
	}
	return prompts.Metadata{}, true, nil
}

// RetryMetadata asks again for the metadata and vectors of this session's
// interactions stored without them, and completes those it gets. It
// returns how many it completed.
func (s *Session) RetryMetadata(ctx context.Context) (int, error) {
	docs, err := s.k.st.ListInteractions(ctx, s.userID, store.InteractionFilter{SessionID: s.id, MetadataPending: true})
	if err != nil {
		return 0, fmt.Errorf("keeper: list interactions awaiting metadata: %w", err)
	}
	done := 0
	for _, d := range docs {
		meta, pending, err := s.metadata(ctx, turnsOf(d), d.FirstTurn, d.LastTurn)
		if err != nil {
			return done, err
		}
		if !pending {
			d.Summary = meta.Summary
			d.Metadata = store.Metadata{MentionedTopics: meta.MentionedTopics, Entities: meta.Entities}
		}
		if err := s.embed(ctx, d); err != nil {
			return done, err
		}
		d.MetadataPending = pending
		if err := s.k.st.PutInteraction(ctx, s.userID, d); err != nil {
			return done, fmt.Errorf("keeper: store metadata of %s: %w", d.ID, err)
		}
		if !pending {
			done++
		}
	}
	return done, nil
}

// turnsOf rebuilds a chunk's messages from a stored interaction's content,
// for re-asking its metadata: one message per "speaker: text" line.
func turnsOf(d *store.Interaction) []store.Turn {
	var msgs []store.TurnMessage
	for _, line := range strings.Split(d.Content, "\n") {
		who, text, ok := strings.Cut(line, ": ")
		if !ok {
			if n := len(msgs); n > 0 {
				msgs[n-1].Content += "\n" + line
			}
			continue
		}
		msgs = append(msgs, store.TurnMessage{Role: who, Content: text})
	}
	return []store.Turn{{Seq: d.FirstTurn, Messages: msgs}}
}

// cumulativeSummary folds turns into the previous summary. An answer the
// parser cannot use is asked for once more; then the previous summary
// stands and the failure is returned.
func (s *Session) cumulativeSummary(ctx context.Context, prev string, turns []store.Turn) (string, error) {
	r, err := s.k.cfg.Prompts.CumulativeSummary(prev, promptTurns(turns))
	if err != nil {
		return "", fmt.Errorf("keeper: cumulative summary prompt: %w", err)
	}
	var perr error
	for range 2 {
		out, err := s.k.cfg.Mini.Complete(ctx, r.Request())
		if err != nil {
			return "", fmt.Errorf("keeper: cumulative summary: %w", err)
		}
		sum, err := prompts.ParseCumulativeSummary([]byte(out.Message.Text))
		if err == nil {
			return sum, nil
		}
		perr = err
	}
	return "", fmt.Errorf("keeper: cumulative summary: %w", perr)
}
