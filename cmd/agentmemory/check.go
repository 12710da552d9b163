package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"

	"github.com/agentmemory/agentmemory/internal/check"
	"github.com/agentmemory/agentmemory/internal/stack"
)

// named is a client that can name its model (llm/openai's).
type named interface{ Model() string }

func runCheck(ctx context.Context, args []string, stdout, stderr io.Writer, lookup func(string) (string, bool)) int {
	fs := flag.NewFlagSet("agentmemory check", flag.ContinueOnError)
	fs.SetOutput(stderr)
	db := fs.String("db", "", "SQLite memory file to check (unused with AZURE_COSMOS_ENDPOINT); default: a new temporary file")
	asJSON := fs.Bool("json", false, "write the report as JSON")
	calls := fs.Int("calls", check.DefaultCalls, "calls per model and store whose latency is measured")
	timeout := fs.Duration("timeout", check.DefaultTimeout, "bound on each call")
	offline := fs.Bool("offline", false, "check the offline defaults even if a model is configured")
	verbose := fs.Bool("v", false, "log at debug level")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return exitOK
		}
		return exitUsage
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "agentmemory check: unexpected argument %q\n", fs.Arg(0))
		return exitUsage
	}
	if *calls < 1 || *timeout <= 0 {
		fmt.Fprintln(stderr, "agentmemory check: -calls must be at least 1 and -timeout positive")
		return exitUsage
	}
	level := slog.LevelWarn
	if *verbose {
		level = slog.LevelDebug
	}
	logger := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: level}))
	fail := func(err error) int {
		fmt.Fprintln(stderr, "agentmemory check:", err)
		return exitFailed
	}

	m, err := stack.ModelsFromEnv(lookup, *offline)
	if err != nil {
		return fail(err)
	}
	s := check.Stack{Chat: m.Chat, Mini: m.Mini, Embedder: m.Embedder, Offline: m.Offline, Description: m.Description}
	if n, ok := m.Chat.(named); ok {
		s.ChatName = n.Model()
	}
	if n, ok := m.Mini.(named); ok {
		s.MiniName = n.Model()
	}

	path, temp := *db, false
	if path == "" {
		dir, err := os.MkdirTemp("", "agentmemory-check")
		if err != nil {
			return fail(err)
		}
		defer os.RemoveAll(dir)
		path, temp = filepath.Join(dir, "check.db"), true
	}
	openCtx, cancel := context.WithTimeout(ctx, *timeout)
	st, desc, err := stack.OpenStore(openCtx, lookup, path, m.Embedder.Dimensions(), logger)
	cancel()
	switch {
	case err != nil:
		s.StoreErr = err
		s.StoreName = storeName(lookup, path)
	default:
		defer st.Close()
		s.Store, s.StoreName = st, desc
		if temp && strings.HasPrefix(desc, "SQLite") {
			s.StoreName = "SQLite, a new temporary file (pass -db to check yours)"
		}
	}

	r, err := check.Run(ctx, s, check.Config{Calls: *calls, Timeout: *timeout})
	if err != nil {
		return fail(err)
	}
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		err = enc.Encode(r)
	} else {
		err = r.WriteText(stdout)
	}
	if err != nil {
		return fail(err)
	}
	if r.Failed() {
		return exitFailed
	}
	return exitOK
}

// storeName describes the store the environment selects when it could not
// be opened.
func storeName(lookup func(string) (string, bool), path string) string {
	if v, ok := lookup("AZURE_COSMOS_ENDPOINT"); ok && strings.TrimSpace(v) != "" {
		return "Azure Cosmos DB " + strings.TrimSpace(v)
	}
	return "SQLite file " + path
}
