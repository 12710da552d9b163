package fakeopenai_test

import (
	"bufio"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentmemory/agentmemory/internal/fakeopenai"
)

type wireChunk struct {
	Object  string `json:"object"`
	Choices []struct {
		Delta struct {
			Role      string `json:"role"`
			Content   string `json:"content"`
			ToolCalls []struct {
				Index    int    `json:"index"`
				ID       string `json:"id"`
				Function struct {
					Name      string `json:"name"`
					Arguments string `json:"arguments"`
				} `json:"function"`
			} `json:"tool_calls"`
		} `json:"delta"`
		FinishReason *string `json:"finish_reason"`
	} `json:"choices"`
	Usage *fakeopenai.Usage `json:"usage"`
}

// streamed posts a streamed chat request and returns its chunks; done
// reports whether the stream ended with data: [DONE].
func streamed(t *testing.T, srv *fakeopenai.Server, body string) (chunks []wireChunk, done bool) {
	t.Helper()
	res, err := http.Post(srv.URL()+"/chat/completions", "application/json", strings.NewReader(body))
	require.NoError(t, err)
	defer res.Body.Close()
	require.Equal(t, http.StatusOK, res.StatusCode)
	require.Equal(t, "text/event-stream", res.Header.Get("Content-Type"))
	sc := bufio.NewScanner(res.Body)
	for sc.Scan() {
		line := sc.Text()
		if line == "" {
			continue
		}
		data, ok := strings.CutPrefix(line, "data: ")
		require.True(t, ok, "line %q is not a data line", line)
		require.False(t, done, "data after [DONE]")
		if data == "[DONE]" {
			done = true
			continue
		}
		var c wireChunk
		require.NoError(t, json.Unmarshal([]byte(data), &c), data)
		require.Equal(t, "chat.completion.chunk", c.Object)
		chunks = append(chunks, c)
	}
	require.NoError(t, sc.Err())
	return chunks, done
}

func TestStreamedTextArrivesInSeveralChunks(t *testing.T) {
	srv := fakeopenai.New(t)
	srv.QueueChat(fakeopenai.Text("It is sunny in Paris today.").WithUsage(11, 7))
	chunks, done := streamed(t, srv, `{"model":"m","stream":true,"stream_options":{"include_usage":true},"messages":[{"role":"user","content":"hi"}]}`)
	require.True(t, done)

	require.NotEmpty(t, chunks)
	assert.Equal(t, "assistant", chunks[0].Choices[0].Delta.Role)
	var text strings.Builder
	pieces := 0
	for _, c := range chunks {
		for _, ch := range c.Choices {
			if ch.Delta.Content != "" {
				pieces++
				text.WriteString(ch.Delta.Content)
			}
		}
	}
	assert.Equal(t, "It is sunny in Paris today.", text.String())
	assert.Greater(t, pieces, 1, "content in one chunk")

	finish := chunks[len(chunks)-2]
	require.Len(t, finish.Choices, 1)
	require.NotNil(t, finish.Choices[0].FinishReason)
	assert.Equal(t, "stop", *finish.Choices[0].FinishReason)
	usage := chunks[len(chunks)-1]
	assert.Empty(t, usage.Choices)
	assert.Equal(t, &fakeopenai.Usage{PromptTokens: 11, CompletionTokens: 7, TotalTokens: 18}, usage.Usage)
}

func TestStreamedUsageOnlyWhenAsked(t *testing.T) {
	srv := fakeopenai.New(t)
	srv.QueueChat(fakeopenai.Text("ok").WithUsage(1, 1))
	chunks, done := streamed(t, srv, `{"model":"m","stream":true,"messages":[{"role":"user","content":"hi"}]}`)
	require.True(t, done)
	for _, c := range chunks {
		assert.Nil(t, c.Usage)
		assert.Len(t, c.Choices, 1)
	}
}

func TestStreamedToolCallsComeInFragments(t *testing.T) {
	srv := fakeopenai.New(t)
	args := `{"city":"Zürich","days":3}`
	srv.QueueChat(fakeopenai.ToolCalls(
		fakeopenai.Call("call_1", "get_weather", args),
		fakeopenai.Call("call_2", "get_time", `{}`),
	))
	chunks, done := streamed(t, srv, `{"model":"m","stream":true,"messages":[{"role":"user","content":"hi"}]}`)
	require.True(t, done)

	type call struct {
		id, name  string
		args      strings.Builder
		fragments int
	}
	calls := map[int]*call{}
	for _, c := range chunks {
		for _, ch := range c.Choices {
			for _, tc := range ch.Delta.ToolCalls {
				got, ok := calls[tc.Index]
				if !ok {
					require.NotEmpty(t, tc.ID, "first fragment of call %d has no id", tc.Index)
					require.NotEmpty(t, tc.Function.Name, "first fragment of call %d has no name", tc.Index)
					got = &call{id: tc.ID, name: tc.Function.Name}
					calls[tc.Index] = got
				} else {
					assert.Empty(t, tc.ID, "id repeated")
				}
				if tc.Function.Arguments != "" {
					got.fragments++
					got.args.WriteString(tc.Function.Arguments)
				}
			}
		}
	}
	require.Len(t, calls, 2)
	assert.Equal(t, "call_1", calls[0].id)
	assert.Equal(t, "get_weather", calls[0].name)
	assert.Equal(t, args, calls[0].args.String(), "fragments must not split a character")
	assert.Greater(t, calls[0].fragments, 1)
	assert.Equal(t, "get_time", calls[1].name)
	assert.Equal(t, "{}", calls[1].args.String())
	last := chunks[len(chunks)-1]
	require.NotNil(t, last.Choices[0].FinishReason)
	assert.Equal(t, "tool_calls", *last.Choices[0].FinishReason)
}

func TestStreamedErrorIsAPlainErrorAnswer(t *testing.T) {
	srv := fakeopenai.New(t)
	srv.QueueError(http.StatusTooManyRequests, "slow down")
	res, err := http.Post(srv.URL()+"/chat/completions", "application/json",
		strings.NewReader(`{"model":"m","stream":true,"messages":[{"role":"user","content":"hi"}]}`))
	require.NoError(t, err)
	defer res.Body.Close()
	assert.Equal(t, http.StatusTooManyRequests, res.StatusCode)
	assert.Equal(t, "application/json", res.Header.Get("Content-Type"))
}

func TestStreamedLatencyPacesTheChunks(t *testing.T) {
	srv := fakeopenai.New(t, fakeopenai.WithLatency(fakeopenai.Latency{FirstToken: 30 * time.Millisecond, PerToken: 5 * time.Millisecond}))
	srv.QueueChat(fakeopenai.Text(strings.Repeat("word ", 10)))
	start := time.Now()
	_, done := streamed(t, srv, `{"model":"m","stream":true,"messages":[{"role":"user","content":"hi"}]}`)
	require.True(t, done)
	// 30 ms to the first chunk, then ten 5-byte words at 2 tokens each.
	assert.GreaterOrEqual(t, time.Since(start), 130*time.Millisecond)
}
