// Package responses translates OpenAI's Responses API to and from Chat
// Completions, so that a gateway can serve POST /v1/responses — streamed
// or not — on top of a model server that speaks only Chat Completions
// (Ollama, vLLM, llama.cpp, Azure OpenAI deployments, OpenAI itself). It
// holds no memory logic and no HTTP server: ParseRequest and
// Request.ChatBody translate the request, FromChat the answer, and Stream
// a streamed answer, event by event.
//
// # Requests
//
// ParseRequest reads a Responses create request and ChatBody writes the
// Chat Completions body:
//
//   - model, temperature, top_p, user and stream keep their names; stream
//     also asks for the usage chunk, which the final event needs.
//     stream_options.include_obfuscation is kept. metadata is echoed in
//     the response but not sent: OpenAI's Chat Completions accepts it only
//     with store: true, which would store the completion there.
//   - instructions become the first message, a system message; ChatBody's
//     prepend messages (a gateway's memory block and earlier turns) follow
//     it, then the input.
//   - input, a string or a list of items, becomes messages. A message item
//     of role developer becomes a system message (servers such as Ollama
//     know only system); input_text and output_text parts become text,
//     input_image an image_url part, input_file a file part. A
//     function_call item joins the assistant message just before it as a
//     tool call, or starts one; a function_call_output item becomes a tool
//     message. reasoning items are dropped: they are encrypted for
//     OpenAI's servers.
//   - tools, flattened in Responses ({type, name, description, parameters,
//     strict}), are nested again ({type: function, function: {…}});
//     tool_choice likewise, allowed_tools included. tool_choice and
//     parallel_tool_calls are sent only with tools, as OpenAI's Chat
//     Completions requires. A function tool
//     that does not set strict stays non-strict, as Chat Completions has
//     it (the Responses API would make its schema strict); a client that
//     wants strict arguments says strict: true.
//   - text.format becomes response_format (json_schema, json_object; text,
//     the default, is left out for the servers that know no
//     response_format); text.verbosity becomes verbosity.
//   - max_output_tokens becomes max_completion_tokens, reasoning.effort
//     reasoning_effort; top_logprobs, or include with
//     message.output_text.logprobs, turns on logprobs.
//
// A field the package does not know is sent upstream verbatim (in
// Request.Passthrough, where a gateway deletes its own extensions first):
// service_tier, prompt_cache_key, safety_identifier, seed and the fields
// of later API versions reach the model server unchanged.
//
// The Responses-only fields never reach the upstream. store,
// previous_response_id, conversation, include and truncation are parsed
// into Request for the gateway to act on: the upstream keeps no chain, so
// a gateway that honours previous_response_id supplies the earlier turns
// itself. max_tool_calls, context_management and background (when false)
// are held in Request.Withheld and have no effect.
//
// # Errors
//
// What cannot be translated is refused, never dropped in silence: a hosted
// tool (web_search, file_search, mcp…) in tools or tool_choice, a stored
// prompt, background: true, an item_reference, an image or file by
// file_id that lives on OpenAI's servers. These errors wrap
// ErrUnsupported; malformed requests wrap ErrInvalid. Both name the field,
// input item (input[3].content[1]) or tool at fault, and both are HTTP 400
// for the client.
//
// # Answers
//
// FromChat turns a Chat Completions answer into a response object: the
// text (and a refusal) as a message item whose output_text part has empty
// annotations, each tool call as a function_call item, usage renamed
// (prompt_tokens to input_tokens, with the cached and reasoning token
// details), and the request's settings echoed as the API echoes them. A
// finish_reason of length makes the response incomplete, with
// incomplete_details.reason max_output_tokens (content_filter likewise,
// with reason content_filter). The Result also carries
// the answer as an agent.Message, so a gateway records the turn
// (Request.Input, then Result.Message) as an agent run would.
//
// # Streaming
//
// A Stream takes the upstream's chunks one at a time and writes the
// Responses API's server-sent events, each with an event: line and a
// sequence_number: response.created and response.in_progress, then for
// each output item response.output_item.added, its content
// (response.content_part.added, response.output_text.delta…, .done,
// response.content_part.done, or response.function_call_arguments.delta…,
// .done) and response.output_item.done, and last response.completed (or
// response.incomplete) with the whole response object. Tool calls are told
// apart by their chat index, or by a new id at the same index (servers that
// send each call whole), and may interleave; a message item is closed when
// a tool call begins, as the API closes it. Start writes the opening events
// before the first chunk, for a gateway that answers as soon as the
// upstream accepted the request. An upstream error chunk or a broken
// connection is ended with Fail (response.failed); a stream that stops
// before its finish_reason ends with response.failed too, and Finish
// returns ErrStreamCut: no turn is recorded for an answer that did not
// complete.
//
// The event and object shapes are those the official openai-go SDK reads:
// the package's tests serve its output to client.Responses.New and
// client.Responses.NewStreaming.
package responses
