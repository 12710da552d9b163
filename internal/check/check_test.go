package check_test

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentmemory/agentmemory/embed/lexical"
	"github.com/agentmemory/agentmemory/internal/check"
	"github.com/agentmemory/agentmemory/internal/fakeopenai"
	"github.com/agentmemory/agentmemory/internal/sqlitetest"
	"github.com/agentmemory/agentmemory/llm/offline"
	"github.com/agentmemory/agentmemory/llm/openai"
	"github.com/agentmemory/agentmemory/store"
	"github.com/agentmemory/agentmemory/store/sqlite"
)

// obedient answers the check's requests as an instruction-following model
// does: a tool call when a tool is offered and not yet called, the tool's
// result once it is, the JSON values asked for, "pong" otherwise.
func obedient(r fakeopenai.Request) fakeopenai.Reply {
	msgs := r.Chat.Messages
	last := msgs[len(msgs)-1]
	var format struct {
		Type string `json:"type"`
	}
	_ = json.Unmarshal(r.Chat.ResponseFormat, &format)
	switch {
	case last.Role == "tool":
		return fakeopenai.Text("The code word is " + last.Content + ".")
	case len(r.Chat.Tools) > 0:
		return fakeopenai.ToolCalls(fakeopenai.Call("call_1", r.Chat.Tools[0].Function.Name, `{"name":"heron"}`))
	case format.Type == "json_object":
		return fakeopenai.JSON(`{"city": "Lisbon", "year": 1755}`)
	case format.Type == "json_schema":
		return fakeopenai.JSON(`{"code": "ORCHID", "count": 12}`)
	}
	return fakeopenai.Text("pong")
}

// obedientServer is a fake OpenAI server, made with opts, whose chat model
// is obedient and whose embeddings are lexicalEmbeddings.
func obedientServer(t *testing.T, opts ...fakeopenai.Option) *fakeopenai.Server {
	srv := fakeopenai.New(t, opts...)
	srv.HandleChat(obedient)
	srv.HandleEmbeddings(lexicalEmbeddings(t))
	return srv
}

// lexicalEmbeddings serves the lexical embedder's vectors, so that the
// similarity of the fake server's embeddings means something.
func lexicalEmbeddings(t *testing.T) func(fakeopenai.Request) fakeopenai.Reply {
	e, err := lexical.New(lexical.Config{})
	require.NoError(t, err)
	return fakeopenai.EmbedWith(e)
}

// stackOn returns a Stack on srv (chat, mini and embedding models as
// named) and a SQLite file in a temporary directory.
func stackOn(t *testing.T, srv *fakeopenai.Server, chat, mini string, dims int) check.Stack {
	t.Helper()
	env := map[string]string{
		"OPENAI_BASE_URL": srv.URL(), "OPENAI_CHAT_MODEL": chat, "OPENAI_MINI_MODEL": mini,
		"OPENAI_EMBEDDING_MODEL": "embedder", "OPENAI_EMBEDDING_DIMENSIONS": strconv.Itoa(dims),
	}
	c, err := openai.FromEnv(func(k string) (string, bool) { v, ok := env[k]; return v, ok }, openai.Config{MaxRetries: -1})
	require.NoError(t, err)
	st, err := sqlite.Open(t.Context(), sqlitetest.NewFile(t), sqlite.Config{Dimensions: dims})
	require.NoError(t, err)
	t.Cleanup(func() { st.Close() })
	return check.Stack{Chat: c.Chat, Mini: c.Mini, ChatName: c.Chat.Model(), MiniName: c.MiniModel, Embedder: c.Embedder,
		Store: st, StoreName: "SQLite test file", Description: c.String()}
}

func run(t *testing.T, s check.Stack) *check.Report {
	t.Helper()
	r, err := check.Run(t.Context(), s, check.Config{})
	require.NoError(t, err)
	return r
}

func status(t *testing.T, r *check.Report, section, name string) check.Item {
	t.Helper()
	it, ok := r.Item(section, name)
	require.True(t, ok, "no check %s: %s", section, name)
	return it
}

func TestEverythingPassesOnAWorkingServer(t *testing.T) {
	srv := obedientServer(t)
	s := stackOn(t, srv, "big", "small", lexical.DefaultDimensions)
	r := run(t, s)

	for _, sec := range r.Sections {
		for _, it := range sec.Items {
			assert.Equal(t, check.OK, it.Status, "%s: %s: %s", sec.Name, it.Name, it.Detail)
		}
	}
	require.True(t, r.OK, "failures: %v", r.Failures)
	require.Len(t, r.Sections, 4)
	assert.Equal(t, []string{"chat model", "mini model", "embedding model", "store"},
		[]string{r.Sections[0].Name, r.Sections[1].Name, r.Sections[2].Name, r.Sections[3].Name})
	assert.Equal(t, "big", r.Sections[0].Target)
	assert.Equal(t, "small", r.Sections[1].Target)
	for _, sec := range r.Sections {
		assert.Positive(t, sec.LatencyP50ms, sec.Name)
	}

	// Both models were asked everything: 3 pings, 2 tool calls, 2 JSON.
	perModel := map[string]int{}
	var tools, toolResults, jsonObject, jsonSchema int
	for _, req := range srv.ChatRequests() {
		perModel[req.Chat.Model]++
		if len(req.Chat.Tools) > 0 {
			tools++
			assert.Equal(t, "lookup_code_word", req.Chat.Tools[0].Function.Name)
		}
		if m := req.Chat.Messages; m[len(m)-1].Role == "tool" {
			toolResults++
		}
		switch {
		case strings.Contains(string(req.Chat.ResponseFormat), `"json_object"`):
			jsonObject++
		case strings.Contains(string(req.Chat.ResponseFormat), `"json_schema"`):
			jsonSchema++
			assert.Contains(t, string(req.Chat.ResponseFormat), `"strict":true`)
		}
	}
	assert.Equal(t, map[string]int{"big": 7, "small": 7}, perModel)
	assert.Equal(t, 4, tools)
	assert.Equal(t, 2, toolResults)
	assert.Equal(t, 2, jsonObject)
	assert.Equal(t, 2, jsonSchema)

	// The calibration is the lexical embedder's on the built-in pairs.
	c := r.Calibration
	require.NotNil(t, c)
	assert.Equal(t, 8, c.Related)
	assert.Equal(t, 8, c.Unrelated)
	assert.Greater(t, c.Gap, check.DefaultMinGap)
	assert.Greater(t, c.RelatedMean, c.UnrelatedMean)
	assert.InDelta(t, (c.RelatedMean+c.UnrelatedMean)/2, c.Threshold, 0.001)
	assert.Len(t, c.Cosines, 16)

	// The probe user is gone.
	var db *sql.DB
	require.True(t, s.Store.As(&db))
	var n int
	require.NoError(t, db.QueryRow(`SELECT count(*) FROM interactions`).Scan(&n))
	assert.Zero(t, n, "the probe document is deleted")

	var out bytes.Buffer
	require.NoError(t, r.WriteText(&out))
	assert.Contains(t, out.String(), "result: no check failed")
	assert.Contains(t, out.String(), "tool calling")
}

func TestServerWithoutToolCallingIsNamed(t *testing.T) {
	srv := obedientServer(t, fakeopenai.WithoutToolCalling())
	r := run(t, stackOn(t, srv, "big", "small", lexical.DefaultDimensions))

	require.True(t, r.Failed())
	assert.Equal(t, []string{"chat model: tool calling", "mini model: tool calling"}, r.Failures)
	it := status(t, r, "chat model", "tool calling")
	assert.Contains(t, it.Detail, fakeopenai.NoToolsMessage, "the server's own reason is shown")
	for _, name := range []string{"reachable", "latency", "JSON mode", "structured output"} {
		assert.Equal(t, check.OK, status(t, r, "chat model", name).Status, name)
	}
	var out bytes.Buffer
	require.NoError(t, r.WriteText(&out))
	assert.Contains(t, out.String(), "result: 2 check(s) failed: chat model: tool calling; mini model: tool calling")
}

func TestServerWithoutJSONModeIsNamed(t *testing.T) {
	srv := obedientServer(t, fakeopenai.WithoutJSONMode())
	r := run(t, stackOn(t, srv, "m", "m", lexical.DefaultDimensions))

	assert.Equal(t, []string{"chat model: JSON mode", "chat model: structured output"}, r.Failures)
	assert.Contains(t, status(t, r, "chat model", "JSON mode").Detail, fakeopenai.NoJSONMessage)
	assert.Contains(t, status(t, r, "chat model", "structured output").Detail, fakeopenai.NoJSONMessage)
	assert.Equal(t, check.OK, status(t, r, "chat model", "tool calling").Status)
	mini := status(t, r, "mini model", "model")
	assert.Equal(t, check.OK, mini.Status)
	assert.Contains(t, mini.Detail, "same model")
}

func TestModelThatIgnoresToolsOrJSON(t *testing.T) {
	srv := fakeopenai.New(t)
	srv.HandleChat(func(r fakeopenai.Request) fakeopenai.Reply {
		if len(r.Chat.Tools) > 0 || len(r.Chat.ResponseFormat) > 0 {
			return fakeopenai.Text("Sure! Here you go.") // a server that accepts the fields and ignores them
		}
		return obedient(r)
	})
	srv.HandleEmbeddings(lexicalEmbeddings(t))
	r := run(t, stackOn(t, srv, "m", "m", lexical.DefaultDimensions))
	assert.Equal(t, check.Fail, status(t, r, "chat model", "tool calling").Status)
	assert.Contains(t, status(t, r, "chat model", "tool calling").Detail, "without calling the tool")
	assert.Contains(t, status(t, r, "chat model", "JSON mode").Detail, "not a JSON object")
	assert.Equal(t, check.Fail, status(t, r, "chat model", "structured output").Status)
}

func TestToolResultNotUsedAndWrongJSONValuesWarn(t *testing.T) {
	srv := fakeopenai.New(t)
	srv.HandleChat(func(r fakeopenai.Request) fakeopenai.Reply {
		m := r.Chat.Messages
		switch {
		case m[len(m)-1].Role == "tool":
			return fakeopenai.Text("I do not know.")
		case strings.Contains(string(r.Chat.ResponseFormat), "json_object"):
			return fakeopenai.JSON(`{"city": "Porto", "year": 1755}`)
		case strings.Contains(string(r.Chat.ResponseFormat), "json_schema"):
			return fakeopenai.JSON(`{"code": "orchid", "count": 12}`)
		}
		return obedient(r)
	})
	srv.HandleEmbeddings(lexicalEmbeddings(t))
	r := run(t, stackOn(t, srv, "m", "m", lexical.DefaultDimensions))
	assert.True(t, r.OK, "warnings are not failures: %v", r.Failures)
	for _, name := range []string{"tool calling", "JSON mode", "structured output"} {
		assert.Equal(t, check.Warn, status(t, r, "chat model", name).Status, name)
	}
}

func TestUnreachableModelSkipsTheRest(t *testing.T) {
	srv := fakeopenai.New(t)
	srv.HandleChat(func(fakeopenai.Request) fakeopenai.Reply { return fakeopenai.Error(401, "invalid api key") })
	srv.HandleEmbeddings(func(fakeopenai.Request) fakeopenai.Reply { return fakeopenai.Error(401, "invalid api key") })
	r := run(t, stackOn(t, srv, "m", "mini", 8))
	it := status(t, r, "chat model", "reachable")
	assert.Equal(t, check.Fail, it.Status)
	assert.Contains(t, it.Detail, "401")
	for _, name := range []string{"latency", "tool calling", "JSON mode", "structured output"} {
		assert.Equal(t, check.Skip, status(t, r, "chat model", name).Status, name)
	}
	assert.Equal(t, check.Fail, status(t, r, "embedding model", "reachable").Status)
	assert.Equal(t, check.Skip, status(t, r, "store", "round trip").Status, "no vector to write")
	assert.Equal(t, check.OK, status(t, r, "store", "reachable").Status)
	assert.Nil(t, r.Calibration)
	assert.Len(t, srv.ChatRequests(), 2, "one call per model, no retries, nothing after the failure")
}

func TestMeaninglessEmbeddingsFailTheSimilarityCheck(t *testing.T) {
	// The fake server's default vectors are hashes of the text: related
	// texts are no closer than unrelated ones.
	srv := fakeopenai.New(t)
	srv.HandleChat(obedient)
	r := run(t, stackOn(t, srv, "m", "m", 1536))
	it := status(t, r, "embedding model", "similarity")
	assert.Equal(t, check.Fail, it.Status, it.Detail)
	assert.Contains(t, it.Detail, "barely tells")
	assert.Equal(t, []string{"embedding model: similarity"}, r.Failures)
	require.NotNil(t, r.Calibration)
	assert.Less(t, r.Calibration.Gap, check.DefaultMinGap)
}

func TestEmbeddingsOfTheWrongLength(t *testing.T) {
	srv := fakeopenai.New(t)
	srv.HandleChat(obedient)
	srv.HandleEmbeddings(func(r fakeopenai.Request) fakeopenai.Reply {
		vs := make([][]float32, len(r.Embeddings.Input))
		for i, in := range r.Embeddings.Input {
			vs[i] = fakeopenai.Vector(in, 16) // the server ignores "dimensions"
		}
		return fakeopenai.Embeddings(vs...)
	})
	r := run(t, stackOn(t, srv, "m", "m", 32))
	assert.Equal(t, check.OK, status(t, r, "embedding model", "reachable").Status)
	it := status(t, r, "embedding model", "dimensions")
	assert.Equal(t, check.Fail, it.Status)
	assert.Contains(t, it.Detail, "16")
	assert.Contains(t, it.Detail, "OPENAI_EMBEDDING_DIMENSIONS")
}

func TestStoreWithAnotherEmbeddersVectors(t *testing.T) {
	srv := obedientServer(t)
	path := filepath.Join(t.TempDir(), "old.db")
	old, err := sqlite.Open(t.Context(), path, sqlite.Config{Dimensions: 8})
	require.NoError(t, err)
	require.NoError(t, old.PutInteraction(t.Context(), "someone", &store.Interaction{ID: "a", SessionID: "s", FirstTurn: 1, LastTurn: 1,
		Content: "old", ContentVector: []float32{1, 0, 0, 0, 0, 0, 0, 0}}))
	require.NoError(t, old.Close())

	s := stackOn(t, srv, "m", "m", lexical.DefaultDimensions)
	st, err := sqlite.Open(t.Context(), path, sqlite.Config{Dimensions: lexical.DefaultDimensions})
	require.NoError(t, err)
	defer st.Close()
	s.Store = st
	r := run(t, s)
	it := status(t, r, "store", "dimensions")
	assert.Equal(t, check.Fail, it.Status)
	assert.Contains(t, it.Detail, "[8]")
	assert.Equal(t, []string{"store: dimensions"}, r.Failures)
	assert.Equal(t, check.OK, status(t, r, "store", "round trip").Status)
}

func TestStoreThatCannotOpen(t *testing.T) {
	srv := obedientServer(t)
	s := stackOn(t, srv, "m", "m", lexical.DefaultDimensions)
	s.Store, s.StoreErr = nil, assert.AnError
	r := run(t, s)
	assert.Equal(t, []string{"store: reachable"}, r.Failures)
	assert.Contains(t, status(t, r, "store", "reachable").Detail, assert.AnError.Error())
}

func TestOfflineReportsTheDefaults(t *testing.T) {
	client, err := offline.New(offline.Config{})
	require.NoError(t, err)
	emb, err := lexical.New(lexical.Config{})
	require.NoError(t, err)
	st, err := sqlite.Open(t.Context(), sqlitetest.NewFile(t), sqlite.Config{Dimensions: emb.Dimensions()})
	require.NoError(t, err)
	defer st.Close()
	r := run(t, check.Stack{Chat: client, Mini: client, Embedder: emb, Store: st, StoreName: "SQLite", Offline: true, Description: "offline"})

	assert.True(t, r.OK, "%v", r.Failures)
	assert.True(t, r.Offline)
	for _, sec := range []string{"chat model", "mini model"} {
		it := status(t, r, sec, "model")
		assert.Equal(t, check.Skip, it.Status)
		assert.Contains(t, it.Detail, "not an LLM")
	}
	assert.Equal(t, check.OK, status(t, r, "embedding model", "similarity").Status)
	assert.Equal(t, check.OK, status(t, r, "store", "round trip").Status)
	var out bytes.Buffer
	require.NoError(t, r.WriteText(&out))
	assert.Contains(t, out.String(), "offline: no model configured")

	b, err := json.Marshal(r)
	require.NoError(t, err)
	var back map[string]any
	require.NoError(t, json.Unmarshal(b, &back))
	assert.Equal(t, true, back["offline"])
	assert.Equal(t, true, back["ok"])
}

func TestCalibrate(t *testing.T) {
	pairs := []check.Pair{{Related: true}, {Related: true}, {}, {}}
	c, err := check.Calibrate(pairs, []float64{0.5, 0.3, 0.1, 0.35})
	require.NoError(t, err)
	assert.InDelta(t, 0.4, c.RelatedMean, 1e-9)
	assert.InDelta(t, 0.225, c.UnrelatedMean, 1e-9)
	assert.InDelta(t, 0.175, c.Gap, 1e-9)
	assert.InDelta(t, 0.3, c.RelatedMin, 1e-9)
	assert.InDelta(t, 0.35, c.UnrelatedMax, 1e-9)
	assert.InDelta(t, 0.75, c.Separation, 1e-9, "0.3 < 0.35: one couple of four misordered")
	assert.InDelta(t, 0.313, c.Threshold, 1e-9)

	_, err = check.Calibrate(pairs, []float64{1})
	assert.Error(t, err)
	_, err = check.Calibrate([]check.Pair{{Related: true}}, []float64{1})
	assert.Error(t, err, "no unrelated pair")
}

func TestPairs(t *testing.T) {
	ps := check.Pairs()
	require.Len(t, ps, 16)
	for i := range 8 {
		assert.True(t, ps[i].Related)
		assert.False(t, ps[8+i].Related)
		assert.Equal(t, ps[i].Query, ps[8+i].Query)
		assert.NotEqual(t, ps[i].Memory, ps[8+i].Memory)
	}
}

func TestRunRejects(t *testing.T) {
	_, err := check.Run(context.Background(), check.Stack{}, check.Config{})
	assert.Error(t, err)
}

// A server that refuses response_format with a model that answers JSON
// anyway (in a code fence, as local models do) works for memory: a
// warning naming the refusal, not a failure.
func TestServerWithoutJSONModeWhoseModelAnswersJSONWarns(t *testing.T) {
	srv := fakeopenai.New(t, fakeopenai.WithoutJSONMode())
	srv.HandleChat(func(r fakeopenai.Request) fakeopenai.Reply {
		switch text := r.Text(); {
		case strings.Contains(text, "Lisbon"):
			return fakeopenai.Text("Here it is:\n```json\n{\"city\": \"Lisbon\", \"year\": 1755,}\n```")
		case strings.Contains(text, "ORCHID"):
			return fakeopenai.Text(`{"code": "ORCHID", "count": 12}`)
		}
		return obedient(r)
	})
	srv.HandleEmbeddings(lexicalEmbeddings(t))
	r := run(t, stackOn(t, srv, "m", "m", lexical.DefaultDimensions))

	assert.Empty(t, r.Failures)
	for _, name := range []string{"JSON mode", "structured output"} {
		it := status(t, r, "chat model", name)
		assert.Equal(t, check.Warn, it.Status, name)
		assert.Contains(t, it.Detail, fakeopenai.NoJSONMessage, name)
		assert.Contains(t, it.Detail, "reads the JSON in the answers leniently", name)
	}
	var refused int
	for _, req := range srv.ChatRequests() {
		if len(req.Chat.ResponseFormat) > 0 {
			refused++
		}
	}
	assert.Equal(t, 2, refused, "each response_format type (json_object, json_schema) is sent once; then the client leaves it out")
}
