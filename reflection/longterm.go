package reflection

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/agentmemory/agentmemory/prompts"
	"github.com/agentmemory/agentmemory/store"
)

// ProfileResult is what a long-term reflection did.
type ProfileResult struct {
	// Profile is the profile document as stored; nil when there was
	// nothing to fold in and no profile yet.
	Profile *store.Insight
	// Folded are the ids of the session insights folded in (now marked
	// processed).
	Folded []string
	// Remaining counts unprocessed insights left for a later call
	// (beyond Config.ProfileBatch).
	Remaining int
}

// ReflectLongTerm folds the user's unprocessed session insights (the
// oldest Config.ProfileBatch) into the long-term profile: the model
// rewrites the current profile with them, more recent statements winning
// over older ones. The profile is stored (id store.LongTermID(userID),
// its SourceInsightIDs extended), then each insight folded in is marked
// processed. With no unprocessed insight nothing changes. A failure before
// the profile is written changes nothing; one after it leaves some
// insights unprocessed, to be folded in again by the next call.
func (r *Reflector) ReflectLongTerm(ctx context.Context, userID string) (*ProfileResult, error) {
	unlock, err := r.lock(ctx, userID)
	if err != nil {
		return nil, err
	}
	defer unlock()
	return r.reflectLongTerm(ctx, userID)
}

// RebuildLongTerm synthesises the user's long-term profile anew from the
// active session insights alone, as if none had been folded in yet: after
// an insight is forgotten, nothing it said survives in the profile. The
// old profile is deleted first, then every active insight is folded in
// again, batch after batch. With no active insight the user is left with
// no profile. A failure midway leaves no profile and the insights
// unprocessed, so the next ReflectLongTerm finishes the rebuild; the
// forgotten content never returns.
func (r *Reflector) RebuildLongTerm(ctx context.Context, userID string) (*ProfileResult, error) {
	unlock, err := r.lock(ctx, userID)
	if err != nil {
		return nil, err
	}
	defer unlock()
	return r.rebuildLongTerm(ctx, userID)
}

// Forget runs erase under the user's lease, so that no reflection,
// reconciliation or profile update of the user interleaves with it (in
// this process or another), and then, when erase reports that the profile
// carried something it removed, rebuilds the profile as RebuildLongTerm
// does before letting go. The result is nil when no rebuild ran.
func (r *Reflector) Forget(ctx context.Context, userID string, erase func(ctx context.Context) (rebuild bool, err error)) (*ProfileResult, error) {
	unlock, err := r.lock(ctx, userID)
	if err != nil {
		return nil, err
	}
	defer unlock()
	rebuild, err := erase(ctx)
	if err != nil || !rebuild {
		return nil, err
	}
	return r.rebuildLongTerm(ctx, userID)
}

func (r *Reflector) rebuildLongTerm(ctx context.Context, userID string) (*ProfileResult, error) {
	err := r.st.DeleteDocument(ctx, userID, store.KindInsight, store.LongTermID(userID))
	if err != nil && !errors.Is(err, store.ErrNotFound) {
		return nil, fmt.Errorf("reflection: delete profile: %w", err)
	}
	folded, err := r.st.ListInsights(ctx, userID, store.InsightFilter{Type: store.InsightSession, Processed: ptr(true)})
	if err != nil {
		return nil, fmt.Errorf("reflection: processed insights: %w", err)
	}
	for _, in := range folded {
		in.Processed = false
		if err := r.st.PutInsight(ctx, userID, in); err != nil {
			return nil, fmt.Errorf("reflection: unmark insight %s: %w", in.ID, err)
		}
	}
	all := &ProfileResult{}
	for {
		res, err := r.reflectLongTerm(ctx, userID)
		if err != nil {
			return all, err
		}
		all.Profile = res.Profile
		all.Folded = append(all.Folded, res.Folded...)
		if res.Remaining == 0 || len(res.Folded) == 0 {
			all.Remaining = res.Remaining
			return all, nil
		}
	}
}

func (r *Reflector) reflectLongTerm(ctx context.Context, userID string) (*ProfileResult, error) {
	res := &ProfileResult{}
	base, err := r.st.GetInsight(ctx, userID, store.LongTermID(userID))
	switch {
	case errors.Is(err, store.ErrNotFound):
		base = nil
	case err != nil:
		return nil, fmt.Errorf("reflection: profile: %w", err)
	}
	res.Profile = base
	todo, err := r.st.ListInsights(ctx, userID, store.InsightFilter{Type: store.InsightSession, Processed: ptr(false)})
	if err != nil {
		return nil, fmt.Errorf("reflection: unprocessed insights: %w", err)
	}
	if len(todo) == 0 {
		return res, nil
	}
	slices.SortStableFunc(todo, chronological)
	if len(todo) > r.cfg.ProfileBatch {
		res.Remaining = len(todo) - r.cfg.ProfileBatch
		todo = todo[:r.cfg.ProfileBatch]
	}
	lines := make([]prompts.InsightLine, len(todo))
	for i, in := range todo {
		lines[i] = lineOf(i, in)
	}
	baseline := ""
	if base != nil {
		baseline = base.InsightText
	}
	req, err := r.cfg.Prompts.ProfileSynthesis(baseline, lines)
	if err != nil {
		return nil, fmt.Errorf("reflection: %w", err)
	}
	text, err := complete(ctx, r, "profile synthesis", req.Request(), prompts.ParseProfile)
	if err != nil {
		return nil, err
	}
	vecs, err := r.embedTexts(ctx, []string{text})
	if err != nil {
		return nil, err
	}
	now := r.cfg.Now().UTC()
	prof := &store.Insight{
		ID:             store.LongTermID(userID),
		InsightType:    store.InsightLongTerm,
		InsightText:    text,
		InsightVector:  vecs[0],
		CreatedAt:      now,
		UpdatedAt:      now,
		EmbeddingModel: r.cfg.Embedder.Model(),
	}
	if base != nil {
		prof.CreatedAt = base.CreatedAt
		prof.SourceInsightIDs = base.SourceInsightIDs
		prof.SessionIDs = base.SessionIDs
	}
	for _, in := range todo {
		prof.SourceInsightIDs = union(prof.SourceInsightIDs, []string{in.ID})
		prof.SessionIDs = union(prof.SessionIDs, in.SessionIDs)
	}
	if err := r.st.PutInsight(ctx, userID, prof); err != nil {
		return nil, fmt.Errorf("reflection: store profile: %w", err)
	}
	res.Profile = prof
	for _, in := range todo {
		// Read again: a reconciliation may have superseded it meanwhile,
		// and a whole-document write must not undo that.
		cur, err := r.st.GetInsight(ctx, userID, in.ID)
		if errors.Is(err, store.ErrNotFound) {
			continue
		}
		if err != nil {
			return res, fmt.Errorf("reflection: mark insight %s processed: %w", in.ID, err)
		}
		if !cur.Superseded() && !cur.Processed {
			cur.Processed = true
			cur.UpdatedAt = now
			if err := r.st.PutInsight(ctx, userID, cur); err != nil {
				return res, fmt.Errorf("reflection: mark insight %s processed: %w", in.ID, err)
			}
		}
		res.Folded = append(res.Folded, in.ID)
	}
	r.cfg.Logger.InfoContext(ctx, "memory: long-term profile updated", "user", userID, "folded", len(res.Folded), "remaining", res.Remaining, "chars", len(text))
	return res, nil
}

// chronological orders insights oldest first; those of one reflection
// (the same CreatedAt) the more important first, then by text, so that
// prompts do not depend on ids.
func chronological(a, b *store.Insight) int {
	if c := a.CreatedAt.Compare(b.CreatedAt); c != 0 {
		return c
	}
	if c := importanceRank[b.Importance] - importanceRank[a.Importance]; c != 0 {
		return c
	}
	return strings.Compare(a.InsightText, b.InsightText)
}

// lineOf shows insight in as the i-th line of a prompt.
func lineOf(i int, in *store.Insight) prompts.InsightLine {
	l := prompts.InsightLine{Label: "i" + strconv.Itoa(i+1), Date: in.CreatedAt, Category: in.Category, Text: in.InsightText}
	if in.Confidence != nil {
		l.Confidence = *in.Confidence
	}
	return l
}
