package provider_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agentmemory/agentmemory/agent"
	"github.com/agentmemory/agentmemory/internal/longtest"
	"github.com/agentmemory/agentmemory/internal/sqlitetest"
	"github.com/agentmemory/agentmemory/internal/stack"
	"github.com/agentmemory/agentmemory/keeper"
	"github.com/agentmemory/agentmemory/provider"
	"github.com/agentmemory/agentmemory/store"
	"github.com/agentmemory/agentmemory/store/sqlite"
)

// killChildEnv turns the test binary into the child of TestKillTrials:
// "path|session|turns".
const killChildEnv = "AGENTMEMORY_PROVIDER_KILL_CHILD"

// killChild records turns of one session, flushing the background work
// every few turns, then ends the session, printing each step it completes:
// "ack N" once turn N is acknowledged, "flush" before a Flush, "end"
// before EndSession, "ended" after it.
func killChild(spec string) {
	parts := strings.Split(spec, "|")
	turns, _ := strconv.Atoi(parts[2])
	ctx := context.Background()
	s, err := openChildStack(ctx, parts[0])
	if err != nil {
		fmt.Fprintln(os.Stderr, "child:", err)
		os.Exit(3)
	}
	sess, err := agent.NewSession(parts[1], "u1")
	if err != nil {
		os.Exit(3)
	}
	out := bufio.NewWriter(os.Stdout)
	say := func(line string) { fmt.Fprintln(out, line); out.Flush() }
	for i := 1; i <= turns; i++ {
		msg := agent.UserText(fmt.Sprintf("Turn %d: I put $%d into my Roth IRA.", i, 100*i))
		msg.ID = fmt.Sprintf("%s-t%d", parts[1], i)
		if err := s.Record(ctx, sess, msg); err != nil {
			fmt.Fprintln(os.Stderr, "child: record:", err)
			os.Exit(3)
		}
		say("ack " + strconv.Itoa(i))
		if i%4 == 0 {
			say("flush")
			if err := s.Flush(ctx); err != nil {
				os.Exit(3)
			}
		}
	}
	say("end")
	if _, err := s.EndSession(ctx, sess); err != nil {
		fmt.Fprintln(os.Stderr, "child: end:", err)
		os.Exit(3)
	}
	say("ended")
	os.Exit(0)
}

// openChildStack is the child's provider: the offline model on the SQLite
// file, pruning every 3 turns.
func openChildStack(ctx context.Context, path string) (*provider.MemoryProvider, error) {
	st, err := sqlite.Open(ctx, path, sqlite.Config{Dimensions: 384})
	if err != nil {
		return nil, err
	}
	m, err := stack.ModelsFromEnv(nil, true)
	if err != nil {
		return nil, err
	}
	return provider.New(st, provider.Config{Chat: m.Chat, Embedder: m.Embedder, KeeperConfig: keeper.Config{K: 3}, Reflection: provider.ReflectManual,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
}

func TestMain(m *testing.M) {
	if spec := os.Getenv(killChildEnv); spec != "" {
		killChild(spec)
	}
	if spec := os.Getenv(instanceChildEnv); spec != "" {
		instanceChild(spec)
	}
	os.Exit(m.Run())
}

// TestKillTrials kills (SIGKILL) a process recording turns at random
// points — during turns, inside Flush, inside EndSession — then resumes the
// session in this process and ends it. In every trial: every acknowledged
// turn is stored, once; the file opens; and after the end every stored
// turn is in exactly one interaction. 12 trials by default; 300 with
// AGENTMEMORY_LONG_TESTS set.
func TestKillTrials(t *testing.T) {
	trials := longtest.Pick(t, 12, 300)
	path := sqlitetest.NewFile(t)
	rng := rand.New(rand.NewPCG(1, 2))
	var inTurns, inFlush, inEnd, finished, acked int
	for trial := range trials {
		session := fmt.Sprintf("trial-%d", trial)
		turns := 5 + rng.IntN(20)
		cmd, sc, stderr := startChild(t, fmt.Sprintf("%s=%s|%s|%d", killChildEnv, path, session, turns))

		// Where to kill: after a random acknowledged turn, or on entering
		// a Flush or EndSession, then a random 0-3 ms later.
		target := []string{"ack " + strconv.Itoa(1+rng.IntN(turns)), "flush", "end"}[trial%3]
		delay := time.Duration(rng.IntN(3000)) * time.Microsecond
		last, phase := 0, ""
		for sc.Scan() {
			line := sc.Text()
			if n, ok := strings.CutPrefix(line, "ack "); ok {
				last, _ = strconv.Atoi(n)
			}
			phase = line
			if line == target || (target == "flush" && line == "end") {
				time.Sleep(delay)
				_ = cmd.Process.Kill()
				break
			}
		}
		// Acknowledgements printed before the kill landed count too.
		for sc.Scan() {
			if n, ok := strings.CutPrefix(sc.Text(), "ack "); ok {
				last, _ = strconv.Atoi(n)
			}
			phase = sc.Text()
		}
		err := cmd.Wait()
		if phase == "ended" && err == nil {
			finished++
		} else {
			require.Error(t, err, "the child was killed (stderr: %s)", stderr.String())
			require.NotContains(t, stderr.String(), "child:", "the child failed on its own")
			switch phase {
			case "end":
				inEnd++
			case "flush":
				inFlush++
			default:
				inTurns++
			}
		}
		acked += last
		checkAfterKill(t, path, session, last)
	}
	t.Logf("%d trials: killed in turns %d, in Flush %d, in EndSession %d, finished %d; %d acknowledged turns, 0 lost, 0 duplicated",
		trials, inTurns, inFlush, inEnd, finished, acked)
}

// checkAfterKill opens the file as a new process would, checks the
// acknowledged turns, ends the session and checks its interactions.
func checkAfterKill(t *testing.T, path, session string, acked int) {
	t.Helper()
	ctx := context.Background()
	s := openOffline(t, path, func(c *provider.Config) { c.KeeperConfig.K = 3; c.Reflection = provider.ReflectManual })
	turns, err := s.st.ListTurns(ctx, "u1", session, 0)
	require.NoError(t, err)
	require.GreaterOrEqual(t, len(turns), acked, "%s: acknowledged turns lost", session)
	seen := map[string]bool{}
	for i, tr := range turns {
		require.Equal(t, i+1, tr.Seq, "%s: turn numbers 1..n", session)
		require.False(t, seen[tr.Messages[0].ID], "%s: turn %s stored twice", session, tr.Messages[0].ID)
		seen[tr.Messages[0].ID] = true
	}
	for i := 1; i <= acked; i++ {
		require.True(t, seen[fmt.Sprintf("%s-t%d", session, i)], "%s: acknowledged turn %d lost", session, i)
	}
	doc, err := s.st.GetSession(ctx, "u1", session)
	require.NoError(t, err)
	if doc.Status != store.SessionCompleted {
		sess, err := agent.NewSession(session, "u1")
		require.NoError(t, err)
		_, err = s.mem.EndSession(ctx, sess)
		require.NoError(t, err)
	}
	assertEachTurnOnce(t, s.st, "u1", session, len(turns))
	require.NoError(t, s.mem.Close(ctx))
	require.NoError(t, s.st.Close())
}

// startChild starts this test binary as a child process, running no test,
// with env (NAME=value) added to its environment: the variable tells
// TestMain which child's part to play. It returns the child, a scanner
// over the lines it prints, and what it writes to stderr.
func startChild(t *testing.T, env string) (*exec.Cmd, *bufio.Scanner, *strings.Builder) {
	t.Helper()
	cmd := exec.CommandContext(t.Context(), os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), env)
	stderr := &strings.Builder{}
	cmd.Stderr = stderr
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	return cmd, bufio.NewScanner(stdout), stderr
}
