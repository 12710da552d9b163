// Package textsearch measures agentmemory's full-text search side by side
// with bleve (github.com/blevesearch/bleve/v2) on the same documents and
// queries: documents cut from LoCoMo conversations, LoCoMo questions as
// queries, top 5 by BM25.
//
// It is its own Go module, so that bleve is a dependency of this harness
// only, never of agentmemory. From the repository root:
//
//	cd benchmarks/textsearch
//	AGENTMEMORY_LOCOMO_DIR=/path/to/locomo go test -run '^$' -bench . -cpu 1 -count 5
//
// Without AGENTMEMORY_LOCOMO_DIR the benchmarks skip. Three engines are
// compared at 1,000 and 10,000 documents (100,000 unless -short):
//
//   - agentmemory: store/sqlite's SearchInteractions with text only (the
//     text leg, its FTS5 tokens porter unicode61, the user's own BM25
//     statistics, then the five documents read back);
//   - bleve-en: a bleve scorch index with BM25 scoring and bleve's English
//     analyzer (possessives, lower case, English stop words, snowball
//     stemmer), returning ids and scores;
//   - bleve-fts5: the same with an analyzer close to FTS5's porter
//     unicode61 (Unicode word tokenizer, lower case, porter stemmer, no
//     stop words).
//
// Each reports the p50 and p95 of a search, and bleve's engines the mean
// share of agentmemory's top 5 they also return (overlap), a check that
// the engines answer the same question.
package textsearch
