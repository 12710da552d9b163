package mem

import (
	"cmp"
	"context"
	"slices"
	"strings"
	"unicode"

	"github.com/agentmemory/agentmemory/embed"
	"github.com/agentmemory/agentmemory/store"
	"github.com/agentmemory/agentmemory/store/driver"
)

// view is what search needs to know of one document.
type view struct {
	// active documents are searchable at all (not superseded); they make
	// the BM25 corpus statistics.
	active bool
	// match reports whether the document passes the request's filters.
	match bool
	text  string
	vec   func(store.VectorField) []float32
}

// SearchInteractions implements store.Store.
func (s *Store) SearchInteractions(ctx context.Context, userID string, q store.SearchRequest) ([]store.Hit[*store.Interaction], error) {
	return search(ctx, s, userID, store.KindInteraction, q,
		func(u *userDocs) map[string]*store.Interaction { return u.interactions },
		func(d *store.Interaction, q store.SearchRequest) view {
			return view{
				active: true,
				match:  (q.SessionID == "" || d.SessionID == q.SessionID) && inRange(d.Timestamp, q.Since, q.Until),
				text: strings.Join([]string{d.Content, d.Summary,
					strings.Join(d.Metadata.MentionedTopics, " "), strings.Join(d.Metadata.Entities, " ")}, "\n"),
				vec: func(f store.VectorField) []float32 {
					if f == store.FieldSummaryVector {
						return d.SummaryVector
					}
					return d.ContentVector
				},
			}
		},
		cloneInteraction)
}

// SearchInsights implements store.Store.
func (s *Store) SearchInsights(ctx context.Context, userID string, q store.SearchRequest) ([]store.Hit[*store.Insight], error) {
	return search(ctx, s, userID, store.KindInsight, q,
		func(u *userDocs) map[string]*store.Insight { return u.insights },
		func(d *store.Insight, q store.SearchRequest) view {
			return view{
				active: !d.Superseded(),
				match: (q.SessionID == "" || slices.Contains(d.SessionIDs, q.SessionID)) &&
					(q.InsightType == "" || d.InsightType == q.InsightType) &&
					(q.Category == "" || d.Category == q.Category) &&
					inRange(d.CreatedAt, q.Since, q.Until),
				text: d.InsightText,
				vec:  func(store.VectorField) []float32 { return d.InsightVector },
			}
		},
		cloneInsight)
}

// SearchSessions implements store.Store.
func (s *Store) SearchSessions(ctx context.Context, userID string, q store.SearchRequest) ([]store.Hit[*store.Session], error) {
	return search(ctx, s, userID, store.KindSessionSummary, q,
		func(u *userDocs) map[string]*store.Session { return u.sessions },
		func(d *store.Session, q store.SearchRequest) view {
			return view{
				active: true,
				match:  (q.SessionID == "" || d.ID == q.SessionID) && inRange(d.StartTime, q.Since, q.Until),
				text:   d.Summary + "\n" + strings.Join(d.KeyTopics, " "),
				vec:    func(store.VectorField) []float32 { return d.SummaryVector },
			}
		},
		cloneSession)
}

// search ranks the user's documents of one kind: a vector leg per field of
// q, a BM25 leg for q.Text, fused by driver.Combine.
func search[T any](ctx context.Context, s *Store, userID string, kind store.Kind, q store.SearchRequest,
	docsOf func(*userDocs) map[string]T, see func(T, store.SearchRequest) view, clone func(T) T,
) ([]store.Hit[T], error) {
	if err := s.begin(ctx, userID); err != nil {
		return nil, err
	}
	q, err := s.v.Search(kind, q)
	if err != nil {
		return nil, err
	}
	if err := s.rlock(); err != nil {
		return nil, err
	}
	defer s.mu.RUnlock()
	hits := []store.Hit[T]{}
	u := s.user(userID)
	if u == nil {
		return hits, nil
	}
	docs := docsOf(u)
	views := make(map[string]view, len(docs))
	var candidates []string
	for id, d := range docs {
		v := see(d, q)
		if !v.active {
			continue
		}
		views[id] = v
		if v.match {
			candidates = append(candidates, id)
		}
	}
	slices.Sort(candidates) // a deterministic scan order

	var vectorLegs [][]driver.Scored
	if len(q.Vector) > 0 && len(candidates) > 0 {
		for _, f := range q.VectorFields {
			r := driver.NewVectorRanker(q.Vector, len(candidates), q.MinSimilarity)
			for _, id := range candidates {
				if v := views[id].vec(f); len(v) > 0 {
					r.Add(id, v, embed.Norm(v))
				}
			}
			vectorLegs = append(vectorLegs, r.Result())
		}
	}
	terms := tokens(q.Text)
	slices.Sort(terms)
	textLeg := bm25(slices.Compact(terms), views, candidates)

	for _, r := range driver.Combine(q.TopK, vectorLegs, textLeg) {
		hits = append(hits, store.Hit[T]{Doc: clone(docs[r.ID]), Score: r.Score, Similarity: r.Similarity, TextScore: r.TextScore})
	}
	return hits, nil
}

// bm25 scores the candidates containing any of the query terms, best
// first (ties by id), with corpus statistics over every view.
func bm25(terms []string, views map[string]view, candidates []string) []driver.Scored {
	if len(terms) == 0 || len(candidates) == 0 {
		return nil
	}
	type stats struct {
		tf     map[string]int
		length int
	}
	docs := make(map[string]stats, len(views))
	df := make(map[string]int, len(terms))
	total := 0
	for id, v := range views {
		toks := tokens(v.text)
		st := stats{tf: make(map[string]int), length: len(toks)}
		for _, tok := range toks {
			if slices.Contains(terms, tok) {
				st.tf[tok]++
			}
		}
		for term := range st.tf {
			df[term]++
		}
		docs[id] = st
		total += len(toks)
	}
	n := float64(len(views))
	avg := float64(total) / n
	if avg == 0 {
		avg = 1
	}
	var out []driver.Scored
	for _, id := range candidates {
		st := docs[id]
		if score := driver.BM25(st.tf, st.length, df, n, avg); score > 0 {
			out = append(out, driver.Scored{ID: id, Score: score})
		}
	}
	slices.SortFunc(out, func(a, b driver.Scored) int {
		return cmp.Or(cmp.Compare(b.Score, a.Score), cmp.Compare(a.ID, b.ID))
	})
	return out
}

// tokens returns the lower-cased words of text: maximal runs of letters
// and digits. Anything else separates words, so no query text is special.
func tokens(text string) []string {
	return strings.FieldsFunc(strings.ToLower(text), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsNumber(r)
	})
}
