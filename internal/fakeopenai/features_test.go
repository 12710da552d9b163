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
	assert.Equal(t, fakeopenai.NoToolsMessage, errorMessage(t, resp))
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
		assert.Equal(t, fakeopenai.NoJSONMessage, errorMessage(t, resp))
	}
	for _, body := range []string{chatBody, textFormatBody, toolsBody} {
		resp := post(t, nil, srv.URL()+"/chat/completions", body)
		assert.Equal(t, http.StatusOK, resp.status, body)
	}
	// Embeddings are not chat requests: never refused.
	resp := post(t, nil, srv.URL()+"/embeddings", `{"model":"e","input":"x"}`)
	assert.Equal(t, http.StatusOK, resp.status)
}
