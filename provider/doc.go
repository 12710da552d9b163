// Package provider gives an agent long-term memory: [MemoryProvider] is an
// agent.ContextProvider that, around every run of an agent, shows the
// model what it should remember about the user and stores what was said.
//
// Wrap an agent with it (agent.Config.ContextProviders) and everything
// else — the live conversation (package keeper), searching the user's
// history (package retrieval), learning lasting facts about the user
// (package reflection) and forgetting on request — happens through it.
//
// # Around every run
//
// Before each run (Invoking) it injects the session's memory — the session
// initialization block (long-term profile, recent session summaries), the
// cumulative summary, fenced and labelled as data, and the active turns as
// conversation messages — within a token budget, and keeps a manifest of
// exactly what it injected (LastManifest). It also reaches the user's
// whole memory (package retrieval): on demand through the
// retrieve_user_facts tool (the default), automatically for every user
// message that passes the pre-filter, or both (Config.Retrieval).
//
// After each run (Invoked) it stores the turn durably and returns; model
// work (interaction metadata, summaries) runs on a bounded background
// queue with retries, which Flush waits for and Close drains. A background
// job runs with the values (not the cancellation) of the context of the
// call that queued it, so a usage.Meter or a trace in it follows the work
// (TestBackgroundWorkCountsIntoTheCallersMeter).
//
// # Sessions
//
// A memory session is one conversation: Config.Mode says when it begins
// and ends (ModeManual: StartSession and EndSession; ModePerRun: one run;
// ModeIdle: until Config.IdleTimeout passes without a run). When a session
// ends, reflection of it is queued (Config.Reflection), and reconciliation
// and profile updates follow when Config.ReconcileEvery and
// Config.ProfileEvery say so.
//
// # Several instances on one store
//
// Any number of processes may share a store, each with its own provider,
// and a conversation may move between them. A memory session with work
// outstanding (an idle or per-run session not yet ended, an end and its
// follow-up: summaries, reflection) has a marker in the store (partition
// SweepUserID); every provider sweeps the due markers (Config.SweepInterval)
// and claims each with an expiry (Config.ClaimTTL) before doing its work,
// so what a process that died left is done by another, once
// (TestEndedSessionOfAKilledInstanceIsReflectedByAnother,
// TestIdleSessionOfADeadInstanceIsEndedByAnother). An idle end waits for
// the store to show the session idle, whichever process served its runs
// (TestIdleSessionKeptAliveThroughAnotherInstance).
//
// # Forgetting
//
// ExportUser writes everything kept about a user; ForgetInsight,
// ForgetSession, ForgetInteraction, ForgetBefore and ForgetUser delete
// what they name, everything derived from it included, and return a
// Receipt recorded in the deletion log (package erasure).
//
// # Failures
//
// A failing store or model never fails a run: the provider logs the error
// (log/slog) and the run goes on without that memory
// (TestFailingStoreNeverBreaksTheRun).
//
// One provider serves many users: a session's user is the agent session's
// UserID, or Config.UserID when the session has none
// (TestUsersAreIsolated).
package provider
