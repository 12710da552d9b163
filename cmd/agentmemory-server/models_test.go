package main

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentmemory/agentmemory/internal/fakeopenai"
	"github.com/agentmemory/agentmemory/prompts"
)

// endpoint is a fake model endpoint: "missing-*" models are unknown (404),
// "wide-emb" makes 16-dimensional vectors, other embedding models 8.
func endpoint(t *testing.T) *fakeopenai.Server {
	srv := fakeopenai.New(t)
	srv.HandleChat(chatReply)
	srv.HandleEmbeddings(embeddingsReply)
	return srv
}

// chatReply is endpoint's answer to a chat request.
func chatReply(r fakeopenai.Request) fakeopenai.Reply {
	if strings.HasPrefix(r.Chat.Model, "missing") {
		return fakeopenai.Error(http.StatusNotFound, "The model does not exist")
	}
	sys := r.SystemText()
	switch {
	case strings.HasPrefix(sys, prompts.MarkerPrefix+"interaction_metadata"):
		return fakeopenai.JSON(map[string]any{"summary": "A drink.", "mentioned_topics": []string{"drinks"}, "entities": []string{}})
	case strings.HasPrefix(sys, prompts.MarkerPrefix+"session_summary"):
		return fakeopenai.JSON(map[string]any{"summary": "The user named a drink.", "key_topics": []string{"drinks"}})
	case strings.HasPrefix(sys, prompts.MarkerPrefix+"session_reflection"):
		return fakeopenai.JSON(map[string]any{"reflection_flag": "no_insight", "insights": []any{}})
	case strings.HasPrefix(sys, prompts.MarkerPrefix+"reconcile"):
		return fakeopenai.JSON(map[string]any{"duplicates": []any{}, "contradictions": []any{}})
	}
	return fakeopenai.Text("OK")
}

// embeddingsReply is endpoint's answer to an embeddings request.
func embeddingsReply(r fakeopenai.Request) fakeopenai.Reply {
	if strings.HasPrefix(r.Embeddings.Model, "missing") {
		return fakeopenai.Error(http.StatusNotFound, "The model does not exist")
	}
	n := 8
	if r.Embeddings.Model == "wide-emb" {
		n = 16
	}
	vs := make([][]float32, len(r.Embeddings.Input))
	for i, in := range r.Embeddings.Input {
		vs[i] = fakeopenai.Vector(in, n)
	}
	return fakeopenai.Embeddings(vs...)
}

// serve runs the command with vars until the test ends and returns its
// base address and log.
func serve(t *testing.T, vars map[string]string) (string, *syncBuffer) {
	t.Helper()
	base, logs, stop := serveOn(t, env(vars))
	t.Cleanup(func() { assert.NoError(t, stop()) })
	return base, logs
}

func waitUpdate(t testing.TB, base, name, id string) map[string]any {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		code, out := call(t, "GET", base+"/memory_stores/"+name+"/updates/"+id, "", nil)
		require.Equal(t, http.StatusOK, code, "%v", out)
		if st := out["status"]; st != "queued" && st != "in_progress" {
			return out
		}
		require.True(t, time.Now().Before(deadline), "update %s still %v", id, out["status"])
		time.Sleep(20 * time.Millisecond)
	}
}

// Each memory store runs on the chat and embedding models its definition
// names, on the environment's endpoint: every request of its work names
// them, embedding models of two lengths share the SQLite file, and a
// model the endpoint does not know is refused at create.
func TestStoresRunOnTheModelsTheyName(t *testing.T) {
	srv := endpoint(t)
	base, logs := serve(t, map[string]string{"OPENAI_BASE_URL": srv.URL(), "OPENAI_CHAT_MODEL": "env-chat",
		"OPENAI_EMBEDDING_MODEL": "env-emb", "OPENAI_EMBEDDING_DIMENSIONS": "8"})
	create := func(name, chat, emb string) (int, map[string]any) {
		return call(t, "POST", base+"/memory_stores", "", map[string]any{"name": name,
			"definition": map[string]any{"kind": "default", "chat_model": chat, "embedding_model": emb}})
	}
	for name, models := range map[string][2]string{"wide": {"chat-wide", "wide-emb"}, "plain": {"env-chat", "env-emb"}} {
		code, out := create(name, models[0], models[1])
		require.Equal(t, http.StatusOK, code, "%v", out)
	}
	code, out := create("bad", "missing-chat", "env-emb")
	require.Equal(t, http.StatusBadRequest, code, "%v", out)
	assert.Equal(t, "definition.chat_model", out["error"].(map[string]any)["param"])
	code, out = create("bad", "env-chat", "missing-emb")
	require.Equal(t, http.StatusBadRequest, code, "%v", out)
	assert.Equal(t, "definition.embedding_model", out["error"].(map[string]any)["param"])

	topic := map[string]string{"wide": "espresso", "plain": "matcha"}
	for name, w := range topic {
		code, out := call(t, "POST", base+"/memory_stores/"+name+":update_memories", "", map[string]any{
			"scope": "alice", "update_delay": 0, "items": []any{map[string]any{"role": "user", "content": "I drink " + w + " daily."}}})
		require.Equal(t, http.StatusAccepted, code, "%v", out)
		done := waitUpdate(t, base, name, out["update_id"].(string))
		require.Equal(t, "completed", done["status"], "%v", done)
		code, out = call(t, "POST", base+"/memory_stores/"+name+":search_memories", "", map[string]any{
			"scope": "alice", "items": []any{map[string]any{"role": "user", "content": "Which " + w + "?"}}})
		require.Equal(t, http.StatusOK, code, "%v", out)
	}
	chatOf := map[string]string{"espresso": "chat-wide", "matcha": "env-chat"}
	embOf := map[string]string{"espresso": "wide-emb", "matcha": "env-emb"}
	seen := 0
	for _, r := range srv.Requests() {
		text := r.Text()
		for w := range chatOf {
			if !strings.Contains(text, w) {
				continue
			}
			seen++
			if r.Kind == fakeopenai.KindChat {
				assert.Equal(t, chatOf[w], r.Chat.Model, "chat request about %s", w)
			} else {
				assert.Equal(t, embOf[w], r.Embeddings.Model, "embedding request about %s", w)
			}
		}
	}
	assert.Greater(t, seen, 4, "the stores' work reached the endpoint")
	assert.Contains(t, logs.String(), "embedding_model=wide-emb dimensions=16")
}

// Offline, the names are recorded and said, and the offline models work.
func TestOfflineStoresRecordTheirModels(t *testing.T) {
	base, logs := serve(t, nil)
	code, out := call(t, "POST", base+"/memory_stores", "", storeBody)
	require.Equal(t, http.StatusOK, code, "%v", out)
	code, out = call(t, "GET", base+"/memory_stores/support", "", nil)
	require.Equal(t, http.StatusOK, code, "%v", out)
	assert.Equal(t, "m", out["definition"].(map[string]any)["chat_model"])
	assert.Contains(t, logs.String(), "chat_model=m")
	assert.Contains(t, logs.String(), "embedding_model=e")
}
