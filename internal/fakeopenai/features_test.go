package fakeopenai_test

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentmemory/agentmemory/internal/fakeopenai"
)

const (
	toolsBody      = `{"model":"m","messages":[{"role":"user","content":"hi"}],"tools":[{"type":"function","function":{"name":"f","parameters":{"type":"object"}}}]}`
	jsonModeBody   = `{"model":"m","messages":[{"role":"user","content":"hi"}],"response_format":{"type":"json_object"}}`
	jsonSchemaBody = `{"model":"m","messages":[{"role":"user","content":"hi"}],"response_format":{"type":"json_schema","json_schema":{"name":"r","schema":{"type":"object"}}}}`
	textFormatBody = `{"model":"m","messages":[{"role":"user","content":"hi"}],"response_format":{"type":"text"}}`
)

// errorMessage returns the message of an OpenAI-style error body.
func errorMessage(t *testing.T, r response) string {
	t.Helper()
	e, ok := r.body["error"].(map[string]any)
	require.True(t, ok, "error body: %s", r.raw)
	msg, _ := e["message"].(string)
	return msg
}

func TestWithoutToolCalling(t *testing.T) {
	srv := fakeopenai.New(t, fakeopenai.WithoutToolCalling())
	srv.QueueChat(fakeopenai.Text("plain"), fakeopenai.JSON(`{"a":1}`))

	resp := post(t, nil, srv.URL()+"/chat/completions", toolsBody)
	assert.Equal(t, http.StatusBadRequest, resp.status)
	assert.Equal(t, "registry.ollama.ai/library/m "+fakeopenai.NoToolsMessage, errorMessage(t, resp))
	assert.Equal(t, 2, srv.Pending(), "a refused request consumes no queued reply")

	// Without tools the server answers as usual, JSON mode included.
	resp = post(t, nil, srv.URL()+"/chat/completions", chatBody)
	require.Equal(t, http.StatusOK, resp.status)
	resp = post(t, nil, srv.URL()+"/chat/completions", jsonModeBody)
	require.Equal(t, http.StatusOK, resp.status)
	assert.Len(t, srv.ChatRequests(), 3, "the refused request is recorded too")
}

func TestWithoutJSONMode(t *testing.T) {
	srv := fakeopenai.New(t, fakeopenai.WithoutJSONMode())
	srv.HandleChat(func(fakeopenai.Request) fakeopenai.Reply { return fakeopenai.Text("ok") })

	for _, body := range []string{jsonModeBody, jsonSchemaBody} {
		resp := post(t, nil, srv.URL()+"/chat/completions", body)
		assert.Equal(t, http.StatusBadRequest, resp.status, body)
		assert.Equal(t, fakeopenai.NoJSONMessage, resp.body["error"], "LM Studio's shape: the error is a string")
	}
	for _, body := range []string{chatBody, textFormatBody, toolsBody} {
		resp := post(t, nil, srv.URL()+"/chat/completions", body)
		assert.Equal(t, http.StatusOK, resp.status, body)
	}
	// Embeddings are not chat requests: never refused.
	resp := post(t, nil, srv.URL()+"/embeddings", `{"model":"e","input":"x"}`)
	assert.Equal(t, http.StatusOK, resp.status)
}

func TestWithoutStreamUsage(t *testing.T) {
	srv := fakeopenai.New(t, fakeopenai.WithoutStreamUsage())
	srv.HandleChat(func(fakeopenai.Request) fakeopenai.Reply { return fakeopenai.Text("ok") })

	resp := post(t, nil, srv.URL()+"/chat/completions",
		`{"model":"m","stream":true,"stream_options":{"include_usage":true},"messages":[{"role":"user","content":"hi"}]}`)
	assert.Equal(t, http.StatusUnprocessableEntity, resp.status)
	assert.Equal(t, fakeopenai.NoStreamUsageMessage, resp.body["message"], "vLLM's shape: the message is at the top level")
	assert.Equal(t, "error", resp.body["object"])

	for _, body := range []string{chatBody, toolsBody, jsonModeBody} {
		resp := post(t, nil, srv.URL()+"/chat/completions", body)
		assert.Equal(t, http.StatusOK, resp.status, body)
	}
}
