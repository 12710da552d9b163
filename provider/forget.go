package provider

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/agentmemory/agentmemory/agent"
	"github.com/agentmemory/agentmemory/erasure"
	"github.com/agentmemory/agentmemory/keeper"
	"github.com/agentmemory/agentmemory/store"
)

// What the user may ask to be forgotten, and what each forget call
// follows. Forgetting is for good: documents are deleted, not marked, and
// what was derived from them goes with them or is made anew without them.
// Every call returns a Receipt and appends a record to the store's
// deletion log (package erasure) when the store keeps one.

// Reasons recorded in the deletion log.
const (
	ReasonForgetInsight     = "forget_insight"
	ReasonForgetSession     = "forget_session"
	ReasonForgetInteraction = "forget_interaction"
	ReasonForgetUser        = "forget_user"
)

// Errors of the forget calls (ForgetInsight, ForgetSession,
// ForgetInteraction, ForgetBefore, ForgetUser) after their deletions were
// made. Both come with the call's Receipt, which lists what was deleted,
// and both are completed by CompleteForget with that receipt. An error
// with a nil Receipt means nothing was deleted; any other error with a
// Receipt means the call stopped partway (the Receipt lists, and the log
// records, what it did delete).
var (
	// ErrNotLogged reports deletions made whose deletion-log record could
	// not be written.
	ErrNotLogged = errors.New("provider: deleted, but the deletion log was not written")
	// ErrNotErased reports deletions made and logged (the Receipt names the
	// record) whose erasure is not complete: the store could not yet
	// rewrite the deleted content out of its files (store/sqlite: readers
	// kept the WAL from being truncated), or, after ForgetUser, the
	// deletion log still holds the user's clear names. Nothing deleted is
	// served any more, but its bytes may stay readable in the files until
	// CompleteForget succeeds.
	ErrNotErased = errors.New("provider: deleted and logged, but not yet erased from the store's files")
)

// Receipt is what a forget call removed and rewrote.
type Receipt struct {
	UserID string    `json:"user_id"`
	Reason string    `json:"reason"`
	At     time.Time `json:"at"`
	// Items lists every document deleted (a session's turns as one item
	// with their count) and every derived document rewritten without what
	// was forgotten: the long-term profile synthesised anew, an insight
	// restored because the insight it had been merged into was forgotten,
	// an insight whose references to forgotten sources were dropped.
	Items []erasure.Item `json:"items"`
	// LogSeq and LogHash name the deletion-log record of this call; zero
	// when the store keeps no log.
	LogSeq  int64  `json:"log_seq,omitempty"`
	LogHash string `json:"log_hash,omitempty"`
}

// IDs returns the ids of the receipt's items of kind with action
// (erasure.Deleted or erasure.Rewritten), in the receipt's order.
func (r *Receipt) IDs(kind store.Kind, action string) []string {
	var ids []string
	for _, it := range r.Items {
		if it.Kind == kind && it.Action == action && it.ID != "" {
			ids = append(ids, it.ID)
		}
	}
	return ids
}

// Count returns how many records of kind the receipt's items with action
// stand for.
func (r *Receipt) Count(kind store.Kind, action string) int {
	n := 0
	for _, it := range r.Items {
		if it.Kind == kind && it.Action == action {
			n += max(it.Count, 1)
		}
	}
	return n
}

// ForgetOptions tunes ForgetInsight.
type ForgetOptions struct {
	// Sources also forgets the conversations the insight was drawn from:
	// each of its sessions, with all that ForgetSession removes. Without
	// it the conversation stays, and can still be found as conversation.
	Sources bool
}

// ForgetInsight deletes one of the user's insights (active or, from the
// audit read, superseded) and follows what was derived from it before
// returning: insights merged from it are deleted too, insights that had
// been merged into one of those as duplicates come back as they were, and
// when the long-term profile had folded any of them in, it is synthesised
// anew from the remaining insights. Open sessions here reload their
// initialization block. The profile's own id (store.LongTermID) deletes
// the profile. It fails with store.ErrNotFound (and a nil Receipt) for an
// insight the user does not have; with ErrNotLogged or ErrNotErased when
// the deletions were made but not logged or not yet erased from the
// store's files (CompleteForget completes them); with another error and a
// Receipt when it stopped partway, for instance when the profile could
// not be synthesised anew (it is then left deleted).
func (p *MemoryProvider) ForgetInsight(ctx context.Context, userID, insightID string, opts ForgetOptions) (*Receipt, error) {
	if err := agent.ValidateUserID(userID); err != nil {
		return nil, fmt.Errorf("provider: forget insight: %w", err)
	}
	if err := store.CheckID("insight id", insightID); err != nil {
		return nil, fmt.Errorf("provider: forget insight: %w", err)
	}
	e := p.newEraser(userID, ReasonForgetInsight)
	e.insights[insightID] = true
	if opts.Sources {
		e.withSourcesOf = insightID
	}
	return e.run(ctx)
}

// ForgetSession forgets one session of the user — "what I said on
// Tuesday" — and everything drawn from it, before returning: its turns,
// its session document and summary, its interactions, the insights drawn
// from it alone (and whatever ForgetInsight follows from those), the
// references other insights keep to it, and the long-term profile where it
// carried them (synthesised anew). A session held open here is dropped
// first, after the background work queued so far. It fails with
// store.ErrNotFound when the user has nothing under sessionID, and
// otherwise as ForgetInsight does.
func (p *MemoryProvider) ForgetSession(ctx context.Context, userID, sessionID string) (*Receipt, error) {
	if err := agent.ValidateUserID(userID); err != nil {
		return nil, fmt.Errorf("provider: forget session: %w", err)
	}
	if err := store.CheckID("session id", sessionID); err != nil {
		return nil, fmt.Errorf("provider: forget session: %w", err)
	}
	e := p.newEraser(userID, ReasonForgetSession)
	e.sessions[sessionID] = true
	rc, err := e.run(ctx)
	if rc != nil {
		p.unmark(ctx, userID, sessionID) // it names the session
	}
	return rc, err
}

// ForgetInteraction forgets one interaction (a stored chunk of a
// conversation) and the insights drawn from it alone, with what
// ForgetInsight follows from those. The session's turns stay: they are
// the conversation's record, and ForgetSession removes them. It fails
// with store.ErrNotFound for an interaction the user does not have, and
// otherwise as ForgetInsight does.
func (p *MemoryProvider) ForgetInteraction(ctx context.Context, userID, interactionID string) (*Receipt, error) {
	if err := agent.ValidateUserID(userID); err != nil {
		return nil, fmt.Errorf("provider: forget interaction: %w", err)
	}
	if err := store.CheckID("interaction id", interactionID); err != nil {
		return nil, fmt.Errorf("provider: forget interaction: %w", err)
	}
	e := p.newEraser(userID, ReasonForgetInteraction)
	e.interactions[interactionID] = true
	return e.run(ctx)
}

// eraser is one forget call: what it was asked to remove, and what it
// found follows.
type eraser struct {
	p      *MemoryProvider
	user   string
	reason string
	rc     *Receipt

	sessions      map[string]bool // asked for, or sources of withSourcesOf
	interactions  map[string]bool
	insights      map[string]bool
	withSourcesOf string
}

func (p *MemoryProvider) newEraser(userID, reason string) *eraser {
	return &eraser{p: p, user: userID, reason: reason,
		rc:       &Receipt{UserID: userID, Reason: reason, At: p.cfg.Now().UTC()},
		sessions: map[string]bool{}, interactions: map[string]bool{}, insights: map[string]bool{}}
}

func (e *eraser) add(kind store.Kind, id, action string, count int) {
	e.rc.Items = append(e.rc.Items, erasure.Item{Kind: kind, ID: id, Action: action, Count: max(count, 1)})
}

// run makes the deletions under the user's lease, rebuilds the profile
// when it carried any of them, reloads the user's open sessions and logs
// the receipt.
func (e *eraser) run(ctx context.Context) (*Receipt, error) {
	p := e.p
	if len(e.sessions) > 0 || e.withSourcesOf != "" {
		// Queued work may belong to the session (a prune writes its
		// interactions from the turns it holds): let it finish, and drop
		// the session from memory, before its records go.
		p.dropLive(e.user, func(ls *liveSession) bool { return e.sessions[ls.ks.ID()] || e.withSourcesOf != "" })
		if err := p.queue.flush(ctx); err != nil {
			return nil, fmt.Errorf("provider: %s: waiting for background work: %w", e.reason, err)
		}
	}
	_, err := p.reflector.Forget(ctx, e.user, e.erase)
	if len(e.rc.Items) == 0 {
		if err != nil {
			return nil, fmt.Errorf("provider: %s: %w", e.reason, err)
		}
		return e.rc, nil
	}
	// What was deleted is gone, even if the call then failed (say, the
	// profile's rebuild, which leaves no profile rather than the old one):
	// the open sessions here read their blocks again (the profile or a
	// recent session's summary may have left them), the deletion is
	// logged, and the store's files are scrubbed.
	p.reloadInit(ctx, e.user)
	if err != nil {
		err = fmt.Errorf("provider: %s: %w", e.reason, err)
	}
	return e.rc, errors.Join(err, e.finish(ctx, true))
}

// CompleteForget completes a forget call that returned ErrNotLogged or
// ErrNotErased, given the Receipt it returned: it writes the call's
// deletion-log record when the receipt has none (setting rc.LogSeq and
// rc.LogHash), blanks the clear names of a user forgotten whole in the
// log, and scrubs the store's files. Each step is safe to repeat, so
// CompleteForget is too: once it has succeeded, calling it again logs
// nothing more. It fails, like the forget call, with ErrNotLogged or
// ErrNotErased for what it could not complete.
func (p *MemoryProvider) CompleteForget(ctx context.Context, rc *Receipt) error {
	if rc == nil {
		return errors.New("provider: complete forget: nil receipt")
	}
	if err := agent.ValidateUserID(rc.UserID); err != nil {
		return fmt.Errorf("provider: complete forget: %w", err)
	}
	if rc.Reason == "" {
		return errors.New("provider: complete forget: the receipt has no reason")
	}
	e := &eraser{p: p, user: rc.UserID, reason: rc.Reason, rc: rc}
	return e.finish(ctx, true)
}

// finish does what follows a forget call's deletions: it logs the receipt
// (unless it is logged already), blanks the user's clear names in the log
// after ForgetUser, and, with scrub, scrubs the store. Every step is
// tried, and each is safe to repeat.
func (e *eraser) finish(ctx context.Context, scrub bool) error {
	p := e.p
	log := p.log.With("reason", e.reason)
	if e.reason != ReasonForgetUser { // a user forgotten whole is not named in the logs either
		log = log.With("user", e.user)
	}
	var err error
	// A call that deleted nothing is logged only by ForgetUser.
	if p.dlog != nil && e.rc.LogSeq == 0 && (len(e.rc.Items) > 0 || e.reason == ReasonForgetUser) {
		// ForgetUser's record keeps no clear names: they are erased next.
		rec, lerr := p.dlog.Append(ctx, e.user, e.reason, e.rc.Items, e.reason != ReasonForgetUser)
		if lerr != nil {
			log.Error("agentmemory: deletion log", "err", lerr)
			err = fmt.Errorf("%w (%s): %w", ErrNotLogged, e.reason, lerr)
		} else {
			e.rc.LogSeq, e.rc.LogHash = rec.Seq, rec.Hash
		}
	}
	if p.dlog != nil && e.reason == ReasonForgetUser {
		if _, nerr := p.dlog.EraseNames(ctx, e.user); nerr != nil {
			log.Error("agentmemory: erase the user's names in the deletion log", "err", nerr)
			err = errors.Join(err, fmt.Errorf("%w (%s): the deletion log still names the user: %w", ErrNotErased, e.reason, nerr))
		}
	}
	if sc, ok := p.store.(scrubber); ok && scrub {
		if serr := sc.Scrub(ctx); serr != nil {
			log.Error("agentmemory: scrub the store after forgetting", "err", serr)
			err = errors.Join(err, fmt.Errorf("%w (%s): %w", ErrNotErased, e.reason, serr))
		}
	}
	return err
}

// scrubber is a store that can rewrite what deletions leave readable in
// its files (store/sqlite: full-text segments and the WAL).
type scrubber interface {
	Scrub(ctx context.Context) error
}

// erase runs under the user's lease and reports whether the profile must
// be synthesised anew.
func (e *eraser) erase(ctx context.Context) (rebuild bool, err error) {
	st, user := e.p.store, e.user
	all, err := st.ListInsights(ctx, user, store.InsightFilter{IncludeSuperseded: true})
	if err != nil {
		return false, fmt.Errorf("read insights: %w", err)
	}
	profileID := store.LongTermID(user)
	byID := make(map[string]*store.Insight, len(all))
	for _, in := range all {
		byID[in.ID] = in
	}
	for id := range e.insights {
		if id == profileID {
			if _, ok := byID[id]; !ok {
				return false, fmt.Errorf("the profile %s: %w", id, store.ErrNotFound)
			}
			if err := st.DeleteDocument(ctx, user, store.KindInsight, id); err != nil {
				return false, fmt.Errorf("delete the profile: %w", err)
			}
			e.add(store.KindInsight, id, erasure.Deleted, 1)
			return false, nil
		}
		if _, ok := byID[id]; !ok {
			return false, fmt.Errorf("insight %s: %w", id, store.ErrNotFound)
		}
	}
	if e.withSourcesOf != "" {
		for _, s := range byID[e.withSourcesOf].SessionIDs {
			e.sessions[s] = true
		}
	}

	// The conversation: every interaction of a forgotten session.
	found := len(e.insights) > 0
	for id := range e.interactions { // asked for by ForgetInteraction
		if _, err := st.GetInteraction(ctx, user, id); err != nil {
			return false, fmt.Errorf("interaction %s: %w", id, err)
		}
		found = true
	}
	for s := range e.sessions {
		docs, err := st.ListInteractions(ctx, user, store.InteractionFilter{SessionID: s})
		if err != nil {
			return false, fmt.Errorf("interactions of session %s: %w", s, err)
		}
		for _, d := range docs {
			e.interactions[d.ID] = true
			found = true
		}
	}

	// The insights that follow: drawn only from forgotten conversation,
	// merged from a forgotten insight (to any depth), or left over from an
	// earlier version's soft forget, which kept their text.
	for changed := true; changed; {
		changed = false
		for _, in := range all {
			if e.insights[in.ID] || in.ID == profileID {
				continue
			}
			if in.SupersedeReason == store.ReasonForgotten || e.drawnOnlyFromForgotten(in) ||
				slices.ContainsFunc(in.SourceInsightIDs, func(id string) bool { return e.insights[id] }) {
				e.insights[in.ID] = true
				changed = true
			}
		}
	}
	if !found {
		// Nothing asked for exists unless the session has turns alone.
		for s := range e.sessions {
			if turns, err := st.ListTurns(ctx, user, s, 0); err == nil && len(turns) > 0 {
				found = true
			} else if _, err := st.GetSession(ctx, user, s); err == nil {
				found = true
			}
		}
		if !found {
			return false, fmt.Errorf("%w: nothing stored under that id", store.ErrNotFound)
		}
	}

	// Rewrites of what stays: duplicates merged into a forgotten insight
	// come back; references to forgotten sources are dropped.
	for _, in := range all {
		if e.insights[in.ID] || in.ID == profileID {
			continue
		}
		changed := false
		if in.Superseded() && e.insights[in.SupersededBy] && in.SupersedeReason == store.ReasonDuplicate {
			in.SupersededBy, in.SupersedeReason, in.SupersededAt = "", "", time.Time{}
			in.Processed = false
			changed = true
		}
		if kept := slices.DeleteFunc(slices.Clone(in.SessionIDs), func(s string) bool { return e.sessions[s] }); len(kept) != len(in.SessionIDs) {
			in.SessionIDs, changed = kept, true
		}
		if kept := slices.DeleteFunc(slices.Clone(in.SourceInteractionIDs), func(s string) bool { return e.interactions[s] }); len(kept) != len(in.SourceInteractionIDs) {
			in.SourceInteractionIDs, changed = kept, true
		}
		if !changed {
			continue
		}
		in.UpdatedAt = e.p.cfg.Now().UTC()
		if err := st.PutInsight(ctx, user, in); err != nil {
			return false, fmt.Errorf("rewrite insight %s: %w", in.ID, err)
		}
		e.add(store.KindInsight, in.ID, erasure.Rewritten, 1)
	}

	// The deletions, derived documents first: a call cut short is repeated
	// from what it asked for, which is still there to be found.
	for _, id := range sortedKeys(e.insights) {
		err := st.DeleteDocument(ctx, user, store.KindInsight, id)
		if err != nil && !errors.Is(err, store.ErrNotFound) {
			return false, fmt.Errorf("delete insight %s: %w", id, err)
		}
		e.add(store.KindInsight, id, erasure.Deleted, 1)
	}
	for _, id := range sortedKeys(e.interactions) {
		err := st.DeleteDocument(ctx, user, store.KindInteraction, id)
		if err != nil && !errors.Is(err, store.ErrNotFound) {
			return false, fmt.Errorf("delete interaction %s: %w", id, err)
		}
		e.add(store.KindInteraction, id, erasure.Deleted, 1)
	}
	for _, s := range sortedKeys(e.sessions) {
		turns, err := st.DeleteSession(ctx, user, s)
		switch {
		case errors.Is(err, store.ErrNotFound):
			continue
		case err != nil:
			return false, fmt.Errorf("delete session %s: %w", s, err)
		}
		e.add(store.KindSessionSummary, s, erasure.Deleted, 1)
		if turns > 0 {
			e.add(store.KindTurn, s, erasure.Deleted, turns)
		}
	}

	prof := byID[profileID]
	if prof == nil {
		return false, nil
	}
	for id := range e.insights {
		if in := byID[id]; slices.Contains(prof.SourceInsightIDs, id) || (in != nil && in.Processed) {
			e.add(store.KindInsight, profileID, erasure.Rewritten, 1)
			return true, nil
		}
	}
	return false, nil
}

// drawnOnlyFromForgotten reports whether every source the insight names
// is being forgotten (an insight naming no source is not).
func (e *eraser) drawnOnlyFromForgotten(in *store.Insight) bool {
	if len(in.SourceInteractionIDs) > 0 && !slices.ContainsFunc(in.SourceInteractionIDs, func(id string) bool { return !e.interactions[id] }) {
		return true
	}
	return len(in.SessionIDs) > 0 && !slices.ContainsFunc(in.SessionIDs, func(id string) bool { return !e.sessions[id] })
}

func sortedKeys(m map[string]bool) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// dropLive removes the user's live sessions that match from memory (their
// state is in the store).
func (p *MemoryProvider) dropLive(userID string, match func(*liveSession) bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	var drop []string
	p.live.each(func(key string, ls *liveSession) {
		if ls.ks.UserID() == userID && match(ls) {
			drop = append(drop, key)
			if ls.timer != nil {
				ls.timer.Stop()
			}
		}
	})
	for _, k := range drop {
		p.live.remove(k)
	}
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
// session with its turns, interaction, insight (superseded ones
// included), the profile and the user state. It drops the user's live
// sessions held by this provider, waits for the background work queued so
// far (which may belong to the user) and then deletes under the user's
// lease, so that a reflection of the user running in another process on
// the same store finishes first and writes nothing after. The receipt counts
// what went by kind; the deletion-log record it appends names the user
// only by the keyed hash, and the clear names of the user's earlier
// records are blanked. A run for the user still in flight may store its
// turn after this returns: call it when the user has no run going.
//
// It fails with a nil Receipt when nothing was deleted, with
// ErrNotLogged when the user was deleted but the record not written, and
// with ErrNotErased when the record was written but the user's bytes may
// still be in the store's files (store/sqlite: readers kept the WAL from
// being truncated) or the log's clear names were not blanked;
// CompleteForget with the receipt completes both, and so does calling
// ForgetUser again (which also logs a second record, of nothing deleted).
func (p *MemoryProvider) ForgetUser(ctx context.Context, userID string) (*Receipt, error) {
	if err := agent.ValidateUserID(userID); err != nil {
		return nil, fmt.Errorf("provider: forget user: %w", err)
	}
	p.dropLive(userID, func(*liveSession) bool { return true })
	p.mu.Lock()
	var drop []string
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
	if err := p.queue.flush(ctx); err != nil {
		return nil, fmt.Errorf("provider: forget user: waiting for background work: %w", err)
	}
	e := p.newEraser(userID, ReasonForgetUser)
	// Under the user's lease, so that a reflection of the user running in
	// another process finishes before the delete and cannot write after
	// it. The lease lives in the user's state, which DeleteUser removes;
	// its release then finds nothing to clear.
	_, err := p.reflector.Forget(ctx, userID, func(ctx context.Context) (bool, error) {
		if err := e.countAll(ctx); err != nil {
			return false, err
		}
		// The markers of the user's sessions with work outstanding
		// (another partition) name the user: they go first, scrubbed
		// with the rest.
		if err := p.unmarkUser(ctx, userID); err != nil {
			return false, err
		}
		return false, p.store.DeleteUser(ctx, userID)
	})
	// DeleteUser scrubs the store itself; when only that failed, the user
	// is deleted, and finish scrubs again.
	notScrubbed := errors.Is(err, store.ErrNotScrubbed)
	if err != nil && !notScrubbed {
		return nil, fmt.Errorf("provider: forget user: %w", err)
	}
	if err := e.finish(ctx, notScrubbed); err != nil {
		return e.rc, err
	}
	return e.rc, nil
}

// countAll fills the receipt of ForgetUser with what the user has, by
// kind (ids are not listed: a user may have many thousands).
func (e *eraser) countAll(ctx context.Context) error {
	st, user := e.p.store, e.user
	sessions, err := st.ListSessions(ctx, user, store.SessionFilter{})
	if err != nil {
		return fmt.Errorf("count sessions: %w", err)
	}
	turns := 0
	for _, s := range sessions {
		ts, err := st.ListTurns(ctx, user, s.ID, 0)
		if err != nil {
			return fmt.Errorf("count turns: %w", err)
		}
		turns += len(ts)
	}
	interactions, err := st.ListInteractions(ctx, user, store.InteractionFilter{})
	if err != nil {
		return fmt.Errorf("count interactions: %w", err)
	}
	insights, err := st.ListInsights(ctx, user, store.InsightFilter{IncludeSuperseded: true})
	if err != nil {
		return fmt.Errorf("count insights: %w", err)
	}
	for _, c := range []struct {
		kind store.Kind
		n    int
	}{{store.KindSessionSummary, len(sessions)}, {store.KindTurn, turns}, {store.KindInteraction, len(interactions)}, {store.KindInsight, len(insights)}} {
		if c.n > 0 {
			e.add(c.kind, "", erasure.Deleted, c.n)
		}
	}
	return nil
}

// DeletionLog returns the store's deletion log (to verify it, or to read
// a user's keyed hash), or nil when the store keeps none.
func (p *MemoryProvider) DeletionLog() *erasure.Log { return p.dlog }
