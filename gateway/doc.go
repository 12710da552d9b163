// Package gateway is an OpenAI-compatible endpoint that remembers: an
// application already calling a model through Chat Completions or the
// Responses API points its client at the gateway instead (one changed base URL) and gets long-term
// memory, with no other change. The gateway forwards every request to the
// real model endpoint (Upstream: OpenAI, Azure OpenAI, or a compatible
// server such as Ollama or vLLM), puts what it remembers of the user into
// the request, and records the turn after the answer.
//
// # Routes
//
//   - POST /v1/chat/completions, streamed ("stream": true) or not. Every
//     request field the gateway does not interpret is forwarded byte for
//     byte: tools, tool_choice, response_format, logprobs, seed, n…
//   - POST /v1/responses, streamed or not, on an upstream that speaks
//     only Chat Completions: the request is translated into a Chat
//     Completions request (package gateway/responses) and runs through
//     the same exchange as chat completions — memory, upstream, tool
//     loop, record — and the answer is translated back.
//   - GET /v1/models, passed through.
//   - GET /v1/memory?user_id=U lists U's memories; DELETE /v1/memory/{id}
//     forgets one, DELETE /v1/memory?user_id=U everything of U, each
//     answering with the provider's receipt (provider.Receipt), which names
//     its deletion-log record.
//
// # Users and sessions
//
// A request's user is memory_context.user_id, else the X-Memory-User
// header, else the Chat Completions user field. A request with none is
// forwarded without memory (X-Memory: skipped; reason=no-user). Its
// session is the X-Memory-Session header, else metadata.session_id, else
// the user's current session. A session ends after Config.IdleTimeout
// without a request (the gateway ends it: EndSession), named or not, and
// its next request begins the next one. The idle time counts from the
// end of the session's last request: none ends while a request of it is
// in flight at the gateway, however long its answer takes, so its turn
// is in the session and its summary; a request that comes while the end
// is under way waits for it and goes on in the next session. Beyond
// Config.MaxSessions the least recently used session with no request in
// flight is ended (the least recently used of all when every one has).
//
// # The Responses API
//
// A Responses client sends no history: previous_response_id names it, and
// the gateway keeps the chain in the user's memory. A response id names
// the memory session its turn went to ("resp_", 24 random hex digits,
// "_", the session id in base64url; for a session the client named, the
// name); a request with previous_response_id goes on in that session, on
// any replica, after a restart. The session
// is looked up in the requesting user's own partition only: another
// user's id, an id the gateway did not give, or a request with no user is
// a 400 with code previous_response_not_found, as OpenAI answers an
// unknown id. Without previous_response_id a request begins a new chain,
// a new session (or the X-Memory-Session one).
//
// The upstream is sent the compressed context instead of the chain: the
// memory block, the keeper's active turns (provider Invoking's
// messages, which the Chat Completions door leaves out), and the input,
// after the request's instructions (not carried to the next request, as
// in the Responses API). The ContextTokensHeader states what was sent
// against the whole chain. Every answer is recorded, one calling the
// client's tools included: the client will not resend the call, so the
// next request's function_call_output items are preceded by the call,
// taken from the chain's last turn. "store": false records nothing.
//
// # One memory, three doors
//
// The gateway's users are scopes of one memory store of the Memory Store
// API (Config.Memory, package memoryservice): user U is the agentmemory
// user memoryservice.UserID(store, U). What the gateway records is listed,
// searched and deleted through the Memory Store API and over MCP too.
// The gateway records and forgets through the memory store's own
// provider.MemoryProvider, the one the Memory Store API uses, not one of
// its own on the same store: a provider holds open sessions in memory,
// and a forget through one provider does not reach what another holds,
// so with two a scope deleted through the API would leave the gateway
// writing into a session that no longer exists (and the other way
// round; TestAScopeDeletedThroughTheMemoryStoreAPIStaysForgottenAtTheGateway).
// That provider leaves sessions open until told (provider.ModeManual),
// so the gateway ends its own when they idle: when a timer fires, only
// once the store shows the session idle (provider's EndSessionIfIdle),
// so that behind several replicas one replica's timer does not end a
// session another is serving, and one replica ends it
// (TestTwoReplicasAgreeOnTheSessionAndItsIdleEnd). It searches with a
// retrieval.Retriever of its own on the store's models, for its rewrite
// mode and the per-request memory_config. The memory store's TTL
// (default_ttl_seconds) applies at this door too.
//
// # Before the model
//
// The session's memory (provider.MemoryProvider.Invoking: the long-term
// profile, recent session summaries, the session's cumulative summary,
// within the keeper's token budget) and the memories a search finds (with
// their citations) go in as one system message, fenced as data, merged
// after the client's own leading system message or placed first. The
// keeper's active turns are not injected: a Chat Completions client sends
// its history itself (the Responses door injects them). The search runs
// only when the pre-filter (retrieval.NeedsMemory) says the last user
// message may need memory, with the query rewritten from the client's
// recent messages (prepended by default, by the model with Config.Rewrite
// retrieval.RewriteLLM).
//
// memory_config tunes a request: enabled false forwards it without
// memory; retrieval_limit is the search's top k (0: no search);
// memory_types limits the kinds searched (interaction, insight,
// session_summary); similarity_threshold, from 0 to 1, keeps the memories
// whose score is at least that share of the best one's (scores are
// relative to the user's own documents, never absolute cosines);
// auto_store overrides Config.AutoStoreOff.
//
// With Config.RetrievalTool the model is also offered retrieve_user_facts,
// which the gateway runs in its own loop, unseen by the client; a
// client's own tool calls still reach the client. In a stream the
// gateway's calls are kept out of the events (the client's renumbered to
// close the gap), and the answer that follows them streams on in the
// same response, under the first answer's id.
//
// # After the model
//
// Once the answer is complete the turn is recorded durably (before the
// answer is written, or before a stream's [DONE] is passed on): the last
// user message, the answer, tool calls included. An answer that calls
// the client's tools records nothing until the client's next
// request brings their results and gets its answer; the turn is recorded
// then, whole. Pruning, summaries, and extraction of insights at a
// session's end run in the background, as the provider runs them.
//
// A client that disconnects mid-stream still has its turn recorded if the
// answer completed upstream (the gateway reads upstream to its end); if
// upstream did not complete the answer, no turn is recorded.
//
// # Failure
//
// A memory store that is down, or a memory search that fails, never fails
// a request: it is forwarded without that memory, the X-Memory header says
// degraded, and the failure is logged. An upstream's error is returned
// with its status in OpenAI's error shape; an upstream that cannot be
// reached is a 502. A request the gateway cannot read is a 400 naming the
// field or header.
//
// # The X-Memory header
//
// See Header for its values.
package gateway
