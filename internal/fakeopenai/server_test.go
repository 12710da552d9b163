package fakeopenai_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentmemory/agentmemory/internal/fakeopenai"
)

// recorder is a testing.TB that records Errorf and Fatalf instead of failing
// the real test, so that the server's own failure reports can be asserted.
type recorder struct {
	testing.TB
	mu   sync.Mutex
	errs []string
}

func (r *recorder) Errorf(format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.errs = append(r.errs, fmt.Sprintf(format, args...))
}

func (r *recorder) Fatalf(format string, args ...any) {
	r.Errorf(format, args...)
	runtime.Goexit()
}

func (r *recorder) errors() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.errs...)
}

type response struct {
	status int
	header http.Header
	body   map[string]any
	raw    string
}

func post(t *testing.T, client *http.Client, url, body string, header ...string) response {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	if client == nil {
		client = http.DefaultClient
	}
	resp, err := client.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	out := response{status: resp.StatusCode, header: resp.Header, raw: string(raw)}
	if len(raw) > 0 {
		require.NoError(t, json.Unmarshal(raw, &out.body), "body: %s", raw)
	}
	return out
}

const chatBody = `{"model":"gpt-test","messages":[{"role":"system","content":"be brief"},{"role":"user","name":"ann","content":"hello"}]}`

func TestChatTextReplyAndRecording(t *testing.T) {
	srv := fakeopenai.New(t)
	srv.QueueChat(fakeopenai.Text("hi there").WithUsage(7, 3))

	resp := post(t, nil, srv.URL()+"/chat/completions", chatBody, "Authorization", "Bearer sk-test")

	require.Equal(t, http.StatusOK, resp.status)
	assert.Equal(t, "application/json", resp.header.Get("Content-Type"))
	want := `{
		"id": "chatcmpl-fake-1", "object": "chat.completion", "created": 1700000000, "model": "gpt-test",
		"choices": [{"index": 0, "finish_reason": "stop", "logprobs": null,
			"message": {"role": "assistant", "content": "hi there"}}],
		"usage": {"prompt_tokens": 7, "completion_tokens": 3, "total_tokens": 10}
	}`
	assert.JSONEq(t, want, resp.raw)

	reqs := srv.Requests()
	require.Len(t, reqs, 1)
	r := reqs[0]
	assert.Equal(t, http.MethodPost, r.Method)
	assert.Equal(t, "/v1/chat/completions", r.Path)
	assert.Equal(t, fakeopenai.KindChat, r.Kind)
	assert.Empty(t, r.Deployment)
	assert.Equal(t, "Bearer sk-test", r.Header.Get("Authorization"))
	assert.JSONEq(t, chatBody, string(r.Body))
	assert.Equal(t, "gpt-test", r.JSON["model"])
	require.NotNil(t, r.Chat)
	assert.Equal(t, []fakeopenai.Message{
		{Role: "system", Content: "be brief"},
		{Role: "user", Name: "ann", Content: "hello"},
	}, r.Chat.Messages)
	assert.Equal(t, "hello", r.LastUserText())
	assert.Equal(t, "be brief", r.SystemText())
	assert.Equal(t, "be brief\nhello", r.Text())
	assert.Equal(t, 0, srv.Pending())
}

func TestChatToolCallsReply(t *testing.T) {
	srv := fakeopenai.New(t)
	srv.QueueChat(fakeopenai.ToolCalls(
		fakeopenai.Call("call_1", "lookup", map[string]any{"q": "x"}),
		fakeopenai.Call("call_2", "broken", `{not json`),
	).WithModel("gpt-other"))

	resp := post(t, nil, srv.URL()+"/chat/completions", chatBody)

	require.Equal(t, http.StatusOK, resp.status)
	want := `{
		"id": "chatcmpl-fake-1", "object": "chat.completion", "created": 1700000000, "model": "gpt-other",
		"choices": [{"index": 0, "finish_reason": "tool_calls", "logprobs": null,
			"message": {"role": "assistant", "content": null, "tool_calls": [
				{"id": "call_1", "type": "function", "function": {"name": "lookup", "arguments": "{\"q\":\"x\"}"}},
				{"id": "call_2", "type": "function", "function": {"name": "broken", "arguments": "{not json"}}
			]}}]
	}`
	assert.JSONEq(t, want, resp.raw)
}

func TestJSONReplyAndRefusal(t *testing.T) {
	srv := fakeopenai.New(t)
	srv.QueueChat(
		fakeopenai.JSON(map[string]int{"n": 1}),
		fakeopenai.Text("").WithRefusal("no").WithFinishReason("content_filter"),
	)
	resp := post(t, nil, srv.URL()+"/chat/completions", chatBody)
	msg := resp.body["choices"].([]any)[0].(map[string]any)["message"].(map[string]any)
	assert.Equal(t, `{"n":1}`, msg["content"])

	resp = post(t, nil, srv.URL()+"/chat/completions", chatBody)
	choice := resp.body["choices"].([]any)[0].(map[string]any)
	assert.Equal(t, "content_filter", choice["finish_reason"])
	assert.Equal(t, "no", choice["message"].(map[string]any)["refusal"])
}

func TestPaths(t *testing.T) {
	srv := fakeopenai.New(t)
	srv.QueueChat(fakeopenai.Text("a"), fakeopenai.Text("b"))
	srv.QueueEmbeddings(fakeopenai.Embeddings([]float32{1}), fakeopenai.Embeddings([]float32{2}))

	base := srv.AzureEndpoint()
	assert.Equal(t, http.StatusOK, post(t, nil, base+"/chat/completions", chatBody).status)
	assert.Equal(t, http.StatusOK, post(t, nil, base+"/openai/deployments/my-gpt/chat/completions?api-version=2024-10-21", chatBody).status)
	assert.Equal(t, http.StatusOK, post(t, nil, base+"/v1/embeddings", `{"model":"e","input":"x"}`).status)
	assert.Equal(t, http.StatusOK, post(t, nil, base+"/openai/deployments/my-emb/embeddings?api-version=2024-10-21", `{"model":"e","input":["x"]}`).status)

	reqs := srv.Requests()
	require.Len(t, reqs, 4)
	assert.Equal(t, []fakeopenai.Kind{fakeopenai.KindChat, fakeopenai.KindChat, fakeopenai.KindEmbeddings, fakeopenai.KindEmbeddings},
		[]fakeopenai.Kind{reqs[0].Kind, reqs[1].Kind, reqs[2].Kind, reqs[3].Kind})
	assert.Equal(t, []string{"", "my-gpt", "", "my-emb"},
		[]string{reqs[0].Deployment, reqs[1].Deployment, reqs[2].Deployment, reqs[3].Deployment})
	assert.Equal(t, "2024-10-21", reqs[1].Query.Get("api-version"))
	assert.Len(t, srv.ChatRequests(), 2)
	assert.Len(t, srv.EmbeddingRequests(), 2)
}

func TestBadRequestsFailTheTest(t *testing.T) {
	cases := []struct {
		name, method, path, body string
		status                   int
		msg                      string
	}{
		{"unknown path", http.MethodPost, "/v1/completions", chatBody, 404, "unknown path"},
		{"wrong method", http.MethodGet, "/v1/chat/completions", "", 405, "want POST"},
		{"not json", http.MethodPost, "/v1/chat/completions", "{", 400, "not a JSON object"},
		{"azure without api-version", http.MethodPost, "/openai/deployments/d/chat/completions", chatBody, 400, "api-version"},
		{"script exhausted", http.MethodPost, "/v1/chat/completions", chatBody, 500, "script exhausted"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			rec := &recorder{TB: t}
			srv := fakeopenai.New(rec, fakeopenai.WithoutDefaultEmbeddings())
			req, err := http.NewRequest(tc.method, srv.AzureEndpoint()+tc.path, strings.NewReader(tc.body))
			require.NoError(t, err)
			resp, err := http.DefaultClient.Do(req)
			require.NoError(t, err)
			raw, _ := io.ReadAll(resp.Body)
			resp.Body.Close()

			assert.Equal(t, tc.status, resp.StatusCode)
			assert.Equal(t, "false", resp.Header.Get("x-should-retry"))
			assert.Contains(t, string(raw), tc.msg)
			errs := rec.errors()
			require.Len(t, errs, 1)
			assert.Contains(t, errs[0], tc.msg)
			assert.Len(t, srv.Requests(), 1, "failed requests are recorded too")
		})
	}
}

func TestEmbeddingsExhaustedWithoutDefault(t *testing.T) {
	rec := &recorder{TB: t}
	srv := fakeopenai.New(rec, fakeopenai.WithoutDefaultEmbeddings())
	resp := post(t, nil, srv.URL()+"/embeddings", `{"model":"e","input":["a"]}`)
	assert.Equal(t, 500, resp.status)
	require.Len(t, rec.errors(), 1)
	assert.Contains(t, rec.errors()[0], "QueueEmbeddings")
}

func TestQueueErrorThenSuccess(t *testing.T) {
	srv := fakeopenai.New(t)
	srv.QueueChat(fakeopenai.Text("ok"))
	srv.QueueError(http.StatusInternalServerError, "boom")
	srv.QueueAny(fakeopenai.Error(http.StatusTooManyRequests, "slow down").WithHeader("Retry-After", "1"))
	assert.Equal(t, 3, srv.Pending())

	r1 := post(t, nil, srv.URL()+"/chat/completions", chatBody)
	assert.Equal(t, 500, r1.status)
	assert.JSONEq(t, `{"error":{"message":"boom","type":"server_error","code":"500","param":null}}`, r1.raw)

	r2 := post(t, nil, srv.URL()+"/embeddings", `{"model":"e","input":"x"}`) // errors answer any endpoint
	assert.Equal(t, 429, r2.status)
	assert.Equal(t, "1", r2.header.Get("Retry-After"))
	assert.Equal(t, "rate_limit_exceeded", r2.body["error"].(map[string]any)["type"])

	r3 := post(t, nil, srv.URL()+"/chat/completions", chatBody)
	assert.Equal(t, 200, r3.status)
	assert.Equal(t, 0, srv.Pending())
}

func TestRawReply(t *testing.T) {
	srv := fakeopenai.New(t)
	srv.QueueChat(fakeopenai.Raw(http.StatusOK, "application/json", `{"choices":`))
	resp, err := http.Post(srv.URL()+"/chat/completions", "application/json", strings.NewReader(chatBody))
	require.NoError(t, err)
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	assert.Equal(t, `{"choices":`, string(raw))
}

func TestDefaultEmbeddings(t *testing.T) {
	srv := fakeopenai.New(t, fakeopenai.WithEmbeddingDimensions(5))

	resp := post(t, nil, srv.URL()+"/embeddings", `{"model":"emb","input":["alpha","beta","alpha"]}`)
	require.Equal(t, 200, resp.status)
	var got struct {
		Data []struct {
			Index     int       `json:"index"`
			Embedding []float32 `json:"embedding"`
		} `json:"data"`
		Model string `json:"model"`
	}
	require.NoError(t, json.Unmarshal([]byte(resp.raw), &got))
	assert.Equal(t, "emb", got.Model)
	require.Len(t, got.Data, 3)
	for i, d := range got.Data {
		assert.Equal(t, i, d.Index)
		assert.Len(t, d.Embedding, 5)
		var n float64
		for _, x := range d.Embedding {
			n += float64(x) * float64(x)
		}
		assert.InDelta(t, 1, n, 1e-5, "unit length")
	}
	assert.Equal(t, fakeopenai.Vector("alpha", 5), got.Data[0].Embedding)
	assert.Equal(t, got.Data[0].Embedding, got.Data[2].Embedding, "deterministic")
	assert.NotEqual(t, got.Data[0].Embedding, got.Data[1].Embedding)

	// The request's dimensions parameter wins.
	resp = post(t, nil, srv.URL()+"/embeddings", `{"model":"emb","input":"alpha","dimensions":3}`)
	require.NoError(t, json.Unmarshal([]byte(resp.raw), &got))
	require.Len(t, got.Data, 1)
	assert.Equal(t, fakeopenai.Vector("alpha", 3), got.Data[0].Embedding)

	reqs := srv.EmbeddingRequests()
	require.Len(t, reqs, 2)
	assert.Equal(t, []string{"alpha"}, reqs[1].Embeddings.Input)
	assert.Equal(t, 3, reqs[1].Embeddings.Dimensions)
}

func TestEmbeddingsBase64(t *testing.T) {
	srv := fakeopenai.New(t)
	srv.QueueEmbeddings(fakeopenai.Embeddings([]float32{0.5, -1}))
	resp := post(t, nil, srv.URL()+"/embeddings", `{"model":"emb","input":"x","encoding_format":"base64"}`)
	s := resp.body["data"].([]any)[0].(map[string]any)["embedding"].(string)
	b, err := base64.StdEncoding.DecodeString(s)
	require.NoError(t, err)
	require.Len(t, b, 8)
	assert.Equal(t, float32(0.5), math.Float32frombits(binary.LittleEndian.Uint32(b)))
	assert.Equal(t, float32(-1), math.Float32frombits(binary.LittleEndian.Uint32(b[4:])))
}

func TestEmbeddingItemsKeepGivenOrder(t *testing.T) {
	srv := fakeopenai.New(t)
	srv.QueueEmbeddings(fakeopenai.EmbeddingItems(
		fakeopenai.EmbeddingItem{Index: 1, Vector: []float32{2}},
		fakeopenai.EmbeddingItem{Index: 0, Vector: []float32{1}},
	).WithUsage(4, 0))
	resp := post(t, nil, srv.URL()+"/embeddings", `{"model":"emb","input":["a","b"]}`)
	assert.JSONEq(t, `{"object":"list","model":"emb","usage":{"prompt_tokens":4,"total_tokens":4},"data":[
		{"object":"embedding","index":1,"embedding":[2]},
		{"object":"embedding","index":0,"embedding":[1]}]}`, resp.raw)
}

func TestHandlers(t *testing.T) {
	srv := fakeopenai.New(t)
	srv.HandleChat(func(r fakeopenai.Request) fakeopenai.Reply {
		if strings.Contains(r.Text(), "<summarise>") {
			return fakeopenai.Text("a summary")
		}
		return fakeopenai.Text("echo: " + r.LastUserText())
	})
	srv.HandleEmbeddings(func(r fakeopenai.Request) fakeopenai.Reply {
		return fakeopenai.Embeddings([]float32{float32(len(r.Embeddings.Input))})
	})
	srv.QueueChat(fakeopenai.Text("queued first"))

	content := func(resp response) string {
		return resp.body["choices"].([]any)[0].(map[string]any)["message"].(map[string]any)["content"].(string)
	}
	assert.Equal(t, "queued first", content(post(t, nil, srv.URL()+"/chat/completions", chatBody)))
	assert.Equal(t, "echo: hello", content(post(t, nil, srv.URL()+"/chat/completions", chatBody)))
	assert.Equal(t, "a summary", content(post(t, nil, srv.URL()+"/chat/completions",
		`{"model":"m","messages":[{"role":"system","content":[{"type":"text","text":"<summar"},{"type":"text","text":"ise>"}]}]}`)))
	emb := post(t, nil, srv.URL()+"/embeddings", `{"model":"e","input":["a","b"]}`)
	assert.Equal(t, []any{2.0}, emb.body["data"].([]any)[0].(map[string]any)["embedding"])
}

func TestHandlerZeroReplyFails(t *testing.T) {
	rec := &recorder{TB: t}
	srv := fakeopenai.New(rec)
	srv.HandleChat(func(fakeopenai.Request) fakeopenai.Reply { return fakeopenai.Reply{} })
	assert.Equal(t, 500, post(t, nil, srv.URL()+"/chat/completions", chatBody).status)
	require.Len(t, rec.errors(), 1)
	assert.Contains(t, rec.errors()[0], "zero Reply")
}

func TestHandlerWrongEndpointFails(t *testing.T) {
	rec := &recorder{TB: t}
	srv := fakeopenai.New(rec)
	srv.HandleChat(func(fakeopenai.Request) fakeopenai.Reply { return fakeopenai.Embeddings([]float32{1}) })
	assert.Equal(t, 500, post(t, nil, srv.URL()+"/chat/completions", chatBody).status)
	require.Len(t, rec.errors(), 1)
	assert.Contains(t, rec.errors()[0], "other endpoint")
}

func TestQueueWrongKindIsFatal(t *testing.T) {
	rec := &recorder{TB: t}
	srv := fakeopenai.New(rec)
	done := make(chan struct{})
	go func() {
		defer close(done)
		srv.QueueEmbeddings(fakeopenai.Text("not an embedding"))
	}()
	<-done
	require.Len(t, rec.errors(), 1)
	assert.Contains(t, rec.errors()[0], "other endpoint")
	assert.Equal(t, 0, srv.Pending())
}

func TestDelayHonoursClientCancellation(t *testing.T) {
	srv := fakeopenai.New(t)
	srv.QueueChat(fakeopenai.Text("late").WithDelay(time.Minute))
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, srv.URL()+"/chat/completions", strings.NewReader(chatBody))
	require.NoError(t, err)
	start := time.Now()
	_, err = http.DefaultClient.Do(req)
	require.Error(t, err)
	assert.True(t, errors.Is(err, context.DeadlineExceeded), "got %v", err)
	assert.Less(t, time.Since(start), 10*time.Second)
	// t.Cleanup closes the server, which waits for the handler: the test
	// would hang here if the delayed handler ignored the disconnect.
}

func TestTLS(t *testing.T) {
	srv := fakeopenai.New(t, fakeopenai.WithTLS())
	srv.QueueChat(fakeopenai.Text("secure"))
	require.True(t, strings.HasPrefix(srv.URL(), "https://"))
	resp := post(t, srv.Client(), srv.URL()+"/chat/completions", chatBody)
	assert.Equal(t, 200, resp.status)
}

func TestRequestsAreCopies(t *testing.T) {
	srv := fakeopenai.New(t)
	srv.QueueChat(fakeopenai.Text("x"))
	post(t, nil, srv.URL()+"/chat/completions", chatBody, "X-Test", "1")
	r := srv.Requests()[0]
	r.Header.Set("X-Test", "changed")
	r.Body[0] = '!'
	r.Query.Set("a", "b")
	again := srv.Requests()[0]
	assert.Equal(t, "1", again.Header.Get("X-Test"))
	assert.Equal(t, byte('{'), again.Body[0])
	assert.Empty(t, again.Query)
}

func TestConcurrentUse(t *testing.T) {
	srv := fakeopenai.New(t)
	const n = 32
	for i := range n {
		srv.QueueChat(fakeopenai.Text(fmt.Sprint(i)))
	}
	var (
		wg   sync.WaitGroup
		mu   sync.Mutex
		seen = map[string]int{}
	)
	for range n {
		wg.Go(func() {
			resp, err := http.Post(srv.URL()+"/chat/completions", "application/json", bytes.NewReader([]byte(chatBody)))
			if !assert.NoError(t, err) {
				return
			}
			defer resp.Body.Close()
			var body struct {
				Choices []struct {
					Message struct{ Content string } `json:"message"`
				} `json:"choices"`
			}
			assert.NoError(t, json.NewDecoder(resp.Body).Decode(&body))
			mu.Lock()
			seen[body.Choices[0].Message.Content]++
			mu.Unlock()
			_ = srv.Requests()
		})
	}
	wg.Wait()
	assert.Len(t, seen, n, "every reply served exactly once")
	assert.Len(t, srv.Requests(), n)
	assert.Equal(t, 0, srv.Pending())
}

func TestVector(t *testing.T) {
	assert.Equal(t, fakeopenai.Vector("x", 16), fakeopenai.Vector("x", 16))
	assert.NotEqual(t, fakeopenai.Vector("x", 16), fakeopenai.Vector("y", 16))
	assert.Len(t, fakeopenai.Vector("", 3), 3)
}
