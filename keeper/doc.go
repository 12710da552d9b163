// Package keeper holds the memory of one conversation while it happens: it
// stores every turn the moment it arrives, keeps what the model should see
// of the conversation so far, and turns older turns into records that
// later searches find.
//
// A [Keeper] opens sessions on a store; a [Session] is one conversation
// of one user. The provider package drives both around every agent run;
// use this package directly to keep a conversation's memory without an
// agent.
//
// # What the model sees
//
// [Session.RunMemory] returns three parts, within Config.TokenBudget:
//
//   - the session initialization block, loaded once when the session
//     opens: the user's long-term profile and the summaries of their most
//     recent sessions (Config.RecentSessions);
//   - the cumulative summary: one running summary of every turn already
//     folded out of the conversation, rewritten by the model at each
//     prune;
//   - the active turns: the last Config.ActiveTurns turns, word for word.
//
// Over the budget, the oldest active turns give way first, then the
// oldest session summaries; the profile and the cumulative summary never
// do (TestBudgetDropsOldestTurnsThenSummariesNeverProfile).
//
// # Storing turns
//
// Every turn is stored at once as its own record (store.AppendTurn,
// numbered by the store, idempotent by turn id), so a crash or restart
// loses nothing and any number of processes may write one session: Open on
// the same session id resumes where the last acknowledged turn left off
// (TestResumeAfterCrash). The session document holds only small state (the
// cumulative summary, how far pruning has gone).
//
// # Pruning
//
// Turns are folded out of the conversation in chunks of Config.K. When K
// turns have accumulated past the last prune, [Session.Prune] flattens
// them into one store.Interaction (id derived from the session and the
// chunk's first turn, so a retried or resumed prune replaces instead of
// duplicating) with the model's metadata (summary, topics, entities) and
// vectors, and folds them into the cumulative summary
// (TestPruneEveryKTurns). [Session.End] prunes what is left, even a chunk
// shorter than K, and writes the session summary that later sessions'
// initialization blocks show.
//
// # When the model fails
//
// [Session.ForcePrune] and [Session.End] store a chunk even when the model
// or embedder fails, flagged as incomplete; [Session.RetryMetadata] and
// [Keeper.RetrySummaries] complete them later (TestModelFailuresDuringPrune).
//
// The keeper makes model calls synchronously; the provider package runs
// them off the hot path.
package keeper
