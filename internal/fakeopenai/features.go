package fakeopenai

import (
	"encoding/json"
	"net/http"
)

// features are the capabilities a Server can be told it lacks, as some
// OpenAI-compatible servers and models do.
type features struct {
	noTools       bool
	noJSON        bool
	noStreamUsage bool
}

// Messages of the refusals a server without a feature answers with. Each
// refusal copies the body shape of a real server, so that clients are
// tested against what they will meet.
const (
	// NoToolsMessage ends the message of a tools refusal, which is
	// "registry.ollama.ai/library/<model> " + NoToolsMessage, in an
	// OpenAI-style error object, as Ollama answers for a model whose
	// template has no tools.
	NoToolsMessage = "does not support tools"
	// NoJSONMessage is the refusal of response_format, as a bare string:
	// {"error": NoJSONMessage}, the shape LM Studio answers with (it refuses
	// json_object) and one the openai-go SDK cannot read.
	NoJSONMessage = "fakeopenai: this model does not support response_format"
	// NoStreamUsageMessage is the refusal of stream_options, in vLLM's
	// top-level error shape {"object": "error", "message": …}, as servers
	// with strict request validation answer an unknown field.
	NoStreamUsageMessage = "stream_options: Extra inputs are not permitted"
)

// WithoutToolCalling makes the server behave like a model without tool
// calling: a chat request that offers tools is answered HTTP 400 with an
// OpenAI-style error body whose message ends with NoToolsMessage, before
// any queued reply or handler is consulted (none is consumed). The request
// is recorded, and the test is not failed: the refusal is the behaviour
// under test. Chat requests without tools are answered as usual.
func WithoutToolCalling() Option { return func(c *config) { c.features.noTools = true } }

// WithoutJSONMode makes the server behave like one without JSON output: a
// chat request with a response_format other than {"type":"text"} (JSON
// mode or structured output) is answered HTTP 400 with the body
// {"error": NoJSONMessage}, as WithoutToolCalling describes.
func WithoutJSONMode() Option { return func(c *config) { c.features.noJSON = true } }

// WithoutStreamUsage makes the server refuse stream_options: a chat
// request that sets it (as a client asking for the usage of a streamed
// answer does) is answered HTTP 422 with NoStreamUsageMessage, as
// WithoutToolCalling describes.
func WithoutStreamUsage() Option { return func(c *config) { c.features.noStreamUsage = true } }

// refusal returns the error a server lacking a feature answers req with.
func (f features) refusal(req Request) (Reply, bool) {
	if req.Chat == nil {
		return Reply{}, false
	}
	if f.noStreamUsage && req.JSON["stream_options"] != nil {
		return rawJSONReply(http.StatusUnprocessableEntity, map[string]any{
			"object": "error", "message": NoStreamUsageMessage, "type": "BadRequestError", "param": nil, "code": 422,
		}), true
	}
	if f.noTools && len(req.Chat.Tools) > 0 {
		return rawJSONReply(http.StatusBadRequest, map[string]any{"error": map[string]any{
			"message": "registry.ollama.ai/library/" + req.Chat.Model + " " + NoToolsMessage,
			"type":    "api_error", "param": nil, "code": nil,
		}}), true
	}
	if f.noJSON && asksForJSON(req) {
		return rawJSONReply(http.StatusBadRequest, map[string]any{"error": NoJSONMessage}), true
	}
	return Reply{}, false
}

func rawJSONReply(status int, body map[string]any) Reply {
	b, err := json.Marshal(body)
	if err != nil {
		panic(err) // maps of strings, numbers and nil always encode
	}
	return Raw(status, "application/json", string(b))
}

// asksForJSON reports whether a chat request sets a response_format other
// than plain text.
func asksForJSON(req Request) bool {
	rf, ok := req.JSON["response_format"].(map[string]any)
	if !ok {
		return false
	}
	typ, _ := rf["type"].(string)
	return typ != "" && typ != "text"
}
