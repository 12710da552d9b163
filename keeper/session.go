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
	"github.com/agentmemory/agentmemory/embed"
	"github.com/agentmemory/agentmemory/prompts"
	"github.com/agentmemory/agentmemory/store"
)

// maxPutAttempts bounds the reload-and-retry loop on an ETag conflict of
// the session document (which holds only small state: turns have records
// of their own).
const maxPutAttempts = 8

// maxCatchUpTurns bounds the turns one cumulative summary call folds in
// when the summary fell behind while the model was failing.
const maxCatchUpTurns = 30

// Session is the live memory of one session. It is safe for concurrent use:
// AddTurn and Context may run while a Prune is making model calls.
type Session struct {
	k      *Keeper
	userID string
	id     string
	init   InitBlock
	// legacy is set when the session was written by an earlier version
	// (turns inside the session document, interaction ids by turn range):
	// a prune then also removes any older interaction it overlaps.
	legacy bool

	mu  sync.Mutex
	doc *store.SessionSummary // the last state written or read, with its ETag;
	// doc.State.Turns caches the turns the context needs (the unpruned
	// ones and the last ActiveTurns), in Seq order; they are never written
	// into the session document.
	counts map[string]int // token counts of rendered pieces, by key

	pruneMu sync.Mutex // serialises Prune and End
}

// ID returns the session id.
func (s *Session) ID() string { return s.id }

// UserID returns the id of the user the session belongs to.
func (s *Session) UserID() string { return s.userID }

// Completed reports whether the session has ended (here or in another
// process that this one has heard of): it takes no more turns.
func (s *Session) Completed() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.doc.Status == store.SessionCompleted
}

// Init returns the initialization block loaded when the session opened.
func (s *Session) Init() InitBlock {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.init
}

// State returns a copy of the live session state.
func (s *Session) State() store.SessionState {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := s.doc.State
	st.Turns = slices.Clone(st.Turns)
	return st
}

// AddTurn appends a turn and stores it before returning: once AddTurn
// returns nil the turn survives a crash. Its messages are first cut to the
// size limits (see FitTurn). The turn's Seq is assigned (the next number
// in the session, across every process writing it) and a zero Time becomes
// now. A turn without an ID gets one from its message ids, so adding the
// same messages again stores nothing: the turn already stored is returned.
func (s *Session) AddTurn(ctx context.Context, t store.Turn) (store.Turn, error) {
	if len(t.Messages) == 0 {
		return t, errors.New("keeper: add turn: no messages")
	}
	t.Messages = slices.Clone(t.Messages)
	if t.Time.IsZero() {
		t.Time = s.k.cfg.Now().UTC()
	}
	if t.ID == "" {
		t.ID = store.TurnID(&t)
	}
	if t.ID == "" {
		t.ID = "turn-" + agent.NewID()
	}
	FitTurn(&t)
	t.UserID, t.SessionID = s.userID, s.id

	s.mu.Lock()
	if s.doc.Status == store.SessionCompleted {
		s.mu.Unlock()
		return t, fmt.Errorf("%w: %s", ErrSessionCompleted, s.id)
	}
	if i := slices.IndexFunc(s.doc.State.Turns, func(c store.Turn) bool { return c.ID == t.ID }); i >= 0 {
		have := s.doc.State.Turns[i]
		s.mu.Unlock()
		return have, nil
	}
	last := s.doc.State.TurnCounter
	s.mu.Unlock()

	t.Seq = last + 1
	if err := s.k.st.AppendTurn(ctx, s.userID, &t); err != nil {
		return t, fmt.Errorf("keeper: add turn to session %s: %w", s.id, err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.cache(t)
	if t.Seq > last+1 {
		// Another process (or a concurrent call) added turns in between:
		// read them, so the context and the next prune see every turn.
		// The turn is stored whatever this read does.
		if others, err := s.k.st.ListTurns(ctx, s.userID, s.id, last+1); err == nil {
			for _, o := range others {
				s.cache(*o)
			}
		} else {
			s.k.cfg.Logger.WarnContext(ctx, "memory: turns added elsewhere not read; the next prune reads them", "session", s.id, "err", err)
		}
	}
	return t, nil
}

// cache puts a stored turn into the in-memory turns, in Seq order; the
// caller holds s.mu.
func (s *Session) cache(t store.Turn) {
	st := &s.doc.State
	st.TurnCounter = max(st.TurnCounter, t.Seq)
	if t.Seq <= st.PrunedThrough-s.k.cfg.ActiveTurns {
		return // pruned and out of the context already
	}
	i, found := slices.BinarySearchFunc(st.Turns, t.Seq, func(c store.Turn, seq int) int { return c.Seq - seq })
	if !found {
		st.Turns = slices.Insert(st.Turns, i, t)
	}
}

// refresh reads the turns stored since the last one this session knows
// (by other processes), so that a prune or an end covers every turn.
func (s *Session) refresh(ctx context.Context) error {
	s.mu.Lock()
	from := s.doc.State.PrunedThrough + 1
	if n := len(s.doc.State.Turns); n > 0 {
		from = max(from, s.doc.State.Turns[n-1].Seq+1)
	}
	s.mu.Unlock()
	turns, err := s.k.st.ListTurns(ctx, s.userID, s.id, from)
	if err != nil {
		return fmt.Errorf("keeper: read turns of session %s: %w", s.id, err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, t := range turns {
		s.cache(*t)
	}
	return nil
}

// update applies change to a copy of the session document and writes it
// with the current ETag, reloading and reapplying on a conflict. change
// reports whether there is anything to write. The cached turns stay in
// memory; the document is written without them.
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
		w := *doc
		w.State.Turns = nil
		err = s.k.st.PutSession(ctx, s.userID, &w)
		if err == nil {
			doc.ETag = w.ETag
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
		defaultSummaryThrough(&fresh.State)
		fresh.State.Turns = s.doc.State.Turns
		fresh.State.TurnCounter = max(fresh.State.TurnCounter, s.doc.State.TurnCounter)
		s.doc = fresh
		s.trim()
	}
}

// trim drops cached turns that are pruned and out of the context; the
// caller holds s.mu.
func (s *Session) trim() {
	keepFrom := s.doc.State.PrunedThrough - s.k.cfg.ActiveTurns
	s.doc.State.Turns = slices.DeleteFunc(s.doc.State.Turns, func(t store.Turn) bool { return t.Seq <= keepFrom })
}

// defaultSummaryThrough reads a document of an earlier version, where the
// cumulative summary always covered every pruned turn.
func defaultSummaryThrough(st *store.SessionState) {
	if st.SummaryThrough == 0 {
		st.SummaryThrough = st.PrunedThrough
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
	err = s.update(ctx, "record prune", func(d *store.SessionSummary) (bool, error) {
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

// EndResult is what End produced.
type EndResult struct {
	// Session is the completed session document.
	Session *store.SessionSummary
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
	err = s.update(ctx, "end session", func(d *store.SessionSummary) (bool, error) {
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
