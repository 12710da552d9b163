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
// User text is turned into a safe MATCH expression by quoting every word
// and OR-ing them, so no input is a syntax error or an FTS5 operator.
//
// # Text leg: BM25 over the user's own corpus
//
// FTS5 stays the engine of record for full text and its tokenizer the only
// tokenizer, but a search does not run a MATCH query. The user's cached set
// (below) also holds an inverted index of the user's searchable documents
// of the kind (every one but superseded insights): each token's
// occurrences per document, each document's token count, and the BM25
// statistics of that corpus — the number of documents, their total length
// and each token's document count — kept up to date as this process writes
// and removes documents, and reloaded with the set when another process
// wrote (the generation scheme below). Rows and query words go through a
// temporary FTS5 table with the same tokenizer and are read back with
// fts5vocab, so there is no second tokenizer to drift. The text leg
// computes bm25()'s formula (k1 1.2, b 0.75, idf ln((N-n+0.5)/(n+0.5)) with
// its floor of 1e-6, SQLite's own log) over that index: the ranking and
// scores, bit for bit, that bm25() gives over an FTS5 table holding only
// the user's documents (TestTextIndexMatchesFTS5 builds that table and
// compares). A search reads no statistics from the file, so its cost
// follows the user's documents, not the file's, and no user's documents
// shape another user's scores (TestTextScoresIgnoreOtherUsers). A query
// word of several tokens (a phrase to FTS5: Devanagari words, words with
// enclosing marks) is matched in memory on the documents holding all its
// tokens, whose positions are read back from FTS5.
//
// Statistics over the whole table would make every search walk each
// query word's postings for every user, and let other users' documents
// change a user's scores; the per-user statistics give every user the
// ranking it would get alone in the file, whoever else is in it (the
// measurements are in CHANGELOG.md).
//
// A phrase in at least half of the user's documents has the idf floor and
// adds at most 2.2e-6 to a score. When the other phrases alone give the
// leg's depth of documents a score above what all floored phrases together
// can add, the floored phrases' postings ("what", "did", a speaker's name)
// are not walked: only the documents whose partial score lies within that
// bound of the depth-th are scored in full, the floored phrases' counts
// found by binary search. The result is the full computation's
// (TestRankSkippingIsExact, and both ways run in TestTextIndexMatchesFTS5).
// No stop-word list is applied: the caller chooses the words (retrieval
// drops English stop words from its queries; the same list applied here
// too left LoCoMo's recall unchanged), and the floored phrases cost
// little.
//
// With the cache disabled (or a set larger than its budget) the index is
// built for each text search from the file: correct, but it tokenizes all
// the user's documents every time.
//
// Each leg contributes its best max(TopK, 100) candidates to Reciprocal
// Rank Fusion, which is therefore exactly the fusion of complete legs
// whenever no leg has more than that many candidates.
//
// Vectors are ranked in Go over a per-user, per-kind in-memory cache of
// ids, vectors, norms, the filter columns and the text index (about 12
// bytes per distinct token of a document), bounded by an
// LRU over total bytes (Config.VectorCacheBytes). A random
// generation number per user and kind, written in the same transaction as
// every change, tells a search whether its cached set is current; this
// process's writes update the cached set in place, and a write by another
// process (or another Store on the same file) makes the next search reload
// it. A set is loaded in the background, once for all the searches
// waiting for it and detached from their contexts: a search that gives up
// leaves the load running, and the set is cached for the next one. The
// text index is built from each document's terms row (terms.go): its
// tokens and counts, stored by every write (tokenized with the other
// documents of its group commit, below), so a load runs nothing
// through the tokenizer. A cold load of 10,000 LoCoMo interactions takes
// 0.25 s on one core, 100,000 take 2.2 s; a write pays for it once, about
// 0.5 ms more (BenchmarkColdLoad, BenchmarkStore/PutInteraction). Close stops the
// loads in flight. A loaded set's vectors
// are decoded into large shared blocks in row
// order, and a search scores every vector field in one pass over the rows
// with driver.VectorRanker's exact expression, threshold and tie order
// (TestVecSetRankMatchesVectorRanker) but no allocation per candidate.
//
// # No threshold pruning
//
// Every candidate's dot product is computed whole, with embed.Dot.
// Abandoning it partway, once Cauchy–Schwarz shows it can no longer reach
// the leg's cut-off (the threshold, or the worst of the leg's k), needs
// partial norms kept per vector and a check per block, and was never
// faster in BenchmarkVecSetRank (the measurements are in CHANGELOG.md).
//
// # Vector pre-filter (exact)
//
// An exact scan reads every vector: two 384-d float32 vectors are 3 KiB a
// document, 30 MB per 10,000, and memory bandwidth bounds it however fast
// the dot product (internal/dot's AVX kernel takes 19 ns in cache; a
// vector fetched from memory costs several times that). A cached set of
// at least Config.VectorPrefilterMin documents (2,000) therefore also
// keeps an int8 code of each vector (one byte a dimension, plus scale,
// residual norm, norm and inverse norm: 404 bytes for 384 dimensions),
// computed when the set is loaded and on each cached write. A vector leg
// computes every matching row's integer dot product with the query's code
// (AVX2, about 17 ns a row, a quarter of the bytes), which with the
// residuals gives by Cauchy–Schwarz an interval certain to hold the row's
// similarity as the exact scan computes it (prefilter.go). Rows whose
// interval lies below the threshold, or below the k-th largest lower end,
// are ruled out; the others are ranked exactly, by upper end, until the
// next upper end falls below the leg's worst. The result is the exact
// scan's, bit for bit (TestVecSetPrefilterExact and
// TestPrefilterExactOnFixtures; FuzzBound checks the interval on hostile
// vectors): the codes change only the work. On random 384-d unit
// vectors the interval is ±0.015 wide and a leg of depth 100 over 10,000
// rows ranks about 2% of them exactly (TestPrefilterExactOnFixtures logs
// it). Smaller sets, sets not cached and queries of another dimension are
// scanned exactly; VectorPrefilterMin < 0 turns the pre-filter off.
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
// file: SQLite's locking keeps it consistent. A batch waits for another
// process's write lock for up to Config.BusyTimeout, trying again after
// 50 µs, doubling to 2 ms (SQLite's own busy handler, which readers keep,
// sleeps 1 to 100 ms between tries, long beside a batch of a few
// milliseconds).
//
// No commit checkpoints the WAL (the writer's wal_autocheckpoint is 0):
// a goroutine of the store copies it into the database file with a
// passive checkpoint on a read connection, 200 ms after a commit and at
// most once per 200 ms while commits go on (checkpoint.go). SQLite's
// automatic checkpoint would run inside the commit that takes the WAL
// past 1,000 pages, and every write queued behind it would wait for the
// copy and the database file's fsync. Each process on a file runs its
// own; a checkpoint another process is running is left to it.
//
// # Group commit
//
// Concurrent writes share a transaction, and so one commit and one fsync
// (groupcommit.go). A write is queued; the caller that finds no batch
// running takes every queued write, up to 64, runs each in queue order
// under a savepoint of one BEGIN IMMEDIATE transaction, commits, and then
// answers each caller: nothing is acknowledged before the commit that
// holds it is on disk. A caller's context counts until a batch takes its
// write: one that ends while the write is queued gets the context's
// error, and the write never runs; once taken, the write runs to its end
// under the batch's context, so that no caller's cancellation interrupts
// the transaction the batch shares. A later write of a batch sees the earlier ones, so
// ETag checks (store.CreateOnly, a stored ETag) are decided exactly as if
// the writes had committed one by one in that order. A write that fails is
// rolled back to its savepoint and gets its own error, after the batch's
// commit (so that a write that lost an ETag race reads the winner), while
// its batch-mates go on; one that ends the whole transaction (SQLite rolls it
// back itself on some errors, an interrupted statement among them) gets
// its error and the others run again in a new transaction; a commit that
// fails is retried write by write, so each caller hears of its own write
// only. A caller whose context ends while its write is still queued gets
// the context's error and its write never runs. Each process batches its
// own writes; processes sharing a file take SQLite's write lock in turn as
// before.
//
// The statements of the write paths are prepared once on the writer
// connection (stmts.go), each after the first batch that runs it:
// compiling a write to a table with FTS5 triggers costs more than running
// it, and a store opened for a few writes compiles only theirs. The documents a batch writes without a
// terms row are tokenized together at its end, one pass per kind for all
// the batch's users, before the commit.
//
// # Deletion
//
// Deletes are for good: secure_delete is on, so freed content is
// overwritten. DeleteUser also rewrites the FTS5 segments ('optimize') and
// checkpoints and truncates the WAL, so that no byte of the user's words or
// ids stays in the files. DeleteSession removes a session's document and
// turns in one transaction. The deletion log (store.DeletionLog) is the
// table deletion_log, which belongs to no user and outlives DeleteUser;
// EraseDeletionNames blanks a subject's clear names in place and
// checkpoints the WAL likewise.
//
// # Schema versions
//
// PRAGMA user_version holds the schema version; Open applies the missing
// migrations in order in one transaction, and refuses a file written by a
// newer version (ErrSchemaTooNew) or by another application. Version 2 added
// the turns and user state tables, version 3 the deletion log, version 4
// the terms rows (a migrated file's documents get theirs at their first
// load).
package sqlite
