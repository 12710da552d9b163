// Package prompts holds every prompt agentmemory sends to a model, as
// text/template files embedded in the binary (templates/*.tmpl), with a
// typed render function and a typed, defensive parser of the answer for
// each.
//
// # Rendering
//
// A rendered prompt (Rendered) is two messages. The system message starts
// with the prompt's marker line, Marker(name) — MarkerPrefix followed by
// the name, e.g. "agentmemory:prompt=cumulative_summary" — and holds the
// instructions. The marker lets llm/offline, the deterministic no-LLM
// client, recognise the prompt and answer it by rule; a real model reads it
// as an opaque tag. The user message holds the data.
//
// # Data is fenced
//
// Conversation text and memory are data, never instructions. Each piece of
// data is rendered inside a block whose tag lines stand alone (Fence):
//
//	<conversation>
//	user: I want to roll over my old 401k.
//	assistant: We can move it into an IRA.
//	</conversation>
//
// and the system message tells the model to treat block contents as
// material and to ignore any instruction inside them. Every tag-like
// occurrence of a block name inside data ("</conversation>", "< /NEW_TURNS",
// any case) has its '<' escaped as "&lt;" (Neutralise), so data can neither
// close its block nor open another. Messages inside a block are
// "role: text" lines; a message's further lines are indented by two spaces
// (FormatTurns, ParseTurns). Blocks reads the blocks back: it is the one
// reader of the format, used by llm/offline.
//
// # Overrides
//
// Dir (or FS) loads the embedded set with any "<name>.tmpl" file of a
// directory replacing the embedded template of that name, without
// recompiling. An override is checked when it is loaded: it must parse,
// keep the marker as its first line, define the "user" template and, when
// rendered with sample data, keep the marker first and every data block of
// the prompt. Errors name the file.
//
// # Parsing answers
//
// Model output is untrusted, and a model on a server without JSON mode
// (one that refuses response_format; see llm/openai) wraps its JSON as it
// likes. Every parser reads JSON with FindObject, the one lenient
// extractor: the first object with an expected field wherever the model
// put it (in a code fence, after prose, after a <think> block), trailing
// commas and comments repaired. ParseInteractionMetadata,
// ParseSessionSummary and ParseCumulativeSummary take the first usable
// JSON object (or text), ignore fields of the wrong type, trim,
// deduplicate and cap lists, and fail with an error wrapping ErrUnusable
// when nothing usable is left. ParseJudgement reads the answer_judge
// prompt's verdict (CORRECT or WRONG) from a JSON object or, failing that,
// from the words of the text, and refuses output that names both.
package prompts
