// Command agentmemory-mcp serves one user's long-term memory over the
// Model Context Protocol on standard input and output, for MCP clients
// (desktop assistants, IDE agents) that start it as a subprocess:
//
//	go run ./cmd/agentmemory-mcp -user dana [-db agentmemory.db] [-read-only] [-offline]
//
// # Memory and models
//
// Memory lives in the SQLite file -db (created if missing, in a directory
// that must exist), or in Azure Cosmos DB when
// AZURE_COSMOS_ENDPOINT is set; the model and embedder come from the
// environment as for the demo (OPENAI_API_KEY, OPENAI_BASE_URL or
// AZURE_OPENAI_ENDPOINT; see docs/library.md), and without them from the offline
// "no LLM" client and the lexical embedder. The tools are those of package
// mcpserver, bound to -user.
//
// # Sessions
//
// A session recorded with record_turn ends with end_session, or after 30 minutes without a turn while the server runs;
// insights are extracted every 20 turns in any case, so a client that
// never ends its sessions still builds the user's insights.
//
// Logs go to standard error: standard output carries the protocol.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentmemory/agentmemory/internal/stack"
	"github.com/agentmemory/agentmemory/mcpserver"
	"github.com/agentmemory/agentmemory/provider"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	err := run(ctx, os.Args[1:], os.LookupEnv, &mcp.StdioTransport{}, os.Stderr)
	if err != nil && !errors.Is(err, context.Canceled) {
		fmt.Fprintln(os.Stderr, "agentmemory-mcp:", err)
		stop()
		os.Exit(1)
	}
}

// extractEvery is the number of turns of a session between insight
// extractions.
const extractEvery = 20

// drainTimeout bounds the wait for background memory work at exit.
const drainTimeout = 30 * time.Second

// run parses args, opens memory and serves it on t until the client
// disconnects or ctx ends.
func run(ctx context.Context, args []string, lookup func(string) (string, bool), t mcp.Transport, stderr io.Writer) error {
	fs := flag.NewFlagSet("agentmemory-mcp", flag.ContinueOnError)
	fs.SetOutput(stderr)
	user := fs.String("user", "", "the user whose memory is served (required)")
	db := fs.String("db", "agentmemory.db", "SQLite memory file (unused with AZURE_COSMOS_ENDPOINT)")
	readOnly := fs.Bool("read-only", false, "serve only the tools that read memory")
	offline := fs.Bool("offline", false, "use the offline no-LLM client even if a model is configured")
	verbose := fs.Bool("v", false, "log at debug level")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *user == "" {
		return errors.New("-user is required: the server serves one user's memory")
	}
	logger := stack.Logger(stderr, *verbose)

	m, err := stack.ModelsFromEnv(lookup, *offline)
	if err != nil {
		return err
	}
	logKey, err := stack.DeletionLogKey(lookup)
	if err != nil {
		return err
	}
	st, desc, err := stack.OpenStore(ctx, lookup, *db, m.Embedder.Dimensions(), logger)
	if err != nil {
		return err
	}
	defer st.Close()
	// Clients may never call end_session: a session also ends after
	// provider.DefaultIdleTimeout without record_turn, and yields insights
	// every extractEvery turns before that.
	mem, err := provider.New(st, provider.Config{Chat: m.Chat, Mini: m.Mini, Embedder: m.Embedder, Logger: logger,
		Mode: provider.ModeIdle, ExtractEvery: extractEvery, DeletionLogKey: logKey})
	if err != nil {
		return err
	}
	defer func() {
		// Let background work (pruning, reflection) finish, within reason.
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), drainTimeout)
		defer cancel()
		if err := mem.Close(cctx); err != nil {
			logger.Warn("agentmemory-mcp: background work abandoned", "err", err)
		}
	}()
	srv, err := mcpserver.New(mem, st, mcpserver.Config{UserID: *user, ReadOnly: *readOnly})
	if err != nil {
		return err
	}
	logger.Info("agentmemory-mcp: serving", "user", *user, "models", m.Description, "memory", desc, "read_only", *readOnly)
	return srv.Run(ctx, t)
}
