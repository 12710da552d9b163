// Package retrieval finds what memory holds about a user that bears on a
// question: it searches the user's past conversations (interactions),
// insights and session summaries, and answers with the facts found, each
// citing the document it came from.
//
// A [Retriever] answers for one store. provider.MemoryProvider offers it to
// an agent as the retrieve_user_facts tool ([Retriever.Tool]) or runs it
// before every user message ([Retriever.Auto]).
//
// # Two ways to answer
//
//   - Direct ([Retriever.Search]): the three searches (full text, and
//     vectors unless the embedder is lexical), scored with vector
//     relevance relative to the query's own similarities (never an
//     absolute cosine: TestRelevanceDoesNotDependOnTheCosinesScale), fused
//     and formatted with citations. No model is involved; it is the
//     default when no model is configured, the fast path when one is, and
//     what retrieve_user_facts answers with when the mini-agent overruns
//     its budget or fails
//     (TestRetrieveDegradesToTheDirectSearchWhenTheMiniAgentFails).
//   - Mini-agent: a small agent on Config.Mini with three search tools
//     (search_interactions, search_insights, search_session_summaries)
//     decides what to search, may search several times, and writes a
//     compact answer citing each fact's document id and date. A mini
//     model that refuses tools (agent.ErrToolsUnsupported: a local model
//     served by Ollama without tool support, say) is not asked again: the
//     direct search answers instead
//     (TestMiniModelWithoutToolsFallsBackToTheDirectSearch).
//
// # Automatic retrieval
//
// [Retriever.Auto] retrieves for a user message only when it may need
// memory ([NeedsMemory]: not a greeting or thanks), and rewrites a vague
// follow-up ("and the other one?") into a standalone query first
// ([IsVague], [Retriever.Rewrite]) (TestAutoSkipsGreetingsAndRewritesFollowUps).
//
// # Isolation
//
// Every search is scoped to one user, fixed when the tool or call is made:
// no argument a model supplies can name another user
// (TestToolArgumentsCannotReachAnotherUser).
package retrieval
