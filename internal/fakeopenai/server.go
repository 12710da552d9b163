// Package fakeopenai is a scripted OpenAI-compatible HTTP server for tests,
// built on net/http/httptest.
//
// It speaks the real wire protocol, so clients are tested over real HTTP:
//
//	srv := fakeopenai.New(t)
//	srv.QueueChat(fakeopenai.ToolCalls(fakeopenai.Call("call_1", "lookup", `{"q":"x"}`)))
//	srv.QueueChat(fakeopenai.Text("done").WithUsage(12, 3))
//	srv.QueueError(500, "overloaded") // the next request, to any endpoint, fails first
//	client := myclient(srv.URL(), …)
//	…
//	reqs := srv.ChatRequests() // every request, with headers and raw and decoded body
//
// # Paths
//
// The server answers OpenAI-style paths both with and without the /v1
// prefix (/v1/chat/completions, /chat/completions, /v1/embeddings,
// /embeddings) and Azure OpenAI paths
// (/openai/deployments/{deployment}/chat/completions?api-version=…, and
// …/embeddings). URL returns the base URL with /v1, the form OpenAI clients
// expect; AzureEndpoint returns the bare origin, the form Azure clients
// expect. An Azure path without api-version is a test failure.
//
// # Answers
//
// Each request is answered by the first of:
//
//  1. the next reply queued with QueueAny or QueueError (any endpoint);
//  2. the next reply queued for its endpoint with QueueChat or
//     QueueEmbeddings;
//  3. the handler set with HandleChat or HandleEmbeddings (EmbedWith
//     makes one that serves an embed.Embedder's vectors);
//  4. for embeddings, unless WithoutDefaultEmbeddings: deterministic unit
//     vectors (see Vector) of the requested dimensions, or of
//     WithEmbeddingDimensions (default 8);
//  5. otherwise the request fails with HTTP 500, header x-should-retry:
//     false (so SDKs do not retry) and a message, and the test is marked
//     failed with t.Errorf.
//
// # Latency
//
// By default a reply is written at once, or after its WithDelay.
// WithLatency(RealisticLatency), or another Latency, makes every answer
// take as long as a hosted model's would: time to first token plus time
// per token for chat, a time per embeddings request.
//
// # Streaming
//
// A chat request with "stream": true is answered with server-sent events,
// as the OpenAI API answers it; stream.go describes the chunks.
//
// # Missing features
//
// A server made with WithoutToolCalling, WithoutJSONMode or
// WithoutStreamUsage answers a chat request that uses the missing feature
// with an error before step 1, in the body shape of a real server that
// lacks it (Ollama, LM Studio, vLLM), without failing the test.
//
// Unknown paths, methods other than POST and bodies that are not JSON also
// fail the test. The server is closed with t.Cleanup. A Server is safe for
// concurrent use.
package fakeopenai

import (
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"io"
	"math"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// DefaultEmbeddingDimensions is the length of default embedding vectors when
// neither WithEmbeddingDimensions nor the request's dimensions say.
const DefaultEmbeddingDimensions = 8

// Option configures a Server.
type Option func(*config)

type config struct {
	tls          bool
	dims         int
	noDefaultEmb bool
	latency      Latency
	features     features
}

// WithTLS serves HTTPS with a self-signed certificate; use Server.Client (or
// its transport) to talk to it. Azure clients refuse to send credentials
// over plain HTTP, so Azure tests need this.
func WithTLS() Option { return func(c *config) { c.tls = true } }

// WithEmbeddingDimensions sets the length of default embedding vectors for
// requests without a dimensions parameter.
func WithEmbeddingDimensions(n int) Option {
	return func(c *config) { c.dims = n }
}

// WithoutDefaultEmbeddings makes an embeddings request without a scripted
// reply or handler a test failure, like a chat request.
func WithoutDefaultEmbeddings() Option { return func(c *config) { c.noDefaultEmb = true } }

// Server is a scripted OpenAI-compatible server. Create one with New.
type Server struct {
	t   testing.TB
	srv *httptest.Server
	cfg config

	mu          sync.Mutex
	anyQ        []Reply
	chatQ       []Reply
	embQ        []Reply
	chatHandler func(Request) Reply
	embHandler  func(Request) Reply
	requests    []Request
	seq         int
}

// New starts a server that reports failures to t and is closed when the test
// ends.
func New(t testing.TB, opts ...Option) *Server {
	t.Helper()
	s := &Server{t: t, cfg: config{dims: DefaultEmbeddingDimensions}}
	for _, o := range opts {
		o(&s.cfg)
	}
	if s.cfg.dims <= 0 {
		t.Fatalf("fakeopenai: WithEmbeddingDimensions(%d): want a positive length", s.cfg.dims)
	}
	h := http.HandlerFunc(s.serve)
	if s.cfg.tls {
		s.srv = httptest.NewTLSServer(h)
	} else {
		s.srv = httptest.NewServer(h)
	}
	t.Cleanup(s.srv.Close)
	return s
}

// URL returns the OpenAI-style base URL, ending in /v1 (no trailing slash).
func (s *Server) URL() string { return s.srv.URL + "/v1" }

// AzureEndpoint returns the server's origin, for use as an Azure OpenAI
// endpoint.
func (s *Server) AzureEndpoint() string { return s.srv.URL }

// Client returns an HTTP client that trusts the server's certificate (with
// WithTLS) and talks to it directly.
func (s *Server) Client() *http.Client { return s.srv.Client() }

// QueueChat appends replies for the next chat completions requests.
func (s *Server) QueueChat(replies ...Reply) {
	s.t.Helper()
	s.queue(&s.chatQ, kindChat, "QueueChat", replies)
}

// QueueEmbeddings appends replies for the next embeddings requests.
func (s *Server) QueueEmbeddings(replies ...Reply) {
	s.t.Helper()
	s.queue(&s.embQ, kindEmbed, "QueueEmbeddings", replies)
}

// QueueAny appends replies served to the next requests whatever their
// endpoint, before the endpoint queues: typically errors (Error, Raw) that
// make the next attempt fail.
func (s *Server) QueueAny(replies ...Reply) {
	s.t.Helper()
	s.queue(&s.anyQ, kindNone, "QueueAny", replies)
}

// QueueError makes the next request, to any endpoint, fail with the given
// status and an OpenAI-style error body. Use QueueAny(Error(…).WithHeader(…))
// to add headers such as Retry-After.
func (s *Server) QueueError(status int, message string) {
	s.t.Helper()
	s.QueueAny(Error(status, message))
}

// HandleChat sets a handler for chat requests that find their queue empty.
// It returns the reply to send; a zero Reply fails the test.
func (s *Server) HandleChat(h func(Request) Reply) {
	s.mu.Lock()
	s.chatHandler = h
	s.mu.Unlock()
}

// HandleEmbeddings sets a handler for embeddings requests that find their
// queue empty.
func (s *Server) HandleEmbeddings(h func(Request) Reply) {
	s.mu.Lock()
	s.embHandler = h
	s.mu.Unlock()
}

// Requests returns a copy of every request received so far, in arrival
// order.
func (s *Server) Requests() []Request {
	return s.filter("")
}

// ChatRequests returns the chat completions requests received so far.
func (s *Server) ChatRequests() []Request { return s.filter(KindChat) }

// EmbeddingRequests returns the embeddings requests received so far.
func (s *Server) EmbeddingRequests() []Request { return s.filter(KindEmbeddings) }

// Pending returns the number of queued replies not yet served.
func (s *Server) Pending() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.anyQ) + len(s.chatQ) + len(s.embQ)
}

func (s *Server) filter(k Kind) []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]Request, 0, len(s.requests))
	for _, r := range s.requests {
		if k == "" || r.Kind == k {
			out = append(out, r.clone())
		}
	}
	return out
}

// queue appends replies, which fn was given, to q, the queue of endpoint
// want (kindNone: of any endpoint), failing the test on a zero Reply or
// one for another endpoint.
func (s *Server) queue(q *[]Reply, want replyKind, fn string, replies []Reply) {
	s.t.Helper()
	for i, r := range replies {
		if r.kind == kindNone {
			s.t.Fatalf("fakeopenai: %s: reply %d is the zero Reply", fn, i)
		}
		if want != kindNone && r.kind != kindAny && r.kind != want {
			s.t.Fatalf("fakeopenai: %s: reply %d is for the other endpoint", fn, i)
		}
	}
	s.mu.Lock()
	*q = append(*q, replies...)
	s.mu.Unlock()
}

// route parses the path into an endpoint kind and an Azure deployment.
func route(path string) (Kind, string, bool) {
	p := strings.TrimPrefix(path, "/v1")
	switch p {
	case "/chat/completions":
		return KindChat, "", true
	case "/embeddings":
		return KindEmbeddings, "", true
	}
	rest, ok := strings.CutPrefix(path, "/openai/deployments/")
	if !ok {
		return "", "", false
	}
	dep, tail, ok := strings.Cut(rest, "/")
	if !ok || dep == "" {
		return "", "", false
	}
	switch tail {
	case "chat/completions":
		return KindChat, dep, true
	case "embeddings":
		return KindEmbeddings, dep, true
	}
	return "", "", false
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		s.fail(w, http.StatusBadRequest, "reading request body: %v", err)
		return
	}
	kind, dep, known := route(r.URL.Path)
	req := Request{
		Method: r.Method, Path: r.URL.Path, Query: r.URL.Query(), Header: r.Header.Clone(),
		Body: body, Kind: kind, Deployment: dep,
	}
	var decoded map[string]any
	jsonErr := json.Unmarshal(body, &decoded)
	if jsonErr == nil {
		req.JSON = decoded
	}
	var decodeErr error
	switch kind {
	case KindChat:
		var c ChatBody
		if decodeErr = json.Unmarshal(body, &c); decodeErr == nil {
			req.Chat = &c
		}
	case KindEmbeddings:
		var e EmbeddingsBody
		if decodeErr = json.Unmarshal(body, &e); decodeErr == nil {
			req.Embeddings = &e
		}
	}

	s.mu.Lock()
	s.requests = append(s.requests, req)
	s.seq++
	seq := s.seq
	s.mu.Unlock()

	switch {
	case !known:
		s.fail(w, http.StatusNotFound, "request %d: unknown path %s %s", seq, r.Method, r.URL.Path)
		return
	case r.Method != http.MethodPost:
		s.fail(w, http.StatusMethodNotAllowed, "request %d: %s %s: want POST", seq, r.Method, r.URL.Path)
		return
	case jsonErr != nil:
		s.fail(w, http.StatusBadRequest, "request %d: body is not a JSON object: %v", seq, jsonErr)
		return
	case decodeErr != nil:
		s.fail(w, http.StatusBadRequest, "request %d: cannot decode %s body: %v", seq, kind, decodeErr)
		return
	case dep != "" && req.Query.Get("api-version") == "":
		s.fail(w, http.StatusBadRequest, "request %d: Azure path %s without api-version query parameter", seq, r.URL.Path)
		return
	}

	if refusal, lacks := s.cfg.features.refusal(req); lacks {
		s.write(w, req, refusal, seq)
		return
	}
	reply, ok := s.next(req)
	if !ok {
		what := "QueueChat or HandleChat"
		if kind == KindEmbeddings {
			what = "QueueEmbeddings or HandleEmbeddings"
		}
		s.fail(w, http.StatusInternalServerError, "request %d (%s, %s): script exhausted; no reply queued with %s (prompt: %.200q)",
			seq, kind, r.URL.Path, what, req.Text())
		return
	}
	if reply.kind == kindNone {
		s.fail(w, http.StatusInternalServerError, "request %d (%s): handler returned the zero Reply", seq, kind)
		return
	}
	if reply.kind != kindAny && ((reply.kind == kindChat) != (kind == KindChat)) {
		s.fail(w, http.StatusInternalServerError, "request %d (%s): handler returned a reply for the other endpoint", seq, kind)
		return
	}

	if reply.raw == nil && wantsStream(req) {
		s.stream(r.Context(), w, req, reply, seq) // stream.go; it paces itself
		return
	}
	if delay := reply.delay + s.cfg.latency.wait(req, reply); delay > 0 {
		t := time.NewTimer(delay)
		select {
		case <-t.C:
		case <-r.Context().Done():
			t.Stop()
			return // the client went away; nobody reads an answer
		}
	}
	s.write(w, req, reply, seq)
}

// next picks the reply for req, as the package doc describes.
func (s *Server) next(req Request) (Reply, bool) {
	s.mu.Lock()
	if len(s.anyQ) > 0 {
		r := s.anyQ[0]
		s.anyQ = s.anyQ[1:]
		s.mu.Unlock()
		return r, true
	}
	q, h := &s.chatQ, s.chatHandler
	if req.Kind == KindEmbeddings {
		q, h = &s.embQ, s.embHandler
	}
	if len(*q) > 0 {
		r := (*q)[0]
		*q = (*q)[1:]
		s.mu.Unlock()
		return r, true
	}
	s.mu.Unlock()
	if h != nil {
		return h(req), true // outside the lock: a handler may inspect the server
	}
	if req.Kind == KindEmbeddings && !s.cfg.noDefaultEmb {
		dims := req.Embeddings.Dimensions
		if dims <= 0 {
			dims = s.cfg.dims
		}
		vs := make([][]float32, len(req.Embeddings.Input))
		for i, in := range req.Embeddings.Input {
			vs[i] = Vector(in, dims)
		}
		return Embeddings(vs...), true
	}
	return Reply{}, false
}

func (s *Server) write(w http.ResponseWriter, req Request, r Reply, seq int) {
	for k, vs := range r.header {
		for _, v := range vs {
			w.Header().Add(k, v)
		}
	}
	status := r.status
	if status == 0 {
		status = http.StatusOK
	}
	if r.raw != nil {
		w.Header().Set("Content-Type", r.contentType)
		w.WriteHeader(status)
		_, _ = w.Write(r.raw)
		return
	}
	model := r.model
	var payload any
	if req.Kind == KindChat {
		if model == "" {
			model = req.Chat.Model
		}
		payload = chatPayload(r, model, seq)
	} else {
		if model == "" {
			model = req.Embeddings.Model
		}
		payload = embeddingsPayload(r, model, req.Embeddings.EncodingFormat == "base64")
	}
	var buf bytes.Buffer
	if err := json.NewEncoder(&buf).Encode(payload); err != nil {
		s.fail(w, http.StatusInternalServerError, "request %d: encoding reply: %v", seq, err)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(buf.Bytes())
}

func chatPayload(r Reply, model string, seq int) map[string]any {
	msg := map[string]any{"role": "assistant", "content": nil}
	if r.content != nil {
		msg["content"] = *r.content
	}
	if r.refusal != nil {
		msg["refusal"] = *r.refusal
	}
	if len(r.toolCalls) > 0 {
		msg["tool_calls"] = r.toolCalls
	}
	out := map[string]any{
		"id":      fmt.Sprintf("chatcmpl-fake-%d", seq),
		"object":  "chat.completion",
		"created": 1700000000,
		"model":   model,
		"choices": []any{map[string]any{
			"index": 0, "message": msg, "finish_reason": r.finishReason, "logprobs": nil,
		}},
	}
	if r.usage != nil {
		out["usage"] = r.usage
	}
	return out
}

func embeddingsPayload(r Reply, model string, b64 bool) map[string]any {
	data := make([]any, len(r.items))
	for i, it := range r.items {
		var vec any = it.Vector
		if b64 {
			buf := make([]byte, 4*len(it.Vector))
			for j, f := range it.Vector {
				binary.LittleEndian.PutUint32(buf[4*j:], math.Float32bits(f))
			}
			vec = base64.StdEncoding.EncodeToString(buf)
		}
		data[i] = map[string]any{"object": "embedding", "index": it.Index, "embedding": vec}
	}
	out := map[string]any{"object": "list", "data": data, "model": model}
	if r.usage != nil {
		out["usage"] = map[string]int{"prompt_tokens": r.usage.PromptTokens, "total_tokens": r.usage.TotalTokens}
	} else {
		out["usage"] = map[string]int{"prompt_tokens": 0, "total_tokens": 0}
	}
	return out
}

// fail answers with an error the SDKs will not retry and fails the test.
func (s *Server) fail(w http.ResponseWriter, status int, format string, args ...any) {
	msg := "fakeopenai: " + fmt.Sprintf(format, args...)
	s.t.Errorf("%s", msg)
	body, _ := json.Marshal(map[string]any{"error": map[string]any{"message": msg, "type": "fakeopenai_error"}})
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("x-should-retry", "false")
	w.WriteHeader(status)
	_, _ = w.Write(body)
}

// Vector returns the deterministic unit vector of length dims the server
// uses as the default embedding of text. Equal texts give equal vectors;
// different texts give (almost surely) different ones. It carries no
// meaning: it is not a semantic embedding.
func Vector(text string, dims int) []float32 {
	h := fnv.New64a()
	_, _ = h.Write([]byte(text))
	seed := h.Sum64()
	rng := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	v := make([]float32, dims)
	var norm float64
	for i := range v {
		x := rng.Float64()*2 - 1
		v[i] = float32(x)
		norm += x * x
	}
	if norm == 0 {
		return v
	}
	inv := 1 / math.Sqrt(norm)
	for i := range v {
		v[i] = float32(float64(v[i]) * inv)
	}
	return v
}
