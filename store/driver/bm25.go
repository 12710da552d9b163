package driver

import "math"

// BM25 parameters of the backends that score full text in Go, those of
// SQLite's FTS5 bm25() and Lucene.
const (
	bm25K1 = 1.2
	bm25B  = 0.75
)

// BM25 is the Okapi BM25 score (k1 = 1.2, b = 0.75, with Lucene's idf,
// which is never negative) of a document of length words holding each
// query term tf[term] times, in a corpus of n documents averaging avg
// words, df[term] of which hold the term.
func BM25(tf map[string]int, length int, df map[string]int, n, avg float64) float64 {
	score := 0.0
	for t, c := range tf {
		idf := math.Log(1 + (n-float64(df[t])+0.5)/(float64(df[t])+0.5))
		f := float64(c)
		score += idf * f * (bm25K1 + 1) / (f + bm25K1*(1-bm25B+bm25B*float64(length)/avg))
	}
	return score
}
