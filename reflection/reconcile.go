package reflection

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/agentmemory/agentmemory/prompts"
	"github.com/agentmemory/agentmemory/store"
)

// ReconcileResult is what a reconciliation did.
type ReconcileResult struct {
	// Pool is the number of insights examined.
	Pool int
	// Kept is the number of active insights of the pool afterwards,
	// counting each merged insight once.
	Kept int
	// Merged counts the merged insights written, one per duplicate group.
	Merged int
	// Duplicates counts the insights superseded as duplicates (exact ones,
	// found by content hash, and those the model grouped).
	Duplicates int
	// Contradicted counts the insights superseded by a more recent one.
	Contradicted int
	// MergedIDs are the ids of the merged insights.
	MergedIDs []string
	// ProfileRebuilt reports that the long-term profile was synthesised
	// anew because it had folded in an insight a contradiction superseded.
	ProfileRebuilt bool
}

// Reconcile examines the user's Config.ReconcilePool most recent active
// session insights. Insights with the same content hash are exact
// duplicates: the oldest stays, the others are superseded by it. The rest
// are shown to the model at once, which names groups of duplicates (with a
// merged text) and of contradictions:
//
//   - each duplicate group becomes one new insight (the merged text, or
//     the newest member's when the model gave none; the newest member's
//     category; the highest confidence and importance; the union of the
//     sessions and sources; SourceInsightIDs naming the members; processed
//     when every member was), and the
//     members are superseded by it with reason "duplicate";
//   - in each contradiction group the most recent insight wins (the more
//     confident at equal dates, then the greater id), and the others are
//     superseded by it with reason "contradict"; when the long-term
//     profile had folded one of those in, it is synthesised anew from the
//     insights still active (as RebuildLongTerm does), so that the
//     superseded text leaves it.
//
// Superseded insights stay stored: store.InsightFilter.IncludeSuperseded
// reads them back with the reason, the winner and the time. Reconcile is
// safe to repeat: a merged insight's id is derived from its members.
func (r *Reflector) Reconcile(ctx context.Context, userID string) (*ReconcileResult, error) {
	unlock, err := r.lock(ctx, userID)
	if err != nil {
		return nil, err
	}
	defer unlock()
	pool, err := r.st.ListInsights(ctx, userID, store.InsightFilter{Type: store.InsightSession, Limit: r.cfg.ReconcilePool})
	if err != nil {
		return nil, fmt.Errorf("reflection: reconcile pool: %w", err)
	}
	slices.SortStableFunc(pool, chronological)
	res := &ReconcileResult{Pool: len(pool)}
	now := r.cfg.Now().UTC()

	// Exact duplicates need no model.
	byHash := make(map[string]*store.Insight)
	var rest []*store.Insight
	for _, in := range pool {
		h := in.ContentHash
		if h == "" {
			h = store.ContentHash(in.InsightText)
		}
		if first, ok := byHash[h]; ok {
			if err := r.supersede(ctx, userID, in.ID, first.ID, store.ReasonDuplicate, now); err != nil {
				return res, err
			}
			res.Duplicates++
			continue
		}
		byHash[h] = in
		rest = append(rest, in)
	}
	res.Kept = len(rest)
	if len(rest) < 2 {
		return res, nil
	}

	lines := make([]prompts.InsightLine, len(rest))
	labels := make([]string, len(rest))
	byLabel := make(map[string]*store.Insight, len(rest))
	for i, in := range rest {
		lines[i] = lineOf(i, in)
		labels[i] = lines[i].Label
		byLabel[labels[i]] = in
	}
	req, err := r.cfg.Prompts.Reconcile(lines)
	if err != nil {
		return res, fmt.Errorf("reflection: %w", err)
	}
	out, err := complete(ctx, r, "reconcile", req.Request(), func(b []byte) (prompts.ReconcileResult, error) {
		return prompts.ParseReconcile(b, labels)
	})
	if err != nil {
		return res, err
	}

	for _, g := range out.Duplicates {
		members := make([]*store.Insight, len(g.Labels))
		for i, l := range g.Labels {
			members[i] = byLabel[l]
		}
		merged, err := r.merge(ctx, userID, members, g.Merged, now)
		if err != nil {
			return res, err
		}
		for _, m := range members {
			if err := r.supersede(ctx, userID, m.ID, merged.ID, store.ReasonDuplicate, now); err != nil {
				return res, err
			}
		}
		res.Merged++
		res.Duplicates += len(members)
		res.Kept -= len(members) - 1
		res.MergedIDs = append(res.MergedIDs, merged.ID)
	}
	stale := false // the profile folded in an insight now contradicted
	for _, g := range out.Contradictions {
		members := make([]*store.Insight, len(g))
		for i, l := range g {
			members[i] = byLabel[l]
		}
		win := slices.MaxFunc(members, newer)
		for _, m := range members {
			if m == win {
				continue
			}
			if err := r.supersede(ctx, userID, m.ID, win.ID, store.ReasonContradict, now); err != nil {
				return res, err
			}
			stale = stale || m.Processed
			res.Contradicted++
			res.Kept--
		}
	}
	r.cfg.Logger.InfoContext(ctx, "memory: insights reconciled", "user", userID, "pool", res.Pool, "kept", res.Kept,
		"merged", res.Merged, "duplicates", res.Duplicates, "contradicted", res.Contradicted)
	if stale {
		// The superseded text must leave the profile, which would
		// otherwise keep it whatever the winner says.
		if _, err := r.rebuildLongTerm(ctx, userID); err != nil {
			return res, fmt.Errorf("reflection: reconcile: rebuild the profile without the contradicted insights: %w", err)
		}
		res.ProfileRebuilt = true
	}
	return res, nil
}

// newer orders insights by recency, then confidence, then id.
func newer(a, b *store.Insight) int {
	if c := a.CreatedAt.Compare(b.CreatedAt); c != 0 {
		return c
	}
	ca, cb := confidence(a), confidence(b)
	switch {
	case ca < cb:
		return -1
	case ca > cb:
		return 1
	}
	return strings.Compare(a.ID, b.ID)
}

func confidence(in *store.Insight) float64 {
	if in.Confidence == nil {
		return 0
	}
	return *in.Confidence
}

var importanceRank = map[string]int{"low": 1, "medium": 2, "high": 3}

// merge writes the insight that replaces a group of duplicates.
func (r *Reflector) merge(ctx context.Context, userID string, members []*store.Insight, text string, now time.Time) (*store.Insight, error) {
	newest := slices.MaxFunc(members, newer)
	if text == "" {
		text = newest.InsightText
	}
	ids := make([]string, len(members))
	for i, m := range members {
		ids[i] = m.ID
	}
	sorted := slices.Clone(ids)
	slices.Sort(sorted)
	m := &store.Insight{
		ID:               insightID("ins-merged-", append([]string{userID}, sorted...)...),
		InsightType:      store.InsightSession,
		InsightText:      text,
		Category:         newest.Category,
		ReflectionFlag:   store.FlagInsight,
		SourceInsightIDs: ids,
		Processed:        true,
		CreatedAt:        newest.CreatedAt,
		UpdatedAt:        now,
		EmbeddingModel:   r.cfg.Embedder.Model(),
	}
	conf := 0.0
	for _, x := range members {
		m.SessionIDs = union(m.SessionIDs, x.SessionIDs)
		m.SourceInteractionIDs = union(m.SourceInteractionIDs, x.SourceInteractionIDs)
		conf = max(conf, confidence(x))
		if importanceRank[x.Importance] > importanceRank[m.Importance] {
			m.Importance = x.Importance
		}
		m.Processed = m.Processed && x.Processed
	}
	m.Confidence = &conf
	vecs, err := r.embedTexts(ctx, []string{text})
	if err != nil {
		return nil, err
	}
	m.InsightVector = vecs[0]
	if err := r.st.PutInsight(ctx, userID, m); err != nil {
		return nil, fmt.Errorf("reflection: store merged insight: %w", err)
	}
	return m, nil
}

func (r *Reflector) supersede(ctx context.Context, userID, id, by string, reason store.SupersedeReason, at time.Time) error {
	if err := r.st.SupersedeInsight(ctx, userID, id, store.Supersession{By: by, Reason: reason, At: at}); err != nil {
		return fmt.Errorf("reflection: supersede insight %s (%s): %w", id, reason, err)
	}
	return nil
}
