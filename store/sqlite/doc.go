// Package sqlite is agentmemory's embedded default store: one SQLite file,
// through the pure-Go modernc.org/sqlite driver (database/sql driver name
// "sqlite"), implementing store.Store.
//
// # Layout
//
// Each document kind has its own table (interactions, insights,
// session_summaries) keyed by an integer rowid and unique on (user_id, id).
// A row holds the document as JSON in its doc column, without its vectors
// and ETag, next to the columns that filters and orderings need (session id,
// times as fixed-width UTC RFC 3339 text that sorts like the instant, status
// flags, content hash…) and the vectors as little-endian float32 BLOBs, one
// column per vector field. Every filter and ordering is served by an index
// led by user_id.
//
// Full text lives in contentless FTS5 tables (tokenize 'porter unicode61')
// kept in step with the base tables by triggers, so the text is stored once.
// Queries are ranked with bm25() and always joined back to the base table on
// its user_id: a user never sees another user's rows. User text is turned
// into a safe MATCH expression by quoting every word and OR-ing them, so no
// input is a syntax error or an FTS5 operator. BM25's corpus statistics
// (document frequencies, average length) are those of the whole table, all
// users together: they shape a user's scores but never which documents a
// user can get back.
//
// FTS5 stays the engine of record for full text, but a search does not
// ask it to score every matching row (bm25() costs about a microsecond a
// row, and a common query word matches a good part of a user's rows): the
// user's cached set (below) also holds an inverted index of the user's
// documents, with each token's occurrences per document and each
// document's token count, and the text leg computes bm25()'s formula over
// it, with the table-wide row count, average length and per-word document
// counts read from FTS5 at each search. Tokens come from FTS5 itself: rows
// and query words go through a temporary FTS5 table with the same
// tokenizer and are read back with fts5vocab, so there is no second
// tokenizer to drift. The ranking and scores are those of the SQL query
// (TestTextIndexMatchesFTS5 compares them), which still runs when the
// cache is disabled or a query word is more than one token.
//
// Each leg contributes its best max(TopK, 100) candidates to Reciprocal
// Rank Fusion, which is therefore exactly the fusion of complete legs
// whenever no leg has more than that many candidates.
//
// Vectors are ranked in Go over a per-user, per-kind in-memory cache of
// ids, vectors, norms, the filter columns and the text index, bounded by an
// LRU over total bytes (Config.VectorCacheBytes). A random
// generation number per user and kind, written in the same transaction as
// every change, tells a search whether its cached set is current; this
// process's writes update the cached set in place, and a write by another
// process (or another Store on the same file) makes the next search reload
// it. A loaded set's vectors are decoded into large shared blocks in row
// order, and a search scores every vector field in one pass over the rows
// with store.VectorRanker's exact expression, threshold and tie order
// (TestVecSetRankMatchesVectorRanker) but no allocation per candidate.
//
// # Threshold pruning (exact)
//
// A vector leg keeps a candidate only if its cosine reaches a cut-off: the
// search's MinSimilarity, and once the leg holds its depth of candidates
// the worst of them. Each cached vector also keeps the norms of its last
// three quarters, half and quarter (12 bytes; block boundaries are
// multiples of 8), the query the same, and a dot product is computed a
// quarter at a time: after each quarter, Cauchy–Schwarz bounds what the
// rest can add (partial + ‖q_rest‖·‖v_rest‖), and a candidate whose bound
// misses the cut-off by more than float32 rounding is abandoned. A
// candidate that is not abandoned is scored by embed.Dot's own arithmetic,
// so nothing changes but the work: TestPruningExact compares pruned and
// unpruned legs bit for bit (random and embed/lexical vectors, thresholds
// 0, 0.3 and 0.75, depths 5 and 100, exact scans and pre-filter pools). It
// pays off with a high threshold: at direct retrieval's 0.75 on
// embed/lexical vectors a candidate is abandoned after 1.75 quarters on
// average, and its search (10,000 interactions) takes 4–11% less (6.5 to
// 5.8 ms p50 in the best A/B). Its gain is smaller than the bytes saved
// because the pool's rows are scattered and each costs a cache miss
// whatever is read of it. On random 384-d vectors, whose partial sums stay
// far below the bound, a cut-off near 0.1 (a leg's worst) abandons
// nothing, so no check is made below a cut-off of 0.2 (pruneMinCut). The
// tails add 24 bytes a document (240 KB per 10,000).
//
// # Vector pre-filter: what is approximate, what is exact
//
// The exact scan is bound by memory bandwidth and float work (two 384-d
// float32 vectors are 3 KiB a document, 125–260 ns a dot product). A cached
// set of at least Config.VectorPrefilterMin documents (2,000) therefore
// also keeps a ternary code of each vector (components above +τ, below −τ
// or between, τ = 0.75 RMS, as two bit planes: 96 bytes and a 4-byte
// factor for 384 dimensions), computed when the set is loaded and on each
// cached write. A vector leg scores every matching row's code against the
// query through a per-query lookup table (an estimate of the cosine,
// about 50 ns a vector), keeps the pool of the best estimates,
// max(Config.VectorPoolPerResult × depth, Config.VectorPoolFraction × n,
// 200) with depth the leg's depth and n the rows searched, and ranks that
// pool exactly. So every score, the threshold and the order are exact;
// what is approximate is membership: a document whose estimate falls
// outside the pool is missed. Smaller sets, sets not cached, queries of
// another dimension, searches with a MinSimilarity of 0.5 or more (where
// the pruned exact scan is faster than the pool) and a pool as large as
// the set are exact by construction; VectorPrefilterMin < 0 turns the
// pre-filter off.
//
// The pool is sized from measured recall (TestPrefilterRecall, 200 queries
// on 10,000 documents, against the exact scan; a search with TopK 5 fuses
// two legs of depth 100, and its top 5 depends on their ranks down to
// ~60, not only on their top 5): on random unit vectors a pool of 10%
// already finds 100% of each leg's top 5 and 99.2% of the fused top 5; on
// embed/lexical vectors of generated sentences (sparse, many near-ties) a
// pool of 10% finds 99.2% of a leg's top 5 but only 92% of the fused top
// 5, 20% finds 97%, 30% 98.5% and 40% 99.5%. The default fraction is
// therefore 0.4: it keeps the fused top 5 at 0.99 on both, at the cost of
// ranking 40% of the rows exactly. A plain 1-bit sign code was measured
// first and rejected: it codes the zeros of sparse vectors as −1, and found
// only 29% of the lexical fused top 5 with a pool of 10%.
//
// # Durability and concurrency
//
// The file is in WAL mode with synchronous=FULL: a write is acknowledged
// only once its WAL frame is fsynced, so it survives a process kill and a
// power loss alike. (synchronous=NORMAL would survive process crashes but
// could lose the last transactions on power loss, which breaks "nothing
// acknowledged is lost".) Writes go through a single connection that starts
// transactions with BEGIN IMMEDIATE, so in-process writers queue in Go rather
// than spinning on SQLITE_BUSY, and a conditional write (the session ETag)
// reads and writes under the same write lock. Reads use a separate pool and
// see a consistent snapshot per call. Other processes may open the same
// file: SQLite's locking keeps it consistent and busy_timeout (Config.
// BusyTimeout) absorbs their write lock.
//
// # Schema versions
//
// PRAGMA user_version holds the schema version; Open applies the missing
// migrations in order in one transaction, and refuses a file written by a
// newer version (ErrSchemaTooNew) or by another application.
package sqlite
