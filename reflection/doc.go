// Package reflection turns finished conversations into lasting memory
// about a user: short statements of what a conversation revealed
// (insights: "The user plans to retire at 60"), and one profile of the
// user built from them, which every new conversation starts with.
//
// A [Reflector] does the work for one store; provider.MemoryProvider runs
// it on its background queue when sessions end, or call it directly.
//
// # Session reflection
//
// ReflectSession and ReflectPending read a completed session's
// interactions and store what they reveal about the user as session
// insights, each with a category, a confidence, an importance and its
// provenance (the sessions and interactions it came from), or mark the
// session "no-insight" (TestReflectSessionStoresInsightsWithProvenance).
// No-insight sessions are kept and, once Config.AggregateAfter of them
// have gathered, reflected on together: small talk spread over several
// sessions can add up to something (TestNoInsightSessionsAreAggregated).
// ExtractSession does the same for the new part of a session still going
// on.
//
// # The long-term profile
//
// ReflectLongTerm folds the insights not yet processed into the user's
// one profile document (id store.LongTermID), which every new session's
// initialization block shows first
// (TestReflectLongTermFoldsUnprocessedInsights).
//
// # Reconciliation
//
// Reconcile shows the model the user's recent insights together and acts
// on what it finds: duplicates are merged into one new insight,
// contradictions keep the most recent. The losers are soft-deleted
// (store.Store.SupersedeInsight) with the reason and the winner's id, so
// an audit read still shows everything that ever applied to the user
// (TestReconcileMergesDuplicatesAndResolvesContradictions).
//
// # Guarantees
//
// Every call is scoped to one user, and calls for one user run one at a
// time (TestCallsForOneUserRunOneAtATime). Reflection is idempotent:
// insight ids are derived from the user, the sessions and the text, so a
// retried reflection rewrites the same documents; a session already
// reflected is skipped. Model output is untrusted: it is parsed by the
// prompts package, which keeps only insights of the configured categories
// and only the labels the prompt showed.
//
// The Reflector makes model calls synchronously.
package reflection
