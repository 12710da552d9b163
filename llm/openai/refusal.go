package openai

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"

	"github.com/agentmemory/agentmemory/agent"
)

// feature is an optional part of a chat request that some
// OpenAI-compatible servers refuse with an error answer.
type feature uint8

const (
	// featureJSONObject is response_format json_object (JSON mode), which
	// LM Studio, for one, refuses.
	featureJSONObject feature = 1 << iota
	// featureJSONSchema is response_format json_schema (structured output),
	// which servers and API versions that predate it refuse. It is told
	// apart from JSON mode: a server may refuse one and accept the other.
	featureJSONSchema
	// featureTools is tools. Ollama refuses them for models whose template
	// has none; llama.cpp server without --jinja did too.
	featureTools
	// featureStreamUsage is stream_options (include_usage), which strict
	// request validators refuse as an unknown field.
	featureStreamUsage
)

// featureJSON is either kind of response_format.
const featureJSON = featureJSONObject | featureJSONSchema

// features lists every feature, in the order a refusal naming several is
// attributed: the ones whose omission leaves the answer usable first.
var features = []feature{featureStreamUsage, featureJSONObject, featureJSONSchema, featureTools}

// field returns the request field of f as the API names it, with the
// response_format type: the key of f in Chat.Refused.
func (f feature) field() string {
	switch f {
	case featureJSONObject:
		return "response_format:json_object"
	case featureJSONSchema:
		return "response_format:json_schema"
	case featureTools:
		return "tools"
	case featureStreamUsage:
		return "stream_options"
	}
	return fmt.Sprintf("feature(%d)", uint8(f))
}

// jsonWords are the words by which an error message names response_format.
var jsonWords = []string{"response_format", "response format", "json_object", "json_schema", "json mode", "structured output"}

// mentions are words by which an error message names each feature.
var mentions = map[feature][]string{
	featureJSONObject:  jsonWords,
	featureJSONSchema:  jsonWords,
	featureTools:       {"tool"},
	featureStreamUsage: {"stream_options", "stream options", "include_usage"},
}

// refusalWords are words by which an error message says a field is not
// accepted, as opposed to accepted with a wrong value.
var refusalWords = []string{
	"not support", "unsupported", "requires", "not allowed", "not permitted",
	"unknown", "unrecognized", "unrecognised", "not implemented", "extra_forbidden",
	"not available", "not enabled",
}

// notRefusals are phrases of error messages that name a feature but find
// fault with the request's content, not with the feature: OpenAI's
// "Invalid schema for response_format 'x': …" is a bad schema.
var notRefusals = []string{"invalid schema"}

// refusedFeature decides whether an error answer (status, the server's
// message) refuses one of the features a request used, and which. It is
// deliberately narrow, because a false positive changes later requests:
//
//   - only 400 and 422 answers (and 500 and 501 ones whose message says
//     the field is unsupported, as llama.cpp server's "Unsupported param:
//     tools" does) are refusals;
//   - the message must name the feature ("… does not support tools",
//     "'response_format.type' must be …", "Unknown parameter:
//     'stream_options'");
//   - tools are refused only with a word of refusal too ("not support",
//     "requires", "unknown"…): "Invalid 'tools[0].function.name'" is a bad
//     request, not a refusal, and tools are never dropped on a guess;
//   - a message finding fault with content ("Invalid schema for
//     response_format …") is no refusal;
//   - a 400 or 422 answer without any message (an empty or bodiless
//     answer) is read as refusing response_format, else stream_options,
//     when the request used one: the retry without it is harmless, and the
//     refusal is remembered only when the retry succeeds.
func refusedFeature(status int, msg string, used feature) (feature, bool) {
	clientErr := status == http.StatusBadRequest || status == http.StatusUnprocessableEntity
	serverErr := status == http.StatusInternalServerError || status == http.StatusNotImplemented
	if !clientErr && !serverErr {
		return 0, false
	}
	text := strings.ToLower(msg)
	if containsAny(text, notRefusals) {
		return 0, false
	}
	refuses := containsAny(text, refusalWords)
	for _, f := range features {
		if used&f == 0 || !containsAny(text, mentions[f]) {
			continue
		}
		if (f == featureTools || serverErr) && !refuses {
			continue
		}
		return f, true
	}
	if clientErr && strings.TrimSpace(msg) == "" {
		for _, f := range []feature{featureJSONObject, featureJSONSchema, featureStreamUsage} {
			if used&f != 0 {
				return f, true
			}
		}
	}
	return 0, false
}

func containsAny(s string, words []string) bool {
	for _, w := range words {
		if strings.Contains(s, w) {
			return true
		}
	}
	return false
}

// maxErrorBody bounds how much of an error answer is read for its message.
const maxErrorBody = 64 << 10

// errorAnswer records the status and body of the last attempt of one SDK
// call, when that attempt was answered with an error status. The SDK only
// reads an error body of the form {"error": {"message": …}}; LM Studio's
// {"error": "…"}, vLLM's {"object": "error", "message": …} and FastAPI's
// {"detail": …} lose their message there, or (a string "error") even the
// status. Attempts of one call run one after the other, so it needs no
// lock.
type errorAnswer struct {
	status int
	body   []byte
}

// capture returns the SDK middleware that fills a.
func (a *errorAnswer) capture() option.RequestOption {
	return option.WithMiddleware(func(req *http.Request, next option.MiddlewareNext) (*http.Response, error) {
		res, err := next(req)
		a.status, a.body = 0, nil
		if err == nil && res != nil && res.StatusCode >= 400 && res.Body != nil {
			body, _ := io.ReadAll(io.LimitReader(res.Body, maxErrorBody))
			rest := res.Body
			res.Body = struct {
				io.Reader
				io.Closer
			}{io.MultiReader(bytes.NewReader(body), rest), rest}
			a.status, a.body = res.StatusCode, body
		}
		return res, err
	})
}

// message returns the server's message in the recorded body: the "message"
// of an OpenAI-style error object, an "error" or "message" string, or a
// "detail" (a string, or FastAPI's list of {"loc", "msg"}), with the
// "param" the error names; else the body's text. It is cut to 500 bytes.
func (a *errorAnswer) message() string {
	return clipText(serverMessage(a.body), 500)
}

func serverMessage(body []byte) string {
	var obj map[string]json.RawMessage
	if json.Unmarshal(body, &obj) != nil {
		return strings.TrimSpace(string(body))
	}
	if inner := obj["error"]; len(inner) > 0 {
		var s string
		if json.Unmarshal(inner, &s) == nil {
			return s
		}
		var e map[string]json.RawMessage
		if json.Unmarshal(inner, &e) == nil && e != nil {
			obj = e
		}
	}
	var parts []string
	for _, k := range []string{"message", "detail", "msg"} {
		if s := flatText(obj[k]); s != "" {
			parts = append(parts, s)
		}
	}
	if p := flatText(obj["param"]); p != "" {
		parts = append(parts, "(param "+p+")")
	}
	if len(parts) == 0 {
		return strings.TrimSpace(string(body))
	}
	return strings.Join(parts, " ")
}

// flatText renders a JSON value of an error body as text: a string as it
// is, a list item by item, an object by its "loc" and "msg" (FastAPI) or
// "message"; null, other values and anything nested deeper than
// maxFlatDepth as nothing.
func flatText(raw json.RawMessage) string { return flatTextAt(raw, 0) }

// maxFlatDepth bounds how deep flatText reads, so that a hostile body of
// nested lists costs linear time.
const maxFlatDepth = 3

func flatTextAt(raw json.RawMessage, depth int) string {
	if len(raw) == 0 || depth > maxFlatDepth {
		return ""
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return strings.TrimSpace(s)
	}
	var list []json.RawMessage
	if json.Unmarshal(raw, &list) == nil {
		var out []string
		for _, it := range list {
			if t := flatTextAt(it, depth+1); t != "" {
				out = append(out, t)
			}
		}
		return strings.Join(out, "; ")
	}
	var obj map[string]json.RawMessage
	if json.Unmarshal(raw, &obj) == nil {
		var loc []any
		_ = json.Unmarshal(obj["loc"], &loc)
		msg := flatTextAt(obj["msg"], depth+1)
		if msg == "" {
			msg = flatTextAt(obj["message"], depth+1)
		}
		if len(loc) > 0 {
			parts := make([]string, len(loc))
			for i, l := range loc {
				parts[i] = fmt.Sprint(l)
			}
			return strings.Join(parts, ".") + ": " + msg
		}
		return msg
	}
	return ""
}

func clipText(s string, n int) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}

// refusals records the features a server refused, with the error of the
// refusal. It is safe for concurrent use.
type refusals struct {
	mu  sync.Mutex
	got map[feature]error
}

// get returns the refusal of f, or nil.
func (r *refusals) get(f feature) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.got[f]
}

// known returns the features of mask the server is known to refuse.
func (r *refusals) known(mask feature) feature {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out feature
	for f := range r.got {
		if mask&f != 0 {
			out |= f
		}
	}
	return out
}

// learn records the refusal of f; first reports that it is new.
func (r *refusals) learn(f feature, err error) (first bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, ok := r.got[f]; ok {
		return false
	}
	if r.got == nil {
		r.got = make(map[feature]error)
	}
	r.got[f] = err
	return true
}

// Refused returns the request fields this client has learnt the server
// refuses, each with the server's refusal: "response_format:json_object"
// (JSON mode), "response_format:json_schema" (structured output), "tools"
// and "stream_options". Requests leave a refused response_format type and
// stream_options out; requests offering refused tools fail with
// agent.ErrToolsUnsupported. It is empty until a refusal is seen.
func (c *Chat) Refused() map[string]string {
	c.refusals.mu.Lock()
	defer c.refusals.mu.Unlock()
	out := make(map[string]string, len(c.refusals.got))
	for f, err := range c.refusals.got {
		out[f.field()] = err.Error()
	}
	return out
}

// usedFeatures returns the optional features req uses.
func usedFeatures(req *agent.ChatRequest, stream bool) feature {
	var used feature
	switch {
	case req.ResponseFormat == nil:
	case req.ResponseFormat.Type == agent.JSONSchema:
		used |= featureJSONSchema
	default:
		used |= featureJSONObject
	}
	if len(req.Tools) > 0 {
		used |= featureTools
	}
	if stream {
		used |= featureStreamUsage
	}
	return used
}

// without returns req without the features of drop. Without
// response_format, a JSON schema the request asked for is given to the
// model in words instead, at the end of the first system message (or in a
// system message of its own), so the answer can still follow it.
func without(req *agent.ChatRequest, drop feature) *agent.ChatRequest {
	out := *req
	if drop&featureTools != 0 {
		out.Tools = nil
	}
	if drop&featureJSON != 0 && req.ResponseFormat != nil {
		out.ResponseFormat = nil
		if note := formatNote(req.ResponseFormat); note != "" {
			msgs := make([]agent.Message, 0, len(req.Messages)+1)
			if len(req.Messages) > 0 && req.Messages[0].Role == agent.RoleSystem {
				first := req.Messages[0]
				first.Text = strings.TrimRight(first.Text, "\n") + "\n\n" + note
				msgs = append(append(msgs, first), req.Messages[1:]...)
			} else {
				msgs = append(append(msgs, agent.SystemText(note)), req.Messages...)
			}
			out.Messages = msgs
		}
	}
	return &out
}

// formatNote words a JSON-schema response format as an instruction; JSON
// mode needs none (the API already requires its prompts to ask for JSON).
func formatNote(rf *agent.ResponseFormat) string {
	if rf.Type != agent.JSONSchema || rf.Schema == nil {
		return ""
	}
	b, err := json.Marshal(rf.Schema)
	if err != nil {
		return ""
	}
	return "Answer with one JSON object, and nothing else, that conforms to this JSON schema: " + string(b)
}

// refusalError is the error of a call whose server answered status with
// msg: err with the server's message, and the status when the SDK could
// not read the error body at all.
func refusalError(what string, err error, a *errorAnswer) error {
	var apiErr *openai.Error
	msg := a.message()
	switch {
	case a.status == 0:
		return wrapAPIError(what, err)
	case !errors.As(err, &apiErr):
		// The SDK failed to read the error body ({"error": "…"}); its error
		// says only that.
		return fmt.Errorf("llm/openai: %s: server answered %d %s: %s", what, a.status, http.StatusText(a.status), msg)
	case apiErr.Message == "" && msg != "" &&
		apiErr.StatusCode != http.StatusUnauthorized && apiErr.StatusCode != http.StatusForbidden:
		if apiErr.StatusCode == http.StatusNotFound {
			return fmt.Errorf("llm/openai: %s: %w: %w: %s", what, ErrNotFound, err, msg)
		}
		return fmt.Errorf("llm/openai: %s: %w: %s", what, err, msg)
	}
	return wrapAPIError(what, err)
}
