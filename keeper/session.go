package keeper

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/agentmemory/agentmemory/agent"
	"github.com/agentmemory/agentmemory/prompts"
	"github.com/agentmemory/agentmemory/store"
)

// maxPutAttempts bounds the reload-and-retry loop on an ETag conflict.
const maxPutAttempts = 4

// Session is the live memory of one session. It is safe for concurrent use:
// AddTurn and Context may run while a Prune is making model calls.
type Session struct {
	k      *Keeper
	userID string
	id     string
	init   InitBlock

	mu     sync.Mutex
	doc    *store.SessionSummary // the last state written or read, with its ETag
	counts map[string]int        // token counts of rendered pieces, by key

	pruneMu sync.Mutex // serialises Prune and End
}

// ID returns the session id.
func (s *Session) ID() string { return s.id }

// UserID returns the id of the user the session belongs to.
func (s *Session) UserID() string { return s.userID }

// Init returns the initialization block loaded when the session opened.
func (s *Session) Init() InitBlock { return s.init }

// State returns a copy of the live session state.
func (s *Session) State() store.SessionState {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := s.doc.State
	st.Turns = slices.Clone(st.Turns)
	return st
}

// AddTurn appends a turn and persists the session state before returning:
// once AddTurn returns nil the turn survives a crash. The turn's Seq is
// assigned (the next number) and a zero Time becomes now. On an ETag
// conflict (another process wrote the session) the state is reloaded and
// the turn appended to it, unless a turn with the same message ids is
// already there.
func (s *Session) AddTurn(ctx context.Context, t store.Turn) (store.Turn, error) {
	if len(t.Messages) == 0 {
		return t, errors.New("keeper: add turn: no messages")
	}
	if t.Time.IsZero() {
		t.Time = s.k.cfg.Now().UTC()
	}
	err := s.update(ctx, "add turn", func(doc *store.SessionSummary) (bool, error) {
		if doc.Status == store.SessionCompleted {
			return false, fmt.Errorf("%w: %s", ErrSessionCompleted, s.id)
		}
		if hasTurn(doc.State.Turns, t) {
			return false, nil
		}
		t.Seq = doc.State.TurnCounter + 1
		doc.State.TurnCounter = t.Seq
		doc.State.Turns = append(doc.State.Turns, t)
		return true, nil
	})
	return t, err
}

// hasTurn reports whether turns holds a turn with the same message ids as t.
func hasTurn(turns []store.Turn, t store.Turn) bool {
	if t.Messages[0].ID == "" {
		return false
	}
	for i := len(turns) - 1; i >= 0; i-- {
		if slices.EqualFunc(turns[i].Messages, t.Messages, func(a, b store.TurnMessage) bool { return a.ID == b.ID }) {
			return true
		}
	}
	return false
}

// update applies change to a copy of the session document and writes it
// with the current ETag, reloading and reapplying on a conflict. change
// reports whether there is anything to write.
func (s *Session) update(ctx context.Context, what string, change func(*store.SessionSummary) (bool, error)) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	for attempt := 1; ; attempt++ {
		doc := cloneDoc(s.doc)
		write, err := change(doc)
		if err != nil || !write {
			return err
		}
		doc.UpdatedAt = s.k.cfg.Now().UTC()
		err = s.k.st.PutSession(ctx, s.userID, doc)
		if err == nil {
			s.doc = doc
			return nil
		}
		if !errors.Is(err, store.ErrConflict) || attempt == maxPutAttempts {
			return fmt.Errorf("keeper: %s in session %s: %w", what, s.id, err)
		}
		fresh, gerr := s.k.st.GetSession(ctx, s.userID, s.id)
		if gerr != nil {
			return fmt.Errorf("keeper: %s in session %s: reload after conflict: %w", what, s.id, gerr)
		}
		s.k.cfg.Logger.DebugContext(ctx, "memory: session changed elsewhere; reloaded", "session", s.id, "attempt", attempt)
		s.doc = fresh
	}
}

func cloneDoc(d *store.SessionSummary) *store.SessionSummary {
	c := *d
	c.State.Turns = slices.Clone(d.State.Turns)
	return &c
}

// Pending reports how many turns await pruning.
func (s *Session) Pending() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(unpruned(s.doc.State))
}

// NeedsPrune reports whether K turns have accumulated since the last prune.
func (s *Session) NeedsPrune() bool { return s.Pending() >= s.k.cfg.K }

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
	// MetadataPending is set when the model's metadata was unusable and the
	// interaction was stored without it, flagged for a later retry.
	MetadataPending bool
}

// Prune turns every full chunk of K unpruned turns into an interaction
// document and folds it into the cumulative summary, oldest chunk first. A
// failure leaves the failed chunk unpruned, so that calling Prune again
// redoes it (overwriting, never duplicating, a document already written).
func (s *Session) Prune(ctx context.Context) ([]PruneResult, error) {
	s.pruneMu.Lock()
	defer s.pruneMu.Unlock()
	var out []PruneResult
	for {
		s.mu.Lock()
		pending := unpruned(s.doc.State)
		if len(pending) < s.k.cfg.K {
			s.mu.Unlock()
			return out, nil
		}
		chunk := slices.Clone(pending[:s.k.cfg.K])
		prev := s.doc.State.CumulativeSummary
		s.mu.Unlock()
		r, err := s.pruneChunk(ctx, chunk, prev)
		if err != nil {
			return out, err
		}
		out = append(out, r)
	}
}

func (s *Session) pruneChunk(ctx context.Context, chunk []store.Turn, prevSummary string) (PruneResult, error) {
	first, last := chunk[0].Seq, chunk[len(chunk)-1].Seq
	doc, pending, err := s.interaction(ctx, chunk)
	if err != nil {
		return PruneResult{}, err
	}
	if err := s.k.st.PutInteraction(ctx, s.userID, doc); err != nil {
		return PruneResult{}, fmt.Errorf("keeper: store interaction of turns %d-%d: %w", first, last, err)
	}
	summary, err := s.cumulativeSummary(ctx, prevSummary, chunk)
	if err != nil {
		return PruneResult{}, err
	}
	keepFrom := last - s.k.cfg.ActiveTurns // turns after this stay in the context
	err = s.update(ctx, "record prune", func(d *store.SessionSummary) (bool, error) {
		if d.State.PrunedThrough >= last {
			return false, nil // already recorded (a retry, or another process)
		}
		d.State.PrunedThrough = last
		d.State.CumulativeSummary = summary
		d.State.Turns = slices.DeleteFunc(d.State.Turns, func(t store.Turn) bool { return t.Seq <= keepFrom })
		return true, nil
	})
	if err != nil {
		return PruneResult{}, err
	}
	return PruneResult{Interaction: doc, MetadataPending: pending}, nil
}

// interaction builds the interaction document of a chunk: content, LLM
// metadata and vectors. Metadata the model answers unusably twice is left
// out and the document flagged; a failed model or embedder call is an error.
func (s *Session) interaction(ctx context.Context, chunk []store.Turn) (*store.Interaction, bool, error) {
	first, last := chunk[0].Seq, chunk[len(chunk)-1].Seq
	doc := &store.Interaction{
		ID:             store.InteractionID(s.id, first, last),
		UserID:         s.userID,
		SessionID:      s.id,
		Timestamp:      chunk[0].Time.UTC(),
		FirstTurn:      first,
		LastTurn:       last,
		Content:        Flatten(chunk),
		EmbeddingModel: s.k.cfg.Embedder.Model(),
	}
	for _, t := range chunk {
		for _, m := range t.Messages {
			doc.TurnIDs = append(doc.TurnIDs, m.ID)
		}
	}
	meta, pending, err := s.metadata(ctx, chunk, first, last)
	if err != nil {
		return nil, false, err
	}
	doc.Summary = meta.Summary
	doc.Metadata = store.Metadata{MentionedTopics: meta.MentionedTopics, Entities: meta.Entities}
	doc.MetadataPending = pending

	texts := []string{doc.Content}
	if doc.Summary != "" {
		texts = append(texts, doc.Summary)
	}
	vecs, err := s.k.cfg.Embedder.Embed(ctx, texts)
	if err != nil {
		return nil, false, fmt.Errorf("keeper: embed turns %d-%d: %w", first, last, err)
	}
	if len(vecs) != len(texts) {
		return nil, false, fmt.Errorf("keeper: embed turns %d-%d: %d vectors for %d texts", first, last, len(vecs), len(texts))
	}
	doc.ContentVector = vecs[0]
	if len(vecs) > 1 {
		doc.SummaryVector = vecs[1]
	}
	return doc, pending, nil
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

// RetryMetadata asks again for the metadata of this session's interactions
// stored without it, and completes those it gets. It returns how many it
// completed.
func (s *Session) RetryMetadata(ctx context.Context) (int, error) {
	docs, err := s.k.st.ListInteractions(ctx, s.userID, store.InteractionFilter{SessionID: s.id, MetadataPending: true})
	if err != nil {
		return 0, fmt.Errorf("keeper: list interactions awaiting metadata: %w", err)
	}
	done := 0
	for _, d := range docs {
		chunk := turnsOf(d)
		meta, pending, err := s.metadata(ctx, chunk, d.FirstTurn, d.LastTurn)
		if err != nil {
			return done, err
		}
		if pending {
			continue
		}
		d.Summary = meta.Summary
		d.Metadata = store.Metadata{MentionedTopics: meta.MentionedTopics, Entities: meta.Entities}
		d.MetadataPending = false
		d.SummaryVector = nil
		if d.Summary != "" {
			vecs, err := s.k.cfg.Embedder.Embed(ctx, []string{d.Summary})
			if err != nil {
				return done, fmt.Errorf("keeper: embed summary of %s: %w", d.ID, err)
			}
			d.SummaryVector = vecs[0]
		}
		if err := s.k.st.PutInteraction(ctx, s.userID, d); err != nil {
			return done, fmt.Errorf("keeper: store metadata of %s: %w", d.ID, err)
		}
		done++
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

// EndResult is what End produced.
type EndResult struct {
	// Session is the completed session document.
	Session *store.SessionSummary
	// Pruned lists the interactions written by End's final prune.
	Pruned []PruneResult
}

// End prunes every remaining turn (the last chunk may hold fewer than K),
// writes the session summary with its vector and key topics, and marks the
// session completed. A model failure on the summary falls back to the
// cumulative summary (logged); a failure to prune or write is returned and
// End may be called again.
func (s *Session) End(ctx context.Context) (*EndResult, error) {
	res := &EndResult{}
	pruned, err := s.Prune(ctx)
	res.Pruned = pruned
	if err != nil {
		return res, err
	}
	s.pruneMu.Lock()
	defer s.pruneMu.Unlock()
	s.mu.Lock()
	rest := slices.Clone(unpruned(s.doc.State))
	prev := s.doc.State.CumulativeSummary
	s.mu.Unlock()
	if len(rest) > 0 {
		r, err := s.pruneChunk(ctx, rest, prev)
		if err != nil {
			return res, err
		}
		res.Pruned = append(res.Pruned, r)
	}

	if n, err := s.RetryMetadata(ctx); err != nil {
		s.k.cfg.Logger.WarnContext(ctx, "memory: metadata retry failed; left flagged", "session", s.id, "err", err)
	} else if n > 0 {
		s.k.cfg.Logger.InfoContext(ctx, "memory: metadata completed on retry", "session", s.id, "interactions", n)
	}
	state := s.State()
	summary, topics := s.sessionSummary(ctx, state)
	var vec []float32
	if summary != "" {
		v, err := s.k.cfg.Embedder.Embed(ctx, []string{summary})
		if err != nil {
			return res, fmt.Errorf("keeper: embed session summary: %w", err)
		}
		vec = v[0]
	}
	for _, p := range res.Pruned {
		topics = mergeTopics(topics, p.Interaction.Metadata.MentionedTopics)
	}
	err = s.update(ctx, "end session", func(d *store.SessionSummary) (bool, error) {
		if d.Status == store.SessionCompleted {
			return false, nil
		}
		d.Summary, d.SummaryVector, d.KeyTopics = summary, vec, topics
		d.EndTime = s.k.cfg.Now().UTC()
		d.Status = store.SessionCompleted
		d.State.Turns = nil // every turn now lives in an interaction document
		return true, nil
	})
	if err != nil {
		return res, err
	}
	s.mu.Lock()
	res.Session = cloneDoc(s.doc)
	s.mu.Unlock()
	return res, nil
}

func (s *Session) sessionSummary(ctx context.Context, st store.SessionState) (string, []string) {
	if st.TurnCounter == 0 {
		return "", nil
	}
	last := st.Turns
	if n := s.k.cfg.ActiveTurns; len(last) > n {
		last = last[len(last)-n:]
	}
	r, err := s.k.cfg.Prompts.SessionSummary(st.CumulativeSummary, promptTurns(last))
	if err == nil {
		var out *agent.ChatResponse
		if out, err = s.k.cfg.Mini.Complete(ctx, r.Request()); err == nil {
			var res prompts.SessionSummaryResult
			if res, err = prompts.ParseSessionSummary([]byte(out.Message.Text)); err == nil {
				return res.Summary, res.KeyTopics
			}
		}
	}
	s.k.cfg.Logger.WarnContext(ctx, "memory: session summary failed; using the cumulative summary", "session", s.id, "err", err)
	return st.CumulativeSummary, nil
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

// Flatten renders turns as interaction content: one "speaker: text" line
// per message, the speaker being the message's name or else its role.
func Flatten(turns []store.Turn) string {
	var b strings.Builder
	for _, t := range turns {
		for _, m := range t.Messages {
			if strings.TrimSpace(m.Content) == "" {
				continue
			}
			if b.Len() > 0 {
				b.WriteByte('\n')
			}
			b.WriteString(speaker(m))
			b.WriteString(": ")
			b.WriteString(strings.TrimSpace(m.Content))
		}
	}
	return b.String()
}

func speaker(m store.TurnMessage) string {
	if m.Name != "" {
		return m.Name
	}
	return m.Role
}

func promptTurns(turns []store.Turn) []prompts.Turn {
	var out []prompts.Turn
	for _, t := range turns {
		for _, m := range t.Messages {
			out = append(out, prompts.Turn{Role: speaker(m), Text: m.Content})
		}
	}
	return out
}

// timeOf formats a time for the context: date and minute, UTC.
func timeOf(t time.Time) string { return t.UTC().Format("2006-01-02 15:04 UTC") }
