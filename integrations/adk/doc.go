// Package adk gives an agent built with Google's Agent Development Kit for Go
// (google.golang.org/adk) agentmemory's long-term memory.
//
// # Two hooks
//
// One Memory serves both of ADK's memory hooks:
//
//   - It is a memory.Service (the runner's Config.MemoryService, which
//     ADK's load_memory and preload_memory tools search).
//     AddSessionToMemory stores the ADK session's completed invocations as
//     agentmemory turns, keyed by their event ids, so adding a session again
//     stores nothing twice; pruning into interaction documents follows.
//     SearchMemory is agentmemory's direct retrieval, each entry dated and
//     carrying the ids of the documents, session and events it came from.
//   - Plugin returns an ADK plugin that does for every invocation what
//     provider.MemoryProvider's Invoking and Invoked do for an agentmemory
//     run: before each model call it puts the memory block (the long-term
//     profile and recent session summaries, the cumulative summary, fenced
//     as data) into the system instruction, replaces the session history
//     with the budgeted active turns and offers the retrieve_user_facts tool;
//     after the invocation it stores the turn.
//
// # Sessions
//
// EndSession ends a memory session: its summary is written and reflection
// queued, as provider.MemoryProvider.EndSession does. Under
// provider.ModeIdle an idle session ends by itself.
//
// ADK's user id is agentmemory's user id; an ADK session is the memory
// session with the same id. An ADK session has no end, though, and may go
// on after its memory session ended: later invocations go to a new memory
// session, with the id followed by "~2" (then "~3"…), which begins with the
// ended one's summary. A memory failure is logged (log/slog) and the ADK
// run goes on without that memory.
package adk
