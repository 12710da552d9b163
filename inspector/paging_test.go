package inspector_test

import (
	"cmp"
	"context"
	"fmt"
	"html"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentmemory/agentmemory/store"
)

// tiedScope fills scope sc of memory store "alpha" directly in the
// store with eight sessions, eight interactions and eight insights whose
// times tie: with the rigs' page size of 3, a page ends among items of
// one time, and one time's items fill more than a page. It returns the
// ids of each kind in the order the pages list them, newest first, and
// the times.
func tiedScope(tb testing.TB, r *rig, sc string) (sessions, interactions, insights []string, times []time.Time) {
	tb.Helper()
	ctx := context.Background()
	require.NoError(tb, r.createStore(keyAll, "alpha"))
	g, err := r.svc.OpenStore(ctx, "alpha")
	require.NoError(tb, err)
	require.NoError(tb, g.NoteScope(ctx, sc))
	u := g.UserID(sc)
	st := r.st
	t0 := time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)
	times = []time.Time{t0, t0.Add(time.Hour), t0.Add(2 * time.Hour)}
	// Each kind's items by time: one at times[0], five at times[1], two
	// at times[2].
	at := []int{0, 1, 1, 1, 1, 1, 2, 2}

	type sess struct {
		id string
		at time.Time
	}
	var ss []sess
	for i, k := range at {
		// Ids out of time order, so that only the pages' order sorts them.
		s := sess{id: fmt.Sprintf("tied-s%d", (i*5)%8), at: times[k]}
		ss = append(ss, s)
		require.NoError(tb, st.PutSession(ctx, u, &store.Session{ID: s.id, StartTime: s.at, EndTime: s.at.Add(time.Minute),
			Summary: "Session " + s.id, Status: store.SessionCompleted, UpdatedAt: s.at}))
	}
	slices.SortFunc(ss, func(a, b sess) int { // newest first: by StartTime, then ID, descending
		return cmp.Or(b.at.Compare(a.at), strings.Compare(b.id, a.id))
	})
	for _, s := range ss {
		sessions = append(sessions, s.id)
	}

	// Interactions written in one prune share a time; their first turns
	// tie too across sessions.
	type inter struct {
		id    string
		at    time.Time
		first int
	}
	var its []inter
	for i, k := range at {
		sid := ss[i%3].id
		first := 1 + 2*(i%2)
		x := inter{id: store.ChunkID(sid, first), at: times[k], first: first}
		if slices.ContainsFunc(its, func(o inter) bool { return o.id == x.id }) {
			first += 10
			x = inter{id: store.ChunkID(sid, first), at: times[k], first: first}
		}
		its = append(its, x)
		require.NoError(tb, st.PutInteraction(ctx, u, &store.Interaction{ID: x.id, SessionID: sid, Timestamp: x.at,
			FirstTurn: first, LastTurn: first + 1, Content: "user: interaction " + x.id}))
	}
	slices.SortFunc(its, func(a, b inter) int { // newest first: by Timestamp, FirstTurn, ID, descending
		return cmp.Or(b.at.Compare(a.at), cmp.Compare(b.first, a.first), strings.Compare(b.id, a.id))
	})
	for _, x := range its {
		interactions = append(interactions, x.id)
	}

	type ins struct {
		id string
		at time.Time
	}
	var xs []ins
	conf := 0.9
	for i, k := range at {
		x := ins{id: fmt.Sprintf("tied-i%d", (i*3)%8), at: times[k]}
		xs = append(xs, x)
		require.NoError(tb, st.PutInsight(ctx, u, &store.Insight{ID: x.id, InsightType: store.InsightSession, SessionIDs: []string{ss[0].id},
			InsightText: "Insight " + x.id, Confidence: &conf, Importance: "medium", Category: "preference",
			ReflectionFlag: store.FlagInsight, CreatedAt: x.at, UpdatedAt: x.at}))
	}
	slices.SortFunc(xs, func(a, b ins) int { // newest first: by CreatedAt, then ID, descending
		return cmp.Or(b.at.Compare(a.at), strings.Compare(b.id, a.id))
	})
	for _, x := range xs {
		insights = append(insights, x.id)
	}
	return sessions, interactions, insights, times
}

// walk reads a list page and every older page its "Older" link leads
// to, returning the ids of the rows (links of class class) in order.
func walk(t *testing.T, b *browser, path, class string) []string {
	t.Helper()
	row := regexp.MustCompile(`class="` + class + `" href="[^"]*/([^"/]*)"`)
	older := regexp.MustCompile(`<a href="([^"]*)">Older `)
	base, _, _ := strings.Cut(path, "?")
	var ids []string
	for pages := 0; path != ""; pages++ {
		require.Less(t, pages, 10, "the pages do not end: %v", ids)
		p := b.get(path)
		require.Equal(t, http.StatusOK, p.Status, "%s: %s", path, text(p.Body))
		rows := row.FindAllStringSubmatch(p.Body, -1)
		assert.LessOrEqual(t, len(rows), 3, "PageSize 3: %s", path)
		for _, m := range rows {
			id, err := url.PathUnescape(html.UnescapeString(m[1]))
			require.NoError(t, err)
			ids = append(ids, id)
		}
		path = ""
		if m := older.FindStringSubmatch(p.Body); m != nil {
			require.NotEmpty(t, rows, "a page without rows links to older ones")
			path = base + html.UnescapeString(m[1])
		}
	}
	return ids
}

// Items that share a time are each listed once when a page ends among
// them, following the pages' own links.
func TestPagingListsItemsSharingATimeOnce(t *testing.T) {
	t.Parallel()
	r := sharedKeyed(t)
	sessions, interactions, insights, _ := tiedScope(t, r, "tied")
	b := r.browser(t)
	b.signIn(keyA)
	base := "/inspector/s/alpha/tied"
	assert.Equal(t, sessions, walk(t, b, base+"/sessions", "session"), "sessions")
	assert.Equal(t, interactions, walk(t, b, base+"/interactions", "interaction"), "interactions")
	assert.Equal(t, insights, walk(t, b, base+"/insights", "insight"), "insights")
	assert.Equal(t, insights, walk(t, b, base+"/insights?show=active", "insight"), "active insights")
}

// A link made before the cursor named the boundary item (a time only)
// still lists what is older than that time.
func TestPagingByATimeAlone(t *testing.T) {
	t.Parallel()
	r := sharedKeyed(t)
	sessions, interactions, insights, times := tiedScope(t, r, "tied-by-time")
	b := r.browser(t)
	b.signIn(keyA)
	base := "/inspector/s/alpha/tied-by-time"
	before := "?before=" + url.QueryEscape(times[1].Format(time.RFC3339Nano))
	// The oldest item of each kind is the only one before times[1].
	assert.Equal(t, sessions[len(sessions)-1:], walk(t, b, base+"/sessions"+before, "session"))
	assert.Equal(t, interactions[len(interactions)-1:], walk(t, b, base+"/interactions"+before, "interaction"))
	assert.Equal(t, insights[len(insights)-1:], walk(t, b, base+"/insights"+before, "insight"))
}

func TestPagingCursorIsCheckedStrictly(t *testing.T) {
	t.Parallel()
	r := sharedKeyed(t)
	b := r.browser(t)
	b.signIn(keyA)
	base := "/inspector/s/alpha/alice"
	at := url.QueryEscape(time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC).Format(time.RFC3339Nano))
	for _, c := range []struct {
		path string
		says string
	}{
		{"/sessions?before=yesterday&id=s1", `before="yesterday" is not a time`},
		{"/sessions?id=s1", `id="s1" names the last row of a page, and needs that row's time in before=`},
		{"/sessions?before=" + at + "&id=" + strings.Repeat("x", 300), "is not a valid session id"},
		{"/insights?before=" + at + "&id=a%2Fb", "is not a valid insight id"},
		{"/interactions?before=" + at + "&id=i1", `id="i1" needs turn=, the first turn of the interaction it names`},
		{"/interactions?before=" + at + "&id=i1&turn=two", `turn="two" is not a turn number`},
		{"/interactions?before=" + at + "&turn=3", `turn="3" needs id=`},
	} {
		p := b.get(base + c.path)
		assert.Equal(t, http.StatusBadRequest, p.Status, c.path)
		assert.Contains(t, text(p.Body), c.says, c.path)
	}
}
