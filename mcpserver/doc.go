// Package mcpserver serves one user's agentmemory over the Model Context
// Protocol (github.com/modelcontextprotocol/go-sdk), so that any MCP client
// — a desktop assistant, an IDE agent, another framework — can read and
// write the same long-term memory as a Go agent wrapped with
// provider.MemoryProvider. [New] makes the server; cmd/agentmemory-mcp
// runs it on standard input and output.
//
// # One user
//
// A server is bound to one user (Config.UserID). No tool takes a user id:
// whatever a client sends, it reaches that user's memory and no other.
// Session and insight ids a client sends are looked up within that user
// only, so another user's id is simply not found.
//
// # Tools
//
// The first four read; the others write, and are left out with
// Config.ReadOnly:
//
//   - retrieve_user_facts(query): cited facts from the whole memory, as the
//     provider's tool answers them (the mini-agent when a model is
//     configured, direct search otherwise);
//   - search_memory(query, kinds, top_k): the ranked documents themselves,
//     as structured output;
//   - get_user_context(): the long-term profile and the recent session
//     summaries, what a new session starts with;
//   - list_insights(category): the active insights, with their ids;
//   - record_turn(session_id, user, assistant, turn_id): stores one
//     exchange in a memory session (pruned into interactions every K
//     turns); with a turn_id, recording the same turn again is a no-op;
//   - end_session(session_id): ends it (final prune, summary, reflection);
//   - update_profile(): folds new insights into the long-term profile;
//   - forget_insight(insight_id, include_conversation): deletes an insight
//     and what was merged from it, rebuilds the profile without it, and
//     with include_conversation also forgets the sessions it came from;
//     the profile's id deletes the profile;
//   - forget_session(session_id), forget_interaction(interaction_id):
//     delete a conversation, or one stored excerpt of it, with the
//     insights drawn from it alone and the profile rebuilt without them.
//
// Each forget tool answers with its receipt (what was deleted and
// rewritten, and the deletion-log record); see provider.Receipt.
//
// # Bounds and annotations
//
// Every tool advertises its bounds in its input schema (string lengths,
// top_k's range, the document kinds and insight categories) and holds to
// them: arguments that break the schema, like any other bad input, are a
// tool error (isError) naming the argument and the limit.
//
// The annotations are statements about the tools: the first four are
// read-only; the writing ones are idempotent (record_turn through its
// turn_id: without one a repeated call records the exchange again);
// update_profile (which rewrites the profile) and the forget tools are
// destructive; no tool reaches beyond this memory (openWorldHint false).
//
// Memory text in tool results is data for the client's model, and is
// labelled so: the results say where each piece comes from, never what to
// do.
package mcpserver
