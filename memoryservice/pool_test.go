package memoryservice

import (
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentmemory/agentmemory/internal/fakeopenai"
	"github.com/agentmemory/agentmemory/internal/longtest"
	"github.com/agentmemory/agentmemory/llm/openai"
	"github.com/agentmemory/agentmemory/prompts"
)

// inFlight counts the session-summary calls a model endpoint is serving
// at once: each update run makes one, as it ends its session.
type inFlight struct {
	mu       sync.Mutex
	now, max int
	total    int
}

func (f *inFlight) handle(r fakeopenai.Request) fakeopenai.Reply {
	if !strings.HasPrefix(r.SystemText(), prompts.MarkerPrefix+"session_summary") {
		return memoryModel(r)
	}
	f.mu.Lock()
	f.now++
	f.total++
	f.max = max(f.max, f.now)
	f.mu.Unlock()
	time.Sleep(30 * time.Millisecond) // long enough for runs to overlap, under the race detector too
	f.mu.Lock()
	f.now--
	f.mu.Unlock()
	return memoryModel(r)
}

func (f *inFlight) peak() (int, int) { f.mu.Lock(); defer f.mu.Unlock(); return f.max, f.total }

// 500 updates due at once (queued before a restart, due by the time of
// the next start) run UpdateWorkers at a time, the others waiting their
// turn, and every one completes. Without AGENTMEMORY_LONG_TESTS (as in
// README's test command) 24 updates do, still eight times the pool: 500
// take minutes under the race detector.
func TestUpdatesRunInABoundedPool(t *testing.T) {
	n := longtest.Pick(t, 24, 500)
	srv := fakeopenai.New(t)
	f := &inFlight{}
	srv.HandleChat(f.handle)
	srv.HandleEmbeddings(fakeEmbeddings)
	oc := openai.Config{BaseURL: srv.URL(), ChatModel: "chat", EmbeddingModel: "emb", EmbeddingModelDimensions: fakeDims, MaxRetries: -1}
	chat, err := openai.NewChat(oc)
	require.NoError(t, err)
	emb, err := openai.NewEmbedder(oc)
	require.NoError(t, err)
	clk := &clock{}
	cfg := Config{Chat: chat, Mini: chat, Embedder: emb, Now: clk.Now, RateLimit: -1, UpdateWorkers: 3}
	path := dbPath(t)

	s := start(t, path, cfg)
	s.createStore("support", nil)
	ids := make([]string, n)
	for i := range n {
		ids[i] = s.update("support", fmt.Sprintf("user-%03d", i), 3600, "I drink coffee every morning.")
	}
	s.stop()
	clk.Add(2 * time.Hour)
	s = start(t, path, cfg)
	// They run in the order they became due, not the ids': wait for all
	// together (slow under the race detector).
	deadline := time.Now().Add(5 * time.Minute)
	for _, id := range ids {
		for {
			code, out, _ := s.do("GET", "/memory_stores/support/updates/"+id, nil)
			require.Equal(t, http.StatusOK, code, "%v", out)
			if st := out["status"]; st != "queued" && st != "in_progress" {
				assert.Equal(t, "completed", st, "update %s: %v", id, out)
				break
			}
			require.True(t, time.Now().Before(deadline), "update %s still running", id)
			time.Sleep(20 * time.Millisecond)
		}
	}
	peak, total := f.peak()
	assert.Equal(t, n, total, "every run ended its session")
	assert.LessOrEqual(t, peak, 3, "no more runs at once than UpdateWorkers")
	assert.GreaterOrEqual(t, peak, 2, "runs do overlap")
	s.svc.mu.Lock()
	defer s.svc.mu.Unlock()
	require.Empty(t, s.svc.runQueue, "nothing left queued")
}
