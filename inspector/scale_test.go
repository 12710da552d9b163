package inspector_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agentmemory/agentmemory/internal/longtest"
	"github.com/agentmemory/agentmemory/provider"
	"github.com/agentmemory/agentmemory/store"
)

// The size of the scope the page latencies are measured at.
const (
	bigInteractions = 10_000
	bigPerSession   = 20 // interactions (of two turns each) per session
	bigInsights     = 300
)

// bigScope fills scope "big" of memory store "alpha" directly in the
// store: bigInteractions interactions in sessions of bigPerSession, with
// their turns; bigInsights insights, a third of them superseded, the
// profile folding in fifty; and a forgotten insight in the deletion log.
// It returns the paths of the scope's pages, one of each kind, and a page
// of each list that starts in its middle (as an "older" link does).
func bigScope(tb testing.TB, r *rig) map[string]string {
	tb.Helper()
	ctx := context.Background()
	require.NoError(tb, r.createStore(keyAll, "alpha"))
	g, err := r.svc.OpenStore(ctx, "alpha")
	require.NoError(tb, err)
	require.NoError(tb, g.NoteScope(ctx, "big"))
	u := g.UserID("big")
	st := r.st
	start := time.Date(2026, 1, 1, 9, 0, 0, 0, time.UTC)
	// The SQLite store commits concurrent writes in groups: the sessions
	// are written by parallel writers.
	n := bigInteractions / bigPerSession
	sessions := make([]string, n)
	interactions := make([]string, 0, bigInteractions)
	for i := range n {
		sessions[i] = fmt.Sprintf("sess-%04d", i)
		for j := range bigPerSession {
			interactions = append(interactions, store.ChunkID(sessions[i], 2*j+1))
		}
	}
	errs := make(chan error, len(sessions))
	sem := make(chan struct{}, 32)
	for i, sid := range sessions {
		sem <- struct{}{}
		go func() {
			defer func() { <-sem }()
			errs <- fillSession(ctx, st, u, sid, i, start.Add(time.Duration(i)*time.Hour))
		}()
	}
	for range sessions {
		require.NoError(tb, <-errs)
	}
	conf := 0.8
	var insightIDs, folded []string
	for i := range bigInsights {
		id := fmt.Sprintf("ins-%04d", i)
		insightIDs = append(insightIDs, id)
		at := start.Add(time.Duration(i) * 3 * time.Hour)
		require.NoError(tb, st.PutInsight(ctx, u, &store.Insight{ID: id, InsightType: store.InsightSession, SessionIDs: []string{sessions[i%len(sessions)]},
			InsightText: fmt.Sprintf("Fact %d: the user budgets monthly for cello lessons.", i), Confidence: &conf, Importance: "medium", Category: "preference",
			ReflectionFlag: store.FlagInsight, Processed: i < 50, SourceInteractionIDs: []string{interactions[i*bigPerSession%len(interactions)]},
			CreatedAt: at, UpdatedAt: at}))
		if i < 50 {
			folded = append(folded, id)
		}
	}
	for i := 100; i < 200; i++ {
		require.NoError(tb, st.SupersedeInsight(ctx, u, insightIDs[i], store.Supersession{By: insightIDs[i+100], Reason: store.ReasonDuplicate}))
	}
	require.NoError(tb, st.PutInsight(ctx, u, &store.Insight{ID: store.LongTermID(u), InsightType: store.InsightLongTerm,
		InsightText: "The user budgets monthly and takes cello lessons.", SourceInsightIDs: folded, CreatedAt: start, UpdatedAt: start}))
	p, err := g.Provider()
	require.NoError(tb, err)
	rc, err := p.ForgetInsight(ctx, u, insightIDs[bigInsights-1], provider.ForgetOptions{})
	require.NoError(tb, g.SettleForget(ctx, rc, err))

	base := "/inspector/s/alpha/big"
	// Older pages start after a row in the middle of each list, named as
	// the pages' own links name it.
	mid := n / 2
	older := func(at time.Time, id string, more url.Values) string {
		q := url.Values{"before": {at.Format(time.RFC3339Nano)}, "id": {id}}
		for k, v := range more {
			q[k] = v
		}
		return "?" + q.Encode()
	}
	midAt := start.Add(time.Duration(mid) * time.Hour)
	return map[string]string{
		"index":              "/inspector/",
		"store":              "/inspector/s/alpha/",
		"overview":           base + "/",
		"insights":           base + "/insights",
		"insights-older":     base + "/insights" + older(start.Add(150*3*time.Hour), insightIDs[150], nil),
		"insight":            base + "/insights/" + insightIDs[150],
		"sessions":           base + "/sessions",
		"sessions-older":     base + "/sessions" + older(midAt, sessions[mid], nil),
		"session":            base + "/sessions/" + sessions[len(sessions)/2], // a tenth, with its turns
		"interactions":       base + "/interactions",
		"interactions-older": base + "/interactions" + older(midAt, store.ChunkID(sessions[mid], 1), url.Values{"turn": {"1"}}),
		"interaction":        base + "/interactions/" + interactions[len(interactions)/2],
		"search":             base + "/search?q=" + url.QueryEscape("how do I budget for the cello?"),
		"updates":            base + "/updates",
		"deletions":          base + "/deletions",
		"receipt":            base + "/deletions/" + fmt.Sprint(rc.LogSeq),
	}
}

// fillSession writes session sid (the i-th) of user u, beginning at at,
// with its bigPerSession interactions; every tenth session with its turns
// too (the session page shows one of those).
func fillSession(ctx context.Context, st store.Store, u, sid string, i int, at time.Time) error {
	if err := st.PutSession(ctx, u, &store.Session{ID: sid, StartTime: at, EndTime: at.Add(30 * time.Minute),
		Summary: fmt.Sprintf("Session %d: the user talked about their budget and the cello.", i), KeyTopics: []string{"budget", "cello"},
		Status: store.SessionCompleted, ReflectionStatus: store.ReflectionProcessed, UpdatedAt: at.Add(30 * time.Minute)}); err != nil {
		return err
	}
	for j := range bigPerSession {
		first := 2*j + 1
		when := at.Add(time.Duration(j) * time.Minute)
		var ids []string
		for k := range 2 {
			id := fmt.Sprintf("%s-t%d", sid, first+k)
			ids = append(ids, id+"-m")
			if i%10 != 0 {
				continue
			}
			if err := st.AppendTurn(ctx, u, &store.Turn{ID: id, SessionID: sid, Seq: first + k, Time: when,
				Messages: []store.TurnMessage{{ID: id + "-m", Role: "user", Content: fmt.Sprintf("Message %d of session %d about my monthly budget.", first+k, i)}}}); err != nil {
				return err
			}
		}
		if err := st.PutInteraction(ctx, u, &store.Interaction{ID: store.ChunkID(sid, first), SessionID: sid, Timestamp: when, FirstTurn: first, LastTurn: first + 1,
			TurnIDs: ids, Content: fmt.Sprintf("user: turns %d and %d of session %d about my monthly budget", first, first+1, i),
			Summary: "the monthly budget", Metadata: store.Metadata{MentionedTopics: []string{"budget"}, Entities: []string{"cello"}}}); err != nil {
			return err
		}
	}
	return nil
}

// pageNames lists the pages measured, in order.
func pageNames(pages map[string]string) []string {
	names := make([]string, 0, len(pages))
	for n := range pages {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// BenchmarkInspectorPages measures each page of a scope of 10,000
// interactions (bigScope), over real HTTP, signed in.
func BenchmarkInspectorPages(b *testing.B) {
	r := keyed(b)
	pages := bigScope(b, r)
	c := newClient(b)
	signIn(b, r, c)
	for _, name := range pageNames(pages) {
		b.Run(name, func(b *testing.B) {
			for b.Loop() {
				getOK(b, c, r.srv.URL+pages[name])
			}
		})
	}
}

// TestInspectorPagesAtScale checks that every page of a scope of 10,000
// interactions answers in under 100 ms (the median of five), in the long
// mode; under the race detector, which slows everything several times,
// in under a second.
func TestInspectorPagesAtScale(t *testing.T) {
	if !longtest.Enabled(t) {
		t.Skipf("the long mode (%s=1) fills a scope of %d interactions and times each page", longtest.Env, bigInteractions)
	}
	r := keyed(t)
	fill := time.Now()
	pages := bigScope(t, r)
	t.Logf("filled a scope of %d interactions in %v", bigInteractions, time.Since(fill).Round(time.Millisecond))
	c := newClient(t)
	signIn(t, r, c)
	limit := 100 * time.Millisecond
	if raceEnabled {
		limit = time.Second
	}
	for _, name := range pageNames(pages) {
		var took []time.Duration
		for range 5 {
			start := time.Now()
			getOK(t, c, r.srv.URL+pages[name])
			took = append(took, time.Since(start))
		}
		slices.Sort(took)
		t.Logf("%-18s median %6.1f ms  max %6.1f ms", name, ms(took[2]), ms(took[4]))
		if took[2] > limit {
			t.Errorf("page %s: median %v, over %v", name, took[2], limit)
		}
	}
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// signIn signs client c in with keyAll.
func signIn(tb testing.TB, r *rig, c *http.Client) {
	tb.Helper()
	req, err := http.NewRequest("POST", r.srv.URL+"/inspector/sign-in", strings.NewReader(url.Values{"key": {keyAll}}.Encode()))
	require.NoError(tb, err)
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	resp, err := c.Do(req)
	require.NoError(tb, err)
	resp.Body.Close()
	require.Equal(tb, http.StatusSeeOther, resp.StatusCode)
}

// getOK gets url with c, requiring a 200, and reads the whole page.
func getOK(tb testing.TB, c *http.Client, u string) {
	tb.Helper()
	resp, err := c.Get(u)
	require.NoError(tb, err)
	defer resp.Body.Close()
	n, err := io.Copy(io.Discard, resp.Body)
	require.NoError(tb, err)
	require.Equal(tb, http.StatusOK, resp.StatusCode, "%s (%d bytes)", u, n)
}
