package inspector

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"html/template"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/agentmemory/agentmemory/inspector/plot"
	"github.com/agentmemory/agentmemory/memoryservice"
	"github.com/agentmemory/agentmemory/retrieval"
	"github.com/agentmemory/agentmemory/store"
)

// countCap bounds the count a page shows of a scope's sessions: above
// it, the page says "more than". Interactions are not counted (a scope
// can hold any number; counting reads them all): their pages are paged.
const countCap = 1000

// count is a number of documents, capped.
type count struct {
	N    int
	More bool // more than N
}

func (c count) String() string {
	if c.More {
		return fmt.Sprintf("%d+", c.N)
	}
	return strconv.Itoa(c.N)
}

func capped(n int) count {
	if n > countCap {
		return count{N: countCap, More: true}
	}
	return count{N: n}
}

// storeRow is a memory store on the index.
type storeRow struct {
	Name   string
	Scopes int
}

func (in *Inspector) index(w http.ResponseWriter, r *http.Request, acc *access) {
	names, err := in.svc.StoreNames(r.Context())
	if err != nil {
		in.internal(w, r, err)
		return
	}
	var rows []storeRow
	for _, n := range names {
		if !acc.reaches(n) {
			continue
		}
		g, err := in.svc.OpenStore(r.Context(), n)
		if err != nil {
			in.internal(w, r, err)
			return
		}
		scopes, err := g.Scopes(r.Context())
		if err != nil {
			in.internal(w, r, err)
			return
		}
		rows = append(rows, storeRow{Name: n, Scopes: len(scopes)})
	}
	in.render(w, r, http.StatusOK, "index", nil, rows)
}

// scopeRow is a scope on its store's page.
type scopeRow struct {
	Scope                  string
	Insights, Sessions     count
	ProfileAt, LastSession time.Time
}

type storeData struct {
	Name   string
	Scopes []scopeRow
	Next   string // the next page's first scope
	Total  int
}

func (in *Inspector) storePage(w http.ResponseWriter, r *http.Request, acc *access) {
	name := r.PathValue("store")
	g, ok := in.openStore(w, r, acc, name)
	if !ok {
		return
	}
	ctx := r.Context()
	scopes, err := g.Scopes(ctx)
	if err != nil {
		in.internal(w, r, err)
		return
	}
	d := storeData{Name: name, Total: len(scopes)}
	from := r.URL.Query().Get("from")
	i, _ := slices.BinarySearch(scopes, from)
	page := scopes[i:]
	if len(page) > in.size {
		d.Next = page[in.size]
		page = page[:in.size]
	}
	st := g.Store()
	for _, sc := range page {
		u := g.UserID(sc)
		row := scopeRow{Scope: sc}
		ins, err := st.ListInsights(ctx, u, store.InsightFilter{})
		if err != nil {
			in.internal(w, r, err)
			return
		}
		for _, x := range ins {
			if x.InsightType == store.InsightLongTerm {
				row.ProfileAt = x.UpdatedAt
			}
		}
		row.Insights = count{N: len(ins)}
		ss, err := st.ListSessions(ctx, u, store.SessionFilter{Limit: countCap + 1})
		if err != nil {
			in.internal(w, r, err)
			return
		}
		row.Sessions = capped(len(ss))
		if len(ss) > 0 {
			row.LastSession = ss[0].StartTime
		}
		d.Scopes = append(d.Scopes, row)
	}
	in.render(w, r, http.StatusOK, "store", nil, d)
}

// allInsights reads every insight of the scope, superseded ones
// included, newest first, with an index by id.
func allInsights(ctx context.Context, s *scope) ([]*store.Insight, map[string]*store.Insight, error) {
	ins, err := s.store.Store().ListInsights(ctx, s.userID, store.InsightFilter{IncludeSuperseded: true})
	if err != nil {
		return nil, nil, err
	}
	byID := make(map[string]*store.Insight, len(ins))
	for _, x := range ins {
		byID[x.ID] = x
	}
	return ins, byID, nil
}

type overviewData struct {
	Profile    *store.Insight
	Folded     []*store.Insight
	Missing    []string // folded-in insights since forgotten
	Insights   int
	Superseded int
	Sessions   count
	Timeline   template.HTML
}

func (in *Inspector) overview(w http.ResponseWriter, r *http.Request, s *scope) {
	ctx := r.Context()
	ins, byID, err := allInsights(ctx, s)
	if err != nil {
		in.internal(w, r, err)
		return
	}
	d := overviewData{}
	var events []plot.Event
	for _, x := range ins {
		if x.InsightType == store.InsightLongTerm {
			if !x.Superseded() {
				d.Profile = x
			}
			continue
		}
		if x.Superseded() {
			d.Superseded++
		} else {
			d.Insights++
		}
		lane := "insight: " + cmpOr(x.Category, "uncategorised")
		events = append(events, plot.Event{At: x.CreatedAt, Lane: lane, Label: truncate(x.InsightText, 120),
			Href: s.base + "/insights/" + escape(x.ID)})
	}
	if d.Profile != nil {
		for _, id := range d.Profile.SourceInsightIDs {
			if x, ok := byID[id]; ok {
				d.Folded = append(d.Folded, x)
			} else {
				d.Missing = append(d.Missing, id)
			}
		}
	}
	st := s.store.Store()
	ss, err := st.ListSessions(ctx, s.userID, store.SessionFilter{Limit: countCap + 1})
	if err != nil {
		in.internal(w, r, err)
		return
	}
	d.Sessions = capped(len(ss))
	for i, x := range ss {
		if i >= 200 { // the timeline shows the newest 200 sessions
			break
		}
		events = append(events, plot.Event{At: x.StartTime, End: x.EndTime, Lane: "sessions",
			Label: truncate(cmpOr(x.Summary, "session "+x.ID), 120), Href: s.base + "/sessions/" + escape(x.ID)})
	}
	d.Timeline = plot.Timeline(events, plot.TimelineOptions{Title: "Sessions and insights of " + s.scope})
	in.render(w, r, http.StatusOK, "overview", s, d)
}

// insightView is an insight with what it came from and what came from it.
type insightView struct {
	*store.Insight
	Long bool // the long-term profile
	// SupersededBy is the insight that superseded it, if the scope has it.
	SupersededByDoc *store.Insight
	// Supersedes are the insights it superseded.
	Supersedes []*store.Insight
	// Sources are the insights it was merged or folded from; MergedInto
	// the insights merged from it.
	Sources    []*store.Insight
	MergedInto []*store.Insight
	// InProfile reports that the long-term profile folded it in.
	InProfile bool
	ProfileID string
}

func viewOf(x *store.Insight, all []*store.Insight, byID map[string]*store.Insight, profileID string) insightView {
	v := insightView{Insight: x, Long: x.InsightType == store.InsightLongTerm, ProfileID: profileID}
	if x.SupersededBy != "" {
		v.SupersededByDoc = byID[x.SupersededBy]
	}
	for _, id := range x.SourceInsightIDs {
		if src, ok := byID[id]; ok {
			v.Sources = append(v.Sources, src)
		}
	}
	for _, o := range all {
		if o.SupersededBy == x.ID {
			v.Supersedes = append(v.Supersedes, o)
		}
		if slices.Contains(o.SourceInsightIDs, x.ID) {
			if o.InsightType == store.InsightLongTerm {
				v.InProfile = !o.Superseded()
			} else {
				v.MergedInto = append(v.MergedInto, o)
			}
		}
	}
	return v
}

type insightsData struct {
	Insights []insightView
	Next     template.URL // the query of the older page's link; "" on the last page
	Filter   string       // active, superseded or all
}

func (in *Inspector) insights(w http.ResponseWriter, r *http.Request, s *scope) {
	ctx := r.Context()
	all, byID, err := allInsights(ctx, s)
	if err != nil {
		in.internal(w, r, err)
		return
	}
	filter := cmpOr(r.URL.Query().Get("show"), "all")
	if filter != "all" && filter != "active" && filter != "superseded" {
		in.fail(w, r, http.StatusBadRequest, "show=%q: show is all, active or superseded.", truncate(filter, 40))
		return
	}
	c, ok := in.cursor(w, r, "insight")
	if !ok {
		return
	}
	profileID := store.LongTermID(s.userID)
	d := insightsData{Filter: filter}
	for _, x := range all { // newest first, by CreatedAt, then ID
		if !c.lists(x.CreatedAt, 0, x.ID) {
			continue
		}
		if (filter == "active" && x.Superseded()) || (filter == "superseded" && !x.Superseded()) {
			continue
		}
		if len(d.Insights) == in.size {
			last := d.Insights[len(d.Insights)-1]
			d.Next = pageCursor{At: last.CreatedAt, ID: last.ID}.link("insight", url.Values{"show": {filter}})
			break
		}
		d.Insights = append(d.Insights, viewOf(x, all, byID, profileID))
	}
	in.render(w, r, http.StatusOK, "insights", s, d)
}

// A pageCursor is where a page of a list starts, newest first: after the
// last row of the page before, named by its time and id (and, for an
// interaction, its first turn), the keys the store orders the list by.
// Rows that share a time are ordered by the rest of the key, so a page
// that ends among them leaves none of them out and shows none twice.
type pageCursor struct {
	At   time.Time // the last row's time; zero for the first page
	Turn int       // the last row's first turn (an interaction's)
	ID   string    // the last row's id; "" when all of At's rows were listed
}

// lists reports whether the row at (at, turn, id) comes after the
// cursor: on this page or a later one.
func (c pageCursor) lists(at time.Time, turn int, id string) bool {
	switch {
	case c.At.IsZero():
		return true
	case !at.Equal(c.At):
		return at.Before(c.At)
	case c.ID == "": // a link with a time alone: At's rows were listed
		return false
	}
	return cmp.Or(cmp.Compare(turn, c.Turn), strings.Compare(id, c.ID)) < 0
}

// link is the query of the link to the page that starts at c, in a list
// of kind ("session", "insight" or "interaction"), with extra.
func (c pageCursor) link(kind string, extra url.Values) template.URL {
	q := url.Values{"before": {c.At.UTC().Format(time.RFC3339Nano)}, "id": {c.ID}}
	if kind == "interaction" {
		q.Set("turn", strconv.Itoa(c.Turn))
	}
	for k, v := range extra {
		q[k] = v
	}
	return template.URL(q.Encode()) // every value escaped
}

// cursor reads the cursor of a page of a list of kind ("session",
// "insight" or "interaction"): before, the last row's time (RFC 3339);
// id, its id; and turn, an interaction's first turn. A time alone (a
// link made before id was) starts at the rows older than it.
func (in *Inspector) cursor(w http.ResponseWriter, r *http.Request, kind string) (pageCursor, bool) {
	q := r.URL.Query()
	before, id, turn := q.Get("before"), q.Get("id"), q.Get("turn")
	withTurn := kind == "interaction"
	var c pageCursor
	switch {
	case before == "" && id != "":
		in.fail(w, r, http.StatusBadRequest, "id=%q names the last row of a page, and needs that row's time in before= (as the page's own \"older\" link gives them).", truncate(id, 80))
		return c, false
	case withTurn && id == "" && turn != "":
		in.fail(w, r, http.StatusBadRequest, "turn=%q needs id=, the interaction whose first turn it is (as the page's own \"older\" link gives them).", truncate(turn, 20))
		return c, false
	case before == "":
		return c, true
	}
	t, err := time.Parse(time.RFC3339Nano, before)
	if err != nil {
		in.fail(w, r, http.StatusBadRequest, "before=%q is not a time (RFC 3339, as the page's own \"older\" link gives it).", truncate(before, 64))
		return c, false
	}
	c.At = t
	if id == "" {
		return c, true
	}
	if err := store.CheckID(kind+" id", id); err != nil {
		in.fail(w, r, http.StatusBadRequest, "id=%q is not a valid %s id: %v", truncate(id, 80), kind, err)
		return c, false
	}
	c.ID = id
	if withTurn {
		if turn == "" {
			in.fail(w, r, http.StatusBadRequest, "id=%q needs turn=, the first turn of the interaction it names (as the page's own \"older\" link gives them).", truncate(id, 80))
			return c, false
		}
		n, err := strconv.Atoi(turn)
		if err != nil || n < 0 {
			in.fail(w, r, http.StatusBadRequest, "turn=%q is not a turn number (0 or more).", truncate(turn, 20))
			return c, false
		}
		c.Turn = n
	}
	return c, true
}

// sameTime is the range of the rows that share the cursor's time, as a
// store's Since and Until (Since <= t < Until): the stores keep times to
// the nanosecond. A page reads these rows whole, as the stores' filters
// cannot start among them; they are few but for a clock that gives many
// rows one time.
func (c pageCursor) sameTime() (since, until time.Time) { return c.At, c.At.Add(time.Nanosecond) }

// listPage reads the rows of a list page after cursor c, newest first:
// those sharing c's time that come after it (atTime, given the time
// range of that one time), then as many older ones as the page of size
// rows still needs (older, given how many). Up to size+1 rows: one more
// than the page shows says there is an older page. key is how the store
// orders the rows: time, then first turn, then id.
func listPage[D any](c pageCursor, size int, key func(D) (time.Time, int, string),
	atTime func(since, until time.Time) ([]D, error), older func(limit int) ([]D, error)) ([]D, error) {
	var out []D
	if c.ID != "" {
		same, err := atTime(c.sameTime())
		if err != nil {
			return nil, err
		}
		for _, x := range same {
			if c.lists(key(x)) {
				out = append(out, x)
			}
		}
	}
	if len(out) <= size {
		more, err := older(size + 1 - len(out))
		if err != nil {
			return nil, err
		}
		out = append(out, more...)
	}
	return out, nil
}

// docID reads the page's {id}, answering 400 for one no document can
// have.
func (in *Inspector) docID(w http.ResponseWriter, r *http.Request, what string) (string, bool) {
	id := r.PathValue("id")
	if err := store.CheckID(what+" id", id); err != nil {
		in.fail(w, r, http.StatusBadRequest, "%q is not a valid %s id: %v", truncate(id, 80), what, err)
		return "", false
	}
	return id, true
}

type insightData struct {
	insightView
	Interactions []*store.Interaction
	Sessions     []string
}

func (in *Inspector) insight(w http.ResponseWriter, r *http.Request, s *scope) {
	id, ok := in.docID(w, r, "insight")
	if !ok {
		return
	}
	ctx := r.Context()
	all, byID, err := allInsights(ctx, s)
	if err != nil {
		in.internal(w, r, err)
		return
	}
	x, ok := byID[id]
	if !ok {
		in.fail(w, r, http.StatusNotFound, "Scope %q has no insight %q (forgotten, or never made).", s.scope, id)
		return
	}
	d := insightData{insightView: viewOf(x, all, byID, store.LongTermID(s.userID)), Sessions: x.SessionIDs}
	for _, iid := range x.SourceInteractionIDs {
		it, err := s.store.Store().GetInteraction(ctx, s.userID, iid)
		if errors.Is(err, store.ErrNotFound) {
			continue
		}
		if err != nil {
			in.internal(w, r, err)
			return
		}
		d.Interactions = append(d.Interactions, it)
	}
	in.render(w, r, http.StatusOK, "insight", s, d)
}

type sessionsData struct {
	Sessions []*store.Session
	Next     template.URL // the query of the older page's link
}

// sessions lists the scope's sessions, newest first (by StartTime, then
// ID): a page reads the rows that share the cursor's time and then, as
// many as the page still needs, the older ones.
func (in *Inspector) sessions(w http.ResponseWriter, r *http.Request, s *scope) {
	c, ok := in.cursor(w, r, "session")
	if !ok {
		return
	}
	ctx, st := r.Context(), s.store.Store()
	ss, err := listPage(c, in.size, func(x *store.Session) (time.Time, int, string) { return x.StartTime, 0, x.ID },
		func(since, until time.Time) ([]*store.Session, error) {
			return st.ListSessions(ctx, s.userID, store.SessionFilter{Since: since, Until: until})
		},
		func(limit int) ([]*store.Session, error) {
			return st.ListSessions(ctx, s.userID, store.SessionFilter{Until: c.At, Limit: limit})
		})
	if err != nil {
		in.internal(w, r, err)
		return
	}
	d := sessionsData{Sessions: ss}
	if len(ss) > in.size {
		d.Sessions = ss[:in.size]
		last := d.Sessions[in.size-1]
		d.Next = pageCursor{At: last.StartTime, ID: last.ID}.link("session", nil)
	}
	in.render(w, r, http.StatusOK, "sessions", s, d)
}

type sessionData struct {
	*store.Session
	Turns        []*store.Turn
	MoreTurns    int // the first turn not shown; 0: all shown
	Interactions []*store.Interaction
	Insights     []*store.Insight
	Updates      []memoryservice.Update
}

func (in *Inspector) session(w http.ResponseWriter, r *http.Request, s *scope) {
	id, ok := in.docID(w, r, "session")
	if !ok {
		return
	}
	ctx, st := r.Context(), s.store.Store()
	from := 1
	if v := r.URL.Query().Get("from"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			in.fail(w, r, http.StatusBadRequest, "from=%q: from is a turn number, 1 or more.", truncate(v, 20))
			return
		}
		from = n
	}
	doc, err := st.GetSession(ctx, s.userID, id)
	turns, terr := st.ListTurns(ctx, s.userID, id, from)
	if errors.Is(err, store.ErrNotFound) && terr == nil && len(turns) == 0 {
		in.fail(w, r, http.StatusNotFound, "Scope %q has no session %q (forgotten, or never recorded).", s.scope, id)
		return
	}
	if err != nil && !errors.Is(err, store.ErrNotFound) {
		in.internal(w, r, err)
		return
	}
	if terr != nil {
		in.internal(w, r, terr)
		return
	}
	if doc == nil {
		doc = &store.Session{ID: id}
	}
	d := sessionData{Session: doc, Turns: turns}
	if len(turns) > in.size*2 {
		d.Turns = turns[:in.size*2]
		d.MoreTurns = turns[in.size*2].Seq
	}
	if d.Interactions, err = st.ListInteractions(ctx, s.userID, store.InteractionFilter{SessionID: id, Limit: in.size * 2}); err != nil {
		in.internal(w, r, err)
		return
	}
	if d.Insights, err = st.ListInsights(ctx, s.userID, store.InsightFilter{SessionID: id, IncludeSuperseded: true}); err != nil {
		in.internal(w, r, err)
		return
	}
	ups, err := s.store.Updates(ctx, s.scope, 0)
	if err != nil {
		in.internal(w, r, err)
		return
	}
	for _, u := range ups {
		if u.SessionID == id {
			d.Updates = append(d.Updates, u)
		}
	}
	in.render(w, r, http.StatusOK, "session", s, d)
}

type interactionsData struct {
	Interactions []*store.Interaction
	Next         template.URL // the query of the older page's link
}

// interactions lists the scope's interactions, newest first (by
// Timestamp, FirstTurn, then ID): a page reads the rows that share the
// cursor's time and then, as many as the page still needs, the older
// ones.
func (in *Inspector) interactions(w http.ResponseWriter, r *http.Request, s *scope) {
	c, ok := in.cursor(w, r, "interaction")
	if !ok {
		return
	}
	ctx, st := r.Context(), s.store.Store()
	// The store lists interactions oldest first; the page, newest first.
	newestFirst := func(its []*store.Interaction, err error) ([]*store.Interaction, error) {
		slices.Reverse(its)
		return its, err
	}
	its, err := listPage(c, in.size, func(x *store.Interaction) (time.Time, int, string) { return x.Timestamp, x.FirstTurn, x.ID },
		func(since, until time.Time) ([]*store.Interaction, error) {
			return newestFirst(st.ListInteractions(ctx, s.userID, store.InteractionFilter{Since: since, Until: until}))
		},
		func(limit int) ([]*store.Interaction, error) {
			return newestFirst(st.ListInteractions(ctx, s.userID, store.InteractionFilter{Until: c.At, Limit: limit}))
		})
	if err != nil {
		in.internal(w, r, err)
		return
	}
	d := interactionsData{Interactions: its}
	if len(its) > in.size {
		d.Interactions = its[:in.size]
		last := d.Interactions[in.size-1]
		d.Next = pageCursor{At: last.Timestamp, Turn: last.FirstTurn, ID: last.ID}.link("interaction", nil)
	}
	in.render(w, r, http.StatusOK, "interactions", s, d)
}

type interactionData struct {
	*store.Interaction
	Insights []*store.Insight
}

func (in *Inspector) interaction(w http.ResponseWriter, r *http.Request, s *scope) {
	id, ok := in.docID(w, r, "interaction")
	if !ok {
		return
	}
	ctx := r.Context()
	it, err := s.store.Store().GetInteraction(ctx, s.userID, id)
	if errors.Is(err, store.ErrNotFound) {
		in.fail(w, r, http.StatusNotFound, "Scope %q has no interaction %q (forgotten, or never stored).", s.scope, id)
		return
	}
	if err != nil {
		in.internal(w, r, err)
		return
	}
	all, _, err := allInsights(ctx, s)
	if err != nil {
		in.internal(w, r, err)
		return
	}
	d := interactionData{Interaction: it}
	for _, x := range all {
		if slices.Contains(x.SourceInteractionIDs, id) {
			d.Insights = append(d.Insights, x)
		}
	}
	in.render(w, r, http.StatusOK, "interaction", s, d)
}

// maxQuery bounds a search's question.
const maxQuery = 2000

type searchData struct {
	Query string
	Found []found
	Took  time.Duration
}

// found is one memory retrieval returned, with where to see it.
type found struct {
	retrieval.Memory
	Href string
}

func (in *Inspector) search(w http.ResponseWriter, r *http.Request, s *scope) {
	q := strings.TrimSpace(r.URL.Query().Get("q"))
	d := searchData{Query: q}
	if len(q) > maxQuery {
		in.fail(w, r, http.StatusBadRequest, "The question has %d bytes; at most %d.", len(q), maxQuery)
		return
	}
	if q != "" {
		p, err := s.store.Provider()
		if err != nil {
			in.internal(w, r, err)
			return
		}
		start := time.Now()
		ms, err := p.Retriever().Search(r.Context(), s.userID, q, retrieval.SearchOptions{TopK: 10})
		if err != nil {
			in.internal(w, r, err)
			return
		}
		d.Took = time.Since(start)
		for _, m := range ms {
			d.Found = append(d.Found, found{Memory: m, Href: docHref(s, m.Kind, m.ID)})
		}
	}
	in.render(w, r, http.StatusOK, "search", s, d)
}

// docHref is the page of a document of the scope.
func docHref(s *scope, kind store.Kind, id string) string {
	switch kind {
	case store.KindInsight:
		return s.base + "/insights/" + escape(id)
	case store.KindSessionSummary, store.KindTurn:
		return s.base + "/sessions/" + escape(id)
	case store.KindInteraction:
		return s.base + "/interactions/" + escape(id)
	}
	return ""
}

type updatesData struct {
	Updates []memoryservice.Update
	Latency template.HTML
	Tokens  template.HTML
}

// maxUpdates is how many recent updates the updates page plots.
const maxUpdates = 200

func (in *Inspector) updates(w http.ResponseWriter, r *http.Request, s *scope) {
	ups, err := s.store.Updates(r.Context(), s.scope, maxUpdates)
	if err != nil {
		in.internal(w, r, err)
		return
	}
	d := updatesData{Updates: ups}
	run := plot.Series{Name: "run", Unit: "ms"}
	wait := plot.Series{Name: "wait after due", Unit: "ms"}
	input := plot.Series{Name: "input", Unit: "tokens"}
	output := plot.Series{Name: "output", Unit: "tokens"}
	embedding := plot.Series{Name: "embedding", Unit: "tokens"}
	for i := len(ups) - 1; i >= 0; i-- { // oldest first
		u := ups[i]
		href := s.base + "/updates#" + escape(u.ID)
		label := u.ID + " (" + u.Status + ")"
		if !u.RunAt.IsZero() && !u.EndedAt.IsZero() {
			run.Points = append(run.Points, plot.Point{At: u.CreatedAt, Value: ms(u.EndedAt.Sub(u.RunAt)), Label: label, Href: href})
		}
		if !u.RunAt.IsZero() {
			wait.Points = append(wait.Points, plot.Point{At: u.CreatedAt, Value: ms(max(0, u.RunAt.Sub(u.DueAt))), Label: label, Href: href})
		}
		if u.Status == "completed" || u.Usage.Total > 0 {
			input.Points = append(input.Points, plot.Point{At: u.CreatedAt, Value: float64(u.Usage.Input), Label: label, Href: href})
			output.Points = append(output.Points, plot.Point{At: u.CreatedAt, Value: float64(u.Usage.Output), Label: label, Href: href})
			embedding.Points = append(embedding.Points, plot.Point{At: u.CreatedAt, Value: float64(u.Usage.Embedding), Label: label, Href: href})
		}
	}
	d.Latency = plot.Lines([]plot.Series{run, wait}, plot.ChartOptions{Title: "Update latency", Unit: "ms"})
	d.Tokens = plot.Lines([]plot.Series{input, output, embedding}, plot.ChartOptions{Title: "Tokens per update", Unit: "tokens"})
	in.render(w, r, http.StatusOK, "updates", s, d)
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

func (in *Inspector) export(w http.ResponseWriter, r *http.Request, s *scope) {
	p, err := s.store.Provider()
	if err != nil {
		in.internal(w, r, err)
		return
	}
	w.Header().Set("Content-Type", "application/x-ndjson; charset=utf-8")
	w.Header().Set("Content-Disposition", `attachment; filename="`+fileName(s.name+"-"+s.scope)+`.jsonl"`)
	if _, err := p.ExportUser(r.Context(), s.userID, w); err != nil {
		// The status is sent: the download ends short, and the log says why.
		in.log.ErrorContext(r.Context(), "inspector: export failed midway", "store", s.name, "err", err)
	}
}

// fileName keeps the letters, digits, '-', '_' and '.' of name.
func fileName(name string) string {
	b := []byte(name)
	for i, c := range b {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c == '.') {
			b[i] = '_'
		}
	}
	return truncate(string(b), 100)
}

func cmpOr(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// truncate cuts s to at most n bytes, on a rune boundary, marking the cut.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}

func utf8RuneStart(b byte) bool { return b&0xC0 != 0x80 }
