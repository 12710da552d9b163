// Package agent runs a chat agent — a model answering a conversation, with
// tools it may call — in the shape of Microsoft Agent Framework's: messages,
// tools, a model-agnostic ChatClient, a Session that survives restarts, and
// ContextProviders whose Invoking and Invoked hooks run around every agent
// run. Long-term memory (package provider) is one such ContextProvider.
//
// # A run
//
// A run goes like this:
//
//  1. Every ContextProvider's Invoking hook is called once with the new input;
//     each returns an AIContext (extra instructions, messages, tools).
//  2. The request is assembled: one system message (the agent's instructions
//     followed by every provider's instructions), the providers' messages,
//     the session history (unless a HistoryKeeper provider supplies it), then
//     the new input. Tools are the agent's own followed by the providers'.
//  3. The ChatClient is called. Tool calls in its answer are executed and
//     their results sent back, in a loop bounded by Config.MaxToolRounds.
//     An unknown tool or malformed arguments become an error message the
//     model sees, not a failed run.
//  4. Every provider's Invoked hook is called with the input, the messages
//     the run produced and the run's error, if any.
//
// # Streaming
//
// RunStream is the same run, yielded as it happens: text and tool-call
// fragments, each message once complete, and last the Response. A client
// that implements ChatStreamer streams token by token; any other answers
// each model call as one delta. A turn is stored (Invoked hooks, session)
// only once its answer completed: a consumer that stops reading early, or
// a ctx cancelled mid-answer, abandons the run and nothing is recorded.
//
// # Failures
//
// A provider that fails is logged with log/slog and the run continues
// without its contribution: memory and other context are enhancements, never
// dependencies. So does a run whose model refuses tools (ErrToolsUnsupported)
// when every tool offered is a provider's: it is asked again without them.
package agent
