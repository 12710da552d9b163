// Command agentmemory is agentmemory's command-line tool for users. It
// has one subcommand so far:
//
//	go run ./cmd/agentmemory check [-db FILE] [-json] [-calls 3] [-timeout 30s] [-offline] [-v]
//
// # check
//
// check reads the environment the demo reads (the models: OPENAI_API_KEY,
// OPENAI_BASE_URL or AZURE_OPENAI_ENDPOINT and the variables beside them;
// the store: AZURE_COSMOS_ENDPOINT, else the SQLite file -db) and reports,
// for the chat model, the mini model, the embedding model and the store,
// whether each works for agentmemory (see package internal/check): reachable,
// latency, tool calling, JSON output, embedding dimensions against the
// store, and the embedder's similarity on built-in related and unrelated
// pairs with the calibration it implies. Without a model configured it
// reports the offline defaults and says so. The report is text, or JSON
// with -json. The exit status is 0 when no check failed, 1 when one did or
// the configuration is incomplete, 2 for a usage error.
//
// Without -db the store checks run on a new temporary SQLite file, removed
// at exit; with -db they read that file (it is created if missing) — the
// dimension check then compares the vectors it already holds with the
// embedder's. On the store the check writes one probe document under a
// throwaway user id ("agentmemory-check-…") and deletes that user.
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"slices"
	"strings"
	"syscall"
)

// command is one subcommand.
type command struct {
	summary string
	run     func(ctx context.Context, args []string, stdout, stderr io.Writer, lookup func(string) (string, bool)) int
}

// commands are the subcommands by name.
var commands = map[string]command{
	"check": {summary: "check that the configured models and store work for agentmemory", run: runCheck},
}

// Exit statuses.
const (
	exitOK     = 0
	exitFailed = 1
	exitUsage  = 2
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr, os.LookupEnv)
	stop()
	os.Exit(code)
}

// run runs the subcommand args names and returns the exit status.
func run(ctx context.Context, args []string, stdout, stderr io.Writer, lookup func(string) (string, bool)) int {
	if len(args) == 0 || args[0] == "-h" || args[0] == "-help" || args[0] == "--help" || args[0] == "help" {
		usage(stderr)
		if len(args) == 0 {
			return exitUsage
		}
		return exitOK
	}
	c, ok := commands[args[0]]
	if !ok {
		fmt.Fprintf(stderr, "agentmemory: unknown command %q\n", args[0])
		usage(stderr)
		return exitUsage
	}
	return c.run(ctx, args[1:], stdout, stderr, lookup)
}

func usage(w io.Writer) {
	var b strings.Builder
	b.WriteString("usage: agentmemory <command> [flags]\n\ncommands:\n")
	names := make([]string, 0, len(commands))
	for n := range commands {
		names = append(names, n)
	}
	slices.Sort(names)
	for _, n := range names {
		fmt.Fprintf(&b, "  %-8s %s\n", n, commands[n].summary)
	}
	b.WriteString("\nRun agentmemory <command> -h for a command's flags.\n")
	_, _ = io.WriteString(w, b.String())
}
