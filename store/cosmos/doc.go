// Package cosmos is the Azure Cosmos DB for NoSQL backend of store.Store,
// on azcosmos.
//
// # Layout
//
// One database (default financial_advisor_memory) holds three containers,
// interactions, insights and session_summaries, each partitioned by
// /user_id. With Config.CreateIfNotExists, Open provisions them (see
// ContainerProperties): a vector embedding policy (float32, cosine,
// Config.Dimensions) and a vector index (quantizedFlat, or diskANN) on each
// vector path; a full-text policy (en-US) and full-text index on each text
// path; an indexing policy that range-indexes every path (/*) except the
// vector paths and _etag, with the composite indexes the ordered listings
// use; and no throughput (serverless) or autoscale up to
// Config.AutoscaleMaxRU per container.
//
// Turn records (store.AppendTurn) and the user state live in the
// session_summaries container, in the user's partition beside the
// sessions, marked by a doc_type field ("turn", "user_state") that session
// documents do not have; every session query keeps to documents without
// it. A turn's item id is derived from its session and number, so two
// writers taking the same number conflict (409) and the later one moves
// on: an append is one query and one create-only write. DeleteSession
// queries the ids of the session document and its turns and deletes them.
//
// The deletion log (store.DeletionLog) is in the session_summaries
// container too, under the partition key value store.DeletionLogPartition,
// which the store refuses as a user id: no user's call reaches it and
// DeleteUser leaves it. Each record is one item, doc_type "deletion", with
// the id "deletion-" and its zero-padded number, so AppendDeletion (a query
// for the last number, then a create-only write) conflicts (409) when two
// appenders take the same number. The item's user_id is the partition key;
// the record's clear user id is stored as name_user_id.
//
// # Prerequisites
//
// The account must allow these containers, and Open names what it lacks
// instead of the service's bare 400, as a *PrerequisiteError whose
// sentinel errors.Is matches and whose Fix says what to do:
//
//   - ErrVectorSearchDisabled: the account lacks the NoSQL vector search
//     capability; `az cosmosdb update --resource-group <resource-group>
//     --name <account> --capabilities EnableNoSQLVectorSearch` enables it.
//   - ErrSharedThroughput: the database has shared throughput, where
//     vector indexes are not supported; name a database without it, which
//     Open creates with none.
//   - ErrDimensionsOverLimit: a flat index holds at most 505 dimensions,
//     quantizedFlat and diskANN 4,096; found in the Config, before any
//     request.
//
// An account that refuses the full-text policy (the older full-text
// documentation's capability, EnableNoSQLFullTextSearch) still gets its
// containers, created without full-text policy and indexes, and the store
// says so once per Open, at Warn: no query needs them (see # Full-text
// candidates). Store.Prerequisites reports both
// capabilities as the containers show them; `agentmemory check` prints it.
//
// # Requests
//
// Every request names the user's logical partition
// (azcosmos.NewPartitionKeyString(userID)); queries also filter on
// c.user_id, so no query ever spans users. Reads by id are point reads.
// Queries are parameterised: their text is built only from this package's
// constants, and every value (user id, ids, filters, words, vectors, TOP)
// travels as a parameter.
//
// PutSession with an ETag is a replace with If-Match: 412 (changed) and 404
// (deleted) are store.ErrConflict. Other statuses map to the sentinels: 404
// is ErrNotFound, 409 ErrConflict, 413 and a 400 on a write ErrInvalid.
// Throttling (429) is retried by azcore's retry policy, which waits for the
// service's x-ms-retry-after-ms. Stats reports requests and request units
// (RU) per request kind, and each request is logged at Debug with its
// charge.
//
// # Search
//
// Each leg is its own single-partition query, run concurrently:
//
//   - vector, per field: SELECT TOP @k c.id, VectorDistance(c.<field>, @v)
//     AS score ... ORDER BY VectorDistance(c.<field>, @v), k =
//     max(TopK, 100), dropping similarities under MinSimilarity;
//   - full text: the candidates holding any query word, read with their
//     text fields and ranked by BM25 here (k1 1.2, b 0.75), with the
//     document count and average length of the filtered documents from one
//     aggregate query; the best max(TopK, 100) take part in fusion, as in
//     store/sqlite.
//
// The legs are fused with driver.Combine, so Hit.Score is the RRF of the
// contract over the legs' ranks (exactly the contract's with the default
// exact vector search, see # Vector search), and the winners are loaded
// with one more query. The
// service's ORDER BY RANK RRF(VectorDistance(...), FullTextScore(...)) is
// not used: FullTextScore and RRF cannot be projected, so it gives an order
// but neither Hit.Score nor Similarity nor TextScore, and its BM25 (with
// stemming and stop words) is not the contract's whole-word match.
//
// # Full-text candidates
//
// A document is a full-text candidate when it holds a query word:
// ARRAY_CONTAINS over search_terms, the distinct lower-cased words of the
// kind's text fields (list fields included) that the store writes with
// every document, each word a parameter. These are exactly the documents
// whose BM25 over those words is above zero, whatever the service's
// full-text index makes of them. The service's FullTextContainsAny is not
// used: its index drops English stopwords and does not search arrays of
// strings (a full-text path cannot name array elements), so a document
// holding a query word only in key_topics, metadata.entities or
// metadata.mentioned_topics, or only as a word the service calls a
// stopword ("it", "to", "the"), was never a candidate on a real account;
// and its stemming found candidates that the whole-word scores then
// dropped. Config.FullText is ignored. ARRAY_CONTAINS is served by the
// range index every path has; the containers' full-text policy and indexes
// are still provisioned, and no query of the store needs them.
//
// At most Config.MaxTextCandidates candidates are read with their text and
// scored, and when more match, the ones read are chosen best first, not as
// the service returns them: the candidate query asks for one more than the
// cap, and only if that one comes back does a scan list the candidates
// without their text (their id, search_length and which query words each
// holds; at most ten times the cap), rank them by the BM25 each would have
// if it held each of its query words once (a lower bound of its score,
// from exact document counts over the list and the filtered documents'
// statistics: rare words and short documents first), and read the text of
// the best MaxTextCandidates that the first query did not. The BM25 of the
// documents read is exact; a document holding a frequent word many times
// can lose its place to one holding more of the query's words once. A
// text search is so three queries under the cap (statistics and
// candidates concurrently, then the hits) and five past it (the scan, then
// the best candidates' text): on the test server, 14–31 ms under the cap
// and 35–55 ms past it (BenchmarkTextSearch, 200 matches, cap 50), against
// 44–54 ms and 38–55 ms with the service's predicate before; the service's
// own request charge cannot be measured here.
//
// # Vector search
//
// By default (Config.VectorSearch VectorSearchExact) every VectorDistance
// is a brute-force scan of the user's exact vectors (third argument
// true): similarities and ranks are exactly the contract's, the same as
// store/sqlite, for a user of any size. The scan stays in the user's
// logical partition; its charge grows with the user's vectors. Exact is
// the default because a user's memory is small for most users and because
// the alternative changes results as a memory grows: the service answers
// from its quantizedFlat and diskANN indexes only once a partition holds
// 1,000 vectors, and scans exactly below that (as documented).
//
// VectorSearchIndex lets the service use the container's index instead,
// which approximates:
//
//   - flat (at most 505 dimensions) is an exact k-nearest-neighbour scan;
//   - quantizedFlat scans compressed (quantized) vectors, with a candidate
//     list sized by QuantizedVectorListMultiplier (service default 5):
//     documented as slightly below 100% accuracy;
//   - diskANN searches a graph index (approximate nearest neighbours),
//     with a search list sized by SearchListSizeMultiplier (service
//     default 10); with a WHERE filter (every search here has at least
//     the user's) it may return fewer than k, and FilterPriority weighs
//     the filters against the vector search.
//
// Similarities returned are computed by the service for the documents it
// found; a document the index missed is simply absent. The test server
// computes every VectorDistance exactly, so recall at 10 against the exact
// scan measured there is 1 by construction (TestVectorRecall);
// TestVectorRecallLive measures the service's own figure on a real
// account.
//
// # Tests
//
// The package's tests run store/storetest over HTTP against the Cosmos
// protocol test server of internal/cosmostest (Node.js; installed by
// .ci/run), whose full-text functions drop stopwords and skip arrays as the
// service does and which refuses container creation as the service does
// (missing capabilities, shared throughput, dimension limits), and against
// a real account when AZURE_COSMOS_ENDPOINT is set (with AZURE_COSMOS_KEY,
// or Entra ID through DefaultAzureCredential). Both also run
// storetest.RunTextCandidates with MaxTextCandidates 5; the real account
// also storetest.RunLargeUser, a user past 1,000 vectors, and the recall of
// each index type against the exact scan.
package cosmos
