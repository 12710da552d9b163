// Package memoryservice serves agentmemory over HTTP as the Memory Store
// API of Microsoft Foundry (Azure AI Foundry), so that an application in
// any language, with the official clients (such as npm @azure/ai-projects'
// project.beta.memoryStores), reaches the same memory as the Go library.
// Service is an http.Handler; cmd/agentmemory-server runs it.
//
// # The API
//
// A memory store is a definition kept in the store itself, under a
// reserved user id (RegistryUserID). A scope of a memory store is one
// agentmemory user, UserID(name, scope), so no scope is reachable through
// another store. The store's chat_model and embedding_model are the
// clients Config.Models gives for those names, checked when the store is
// created (without Models every store runs on Config's Chat, Mini and
// Embedder); its user_profile_details guide its provider's reflection.
//
// Memory items of kind user_profile are a scope's insights and its
// long-term profile, chat_summary items its session summaries, and
// procedural items, in a store with procedural_memory_enabled, its
// insights of ProceduralCategory. search_memories is agentmemory's
// retrieval; with previous_search_id it continues an earlier search,
// whose conversation is kept in the store for Config.SearchTTL. delete_scope
// is provider.MemoryProvider.ForgetUser; a forget that could not be
// logged or erased from the store's files is a retryable 503, and the
// retry (or the sweep) completes it. A store's default_ttl_seconds
// hides the memories last written longer ago, and a sweep every
// Config.SweepInterval deletes them.
//
// # Updates and the queue
//
// update_memories records its items as turns of a memory session of the
// scope, and the update's record, before it answers 202 with the address
// to poll. After update_delay the session ends (pruning, summary,
// reflection, the long-term profile) and the update lists the memory
// items it created, updated and deleted, and the tokens its model calls
// spent. An update of the scope while one is queued supersedes it and
// continues its session. At most Config.UpdateWorkers updates run at
// once on a replica; the others due wait their turn. Records are kept in
// the store, so an accepted update completes after a restart; a finished
// one's is deleted after Config.UpdateRetention.
//
// # Replicas
//
// Any number of Services (processes) can serve one store: every piece of
// coordination is a document in the store, written under an ETag. Each
// replica polls the markers of the updates due every Config.PollInterval
// and claims one with a write of its record naming the replica
// (Config.ReplicaID) until Config.LeaseTTL from now, renewed while the
// update runs; a claim that expires (its replica died) is taken over by
// another replica, and Close hands back the claims of the runs it cuts
// short. A run holds the scope's lease (package lease), so no two
// replicas write a scope's memories at once; an accept supersedes the
// scope's queued update, which the scope's queue record names, whichever
// replica accepted it; search records are kept in the store; one replica
// at a time sweeps. An update run twice (its first holder died mid-run)
// makes its memories once. QueueStats reports the queue.
//
// # Keys and limits
//
// Config.Keys are the API keys accepted, as "Authorization: Bearer <key>"
// or "api-key: <key>"; a key may be limited to some memory stores. A body
// is capped at Config.MaxBodyBytes and its fields are bounded; a request
// over a bound is answered 400 (413 for the body) naming the field.
//
// # MCP
//
// /mcp/{name}/{scope} serves the tools of package mcpserver for one scope,
// over stateless streamable HTTP, behind the same keys.
//
// # Failure
//
// Errors are answered in the API's shape, {"error": {"code", "message",
// "param", "type"}}; an internal failure is a 500 that names nothing of
// it, and is logged. Close leaves queued updates queued in the store and
// waits for those running; one cut short is handed back, and any replica
// runs it again.
package memoryservice
