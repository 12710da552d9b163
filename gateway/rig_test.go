package gateway_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/stretchr/testify/require"

	"github.com/agentmemory/agentmemory/agent"
	"github.com/agentmemory/agentmemory/embed/lexical"
	"github.com/agentmemory/agentmemory/gateway"
	"github.com/agentmemory/agentmemory/internal/fakeopenai"
	"github.com/agentmemory/agentmemory/internal/sqlitetest"
	"github.com/agentmemory/agentmemory/llm/offline"
	"github.com/agentmemory/agentmemory/memoryservice"
	"github.com/agentmemory/agentmemory/store"
	"github.com/agentmemory/agentmemory/store/sqlite"
)

// rig is a gateway in front of a fake upstream, beside the Memory Store
// API on the same SQLite file, served over real HTTP as
// cmd/agentmemory-server serves them: /v1/ the gateway, the rest the API.
type rig struct {
	t   testing.TB
	up  *fakeopenai.Server
	st  *sqlite.Store
	svc *memoryservice.Service
	mem *memoryservice.GatewayStore
	gw  *gateway.Handler
	srv *httptest.Server
}

const storeName = "gateway"

func quiet() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

// newRig starts a rig; tune changes the gateway's configuration.
func newRig(t testing.TB, tune func(*gateway.Config), opts ...fakeopenai.Option) *rig {
	t.Helper()
	return newRigOn(t, sqlitetest.NewFile(t), tune, opts...)
}

// newRigOn starts a rig on the SQLite file at path: several rigs on one
// file are replicas of one deployment.
func newRigOn(t testing.TB, path string, tune func(*gateway.Config), opts ...fakeopenai.Option) *rig {
	t.Helper()
	return startRig(t, path, nil, tune, opts...)
}

// newRigWithModel starts a rig whose memory store runs on model(the
// offline model) instead of the offline model itself.
func newRigWithModel(t testing.TB, model func(agent.ChatClient) agent.ChatClient, tune func(*gateway.Config)) *rig {
	t.Helper()
	return startRig(t, sqlitetest.NewFile(t), model, tune)
}

func startRig(t testing.TB, path string, model func(agent.ChatClient) agent.ChatClient, tune func(*gateway.Config), opts ...fakeopenai.Option) *rig {
	t.Helper()
	ctx := context.Background()
	off, err := offline.New(offline.Config{})
	require.NoError(t, err)
	var chat agent.ChatClient = off
	if model != nil {
		chat = model(chat)
	}
	emb, err := lexical.New(lexical.Config{})
	require.NoError(t, err)
	st, err := sqlite.Open(ctx, path, sqlite.Config{Dimensions: emb.Dimensions(), Logger: quiet()})
	require.NoError(t, err)
	svc, err := memoryservice.New(ctx, st, memoryservice.Config{Chat: chat, Mini: chat, Embedder: emb, Logger: quiet(), RateLimit: -1})
	require.NoError(t, err)
	mem, err := svc.GatewayStore(ctx, storeName, "offline", "lexical")
	require.NoError(t, err)
	up := fakeopenai.New(t, opts...)
	cfg := gateway.Config{Memory: mem, Upstream: gateway.Upstream{BaseURL: up.URL(), APIKey: "upstream-key"}, Logger: quiet()}
	if tune != nil {
		tune(&cfg)
	}
	gw, err := gateway.New(ctx, cfg)
	require.NoError(t, err)
	mux := http.NewServeMux()
	mux.Handle("/v1/", mem.Protect(gw))
	mux.Handle("/", svc)
	r := &rig{t: t, up: up, st: st, svc: svc, mem: mem, gw: gw, srv: httptest.NewServer(mux)}
	t.Cleanup(func() {
		r.srv.Close()
		_ = gw.Close(context.Background())
		_ = svc.Close(context.Background())
		_ = st.Close()
	})
	return r
}

// client is an openai-go client pointed at the gateway: the one changed
// base URL, and the user's header.
func (r *rig) client(user string, opts ...option.RequestOption) openai.Client {
	base := []option.RequestOption{option.WithBaseURL(r.srv.URL + "/v1"), option.WithAPIKey("client-key"), option.WithMaxRetries(0)}
	if user != "" {
		base = append(base, option.WithHeader(gateway.UserHeader, user))
	}
	return openai.NewClient(append(base, opts...)...)
}

// turns returns every message of the turns stored for gateway user user.
func (r *rig) turns(user string) []store.TurnMessage {
	r.t.Helper()
	ctx := context.Background()
	userID := r.mem.UserID(user)
	ss, err := r.st.ListSessions(ctx, userID, store.SessionFilter{})
	require.NoError(r.t, err)
	var out []store.TurnMessage
	for _, s := range ss {
		ts, err := r.st.ListTurns(ctx, userID, s.ID, 0)
		require.NoError(r.t, err)
		for _, t := range ts {
			out = append(out, t.Messages...)
		}
	}
	return out
}

// storedTurns returns the turns stored for user, with their metadata.
func (r *rig) storedTurns(user string) []*store.Turn {
	r.t.Helper()
	ctx := context.Background()
	userID := r.mem.UserID(user)
	ss, err := r.st.ListSessions(ctx, userID, store.SessionFilter{})
	require.NoError(r.t, err)
	var out []*store.Turn
	for _, s := range ss {
		ts, err := r.st.ListTurns(ctx, userID, s.ID, 0)
		require.NoError(r.t, err)
		out = append(out, ts...)
	}
	return out
}

// do sends a raw request to the rig and returns the answer's status,
// headers and body.
func (r *rig) do(method, path string, header map[string]string, body any) (int, http.Header, []byte) {
	r.t.Helper()
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		require.NoError(r.t, err)
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, r.srv.URL+path, rd)
	require.NoError(r.t, err)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(r.t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(r.t, err)
	return resp.StatusCode, resp.Header, b
}

// endSessions waits until every session of user has ended (idled out) and
// the background work after it is done.
func (r *rig) endSessions(user string) {
	r.t.Helper()
	ctx := context.Background()
	deadline := time.Now().Add(10 * time.Second)
	for {
		require.NoError(r.t, r.gw.Flush(ctx))
		ss, err := r.st.ListSessions(ctx, r.mem.UserID(user), store.SessionFilter{})
		require.NoError(r.t, err)
		active := 0
		for _, s := range ss {
			if s.Status != store.SessionCompleted {
				active++
			}
		}
		if len(ss) > 0 && active == 0 {
			require.NoError(r.t, r.gw.Flush(ctx))
			return
		}
		if time.Now().After(deadline) {
			r.t.Fatalf("sessions of %s still active after 10 s", user)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func userMessage(text string) openai.ChatCompletionMessageParamUnion { return openai.UserMessage(text) }

// chat is the chat completions service of a client of user.
// stream sends params to the gateway as user, streamed, and returns the
// chunks accumulated; a stream that fails fails the test.
func (r *rig) stream(user string, params openai.ChatCompletionNewParams) openai.ChatCompletionAccumulator {
	r.t.Helper()
	s := r.chat(user).NewStreaming(context.Background(), params)
	var acc openai.ChatCompletionAccumulator
	for s.Next() {
		acc.AddChunk(s.Current())
	}
	require.NoError(r.t, s.Err())
	return acc
}

func (r *rig) chat(user string, opts ...option.RequestOption) *openai.ChatCompletionService {
	c := r.client(user, opts...)
	return &c.Chat.Completions
}
