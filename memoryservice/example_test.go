package memoryservice_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"

	"github.com/agentmemory/agentmemory/embed/lexical"
	"github.com/agentmemory/agentmemory/llm/offline"
	"github.com/agentmemory/agentmemory/memoryservice"
	"github.com/agentmemory/agentmemory/store/sqlite"
)

// Serve the Memory Store API on a SQLite file with the offline models,
// and create a memory store over HTTP.
func Example() {
	ctx := context.Background()
	dir, _ := os.MkdirTemp("", "memoryservice")
	defer os.RemoveAll(dir)
	emb, _ := lexical.New(lexical.Config{})
	chat, _ := offline.New(offline.Config{})
	st, _ := sqlite.Open(ctx, filepath.Join(dir, "memory.db"), sqlite.Config{Dimensions: emb.Dimensions()})
	defer st.Close()
	svc, err := memoryservice.New(ctx, st, memoryservice.Config{Chat: chat, Embedder: emb,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer svc.Close(ctx)
	srv := httptest.NewServer(svc) // or http.ListenAndServe(addr, svc)
	defer srv.Close()

	resp, err := http.Post(srv.URL+"/memory_stores?api-version=v1", "application/json", strings.NewReader(
		`{"name": "support", "definition": {"kind": "default", "chat_model": "gpt-4.1", "embedding_model": "text-embedding-3-small"}}`))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer resp.Body.Close()
	fmt.Println(resp.Status)
	// Output: 200 OK
}
