package mcpserver

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/agentmemory/agentmemory/retrieval"
	"github.com/agentmemory/agentmemory/store"
)

func (h *handlers) retrieve(ctx context.Context, in queryIn) (factsOut, error) {
	q := strings.TrimSpace(in.Query)
	if q == "" {
		return factsOut{}, errors.New("query is empty: say what to look for")
	}
	a := h.mem.Retriever().Retrieve(ctx, h.user, q, false)
	if a.Err != nil {
		return factsOut{}, fmt.Errorf("memory retrieval failed: %w", a.Err)
	}
	return factsOut{Answer: a.Text}, nil
}

func (h *handlers) search(ctx context.Context, in searchIn) (searchOut, error) {
	q := strings.TrimSpace(in.Query)
	if q == "" {
		return searchOut{}, errors.New("query is empty: say what to look for")
	}
	// top_k and kinds are within their schema: addTool checked them.
	opts := retrieval.SearchOptions{TopK: in.TopK}
	for _, k := range in.Kinds {
		opts.Kinds = append(opts.Kinds, store.Kind(k))
	}
	ms, err := h.mem.Retriever().Search(ctx, h.user, q, opts)
	if err != nil {
		return searchOut{}, fmt.Errorf("memory search failed: %w", err)
	}
	out := searchOut{Documents: []Document{}}
	for _, m := range ms {
		out.Documents = append(out.Documents, Document{Kind: string(m.Kind), ID: m.ID, SessionID: m.SessionID, Date: date(m.Time),
			Text: m.Text, Summary: m.Summary, TurnIDs: m.TurnIDs, Score: m.Score})
	}
	return out, nil
}

func (h *handlers) userContext(ctx context.Context, _ empty) (userContextOut, error) {
	out := userContextOut{RecentSessions: []Session{}}
	p, err := h.st.GetInsight(ctx, h.user, store.LongTermID(h.user))
	switch {
	case err == nil:
		out.Profile, out.ProfileUpdated = p.InsightText, date(p.UpdatedAt)
	case !errors.Is(err, store.ErrNotFound):
		return out, fmt.Errorf("reading the profile failed: %w", err)
	}
	ss, err := h.st.ListSessions(ctx, h.user, store.SessionFilter{Status: store.SessionCompleted, Limit: h.recent})
	if err != nil {
		return out, fmt.Errorf("reading recent sessions failed: %w", err)
	}
	for _, s := range ss {
		if s.Summary != "" {
			out.RecentSessions = append(out.RecentSessions, Session{ID: s.ID, Date: date(s.StartTime), Summary: s.Summary})
		}
	}
	return out, nil
}

func (h *handlers) listInsights(ctx context.Context, in listIn) (listOut, error) {
	ins, err := h.st.ListInsights(ctx, h.user, store.InsightFilter{Type: store.InsightSession, Category: strings.TrimSpace(in.Category)})
	if err != nil {
		return listOut{}, fmt.Errorf("listing insights failed: %w", err)
	}
	out := listOut{Insights: []Insight{}}
	for _, in := range ins {
		it := Insight{ID: in.ID, Category: in.Category, Text: in.InsightText, Importance: in.Importance, Date: date(in.CreatedAt), SessionIDs: in.SessionIDs}
		if in.Confidence != nil {
			it.Confidence = *in.Confidence
		}
		out.Insights = append(out.Insights, it)
	}
	return out, nil
}

func date(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format("2006-01-02")
}
