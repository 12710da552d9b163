package fakeopenai

import "net/http"

// features are the capabilities a Server can be told it lacks, as some
// OpenAI-compatible servers and models do.
type features struct {
	noTools bool
	noJSON  bool
}

// Messages of the refusals a server without a feature answers with.
const (
	NoToolsMessage = "fakeopenai: this model does not support tools"
	NoJSONMessage  = "fakeopenai: this model does not support response_format"
)

// WithoutToolCalling makes the server behave like a model without tool
// calling: a chat request that offers tools is answered HTTP 400 with an
// OpenAI-style error body whose message is NoToolsMessage, before any
// queued reply or handler is consulted (none is consumed). The request is
// recorded, and the test is not failed: the refusal is the behaviour under
// test. Chat requests without tools are answered as usual.
func WithoutToolCalling() Option { return func(c *config) { c.features.noTools = true } }

// WithoutJSONMode makes the server behave like one without JSON output: a
// chat request with a response_format other than {"type":"text"} (JSON
// mode or structured output) is answered HTTP 400 with NoJSONMessage, as
// WithoutToolCalling describes.
func WithoutJSONMode() Option { return func(c *config) { c.features.noJSON = true } }

// refusal returns the error a server lacking a feature answers req with.
func (f features) refusal(req Request) (Reply, bool) {
	if req.Chat == nil {
		return Reply{}, false
	}
	if f.noTools && len(req.Chat.Tools) > 0 {
		return Error(http.StatusBadRequest, NoToolsMessage), true
	}
	if f.noJSON && asksForJSON(req) {
		return Error(http.StatusBadRequest, NoJSONMessage), true
	}
	return Reply{}, false
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
