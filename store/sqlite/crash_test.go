package sqlite_test

import (
	"bufio"
	"bytes"
	"context"
	"database/sql"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentmemory/agentmemory/internal/sqlitetest"
	"github.com/agentmemory/agentmemory/store"
	"github.com/agentmemory/agentmemory/store/sqlite"
	"github.com/agentmemory/agentmemory/store/storetest"
)

// Environment variables that turn the test binary into a child process of
// the tests below.
const (
	crashChildEnv  = "AGENTMEMORY_SQLITE_CRASH_CHILD"  // the store path
	groupChildEnv  = "AGENTMEMORY_SQLITE_GROUP_CHILD"  // the store path
	writerChildEnv = "AGENTMEMORY_SQLITE_WRITER_CHILD" // path|name|iterations
)

const liveUser, liveSession = "crash-user", "live"

// childFail reports a child's failure on stderr and exits non-zero.
func childFail(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "child: "+format+"\n", args...)
	os.Exit(3)
}

// child starts the test binary running only the test named run, with env
// set, and returns it with its stdout.
func child(t *testing.T, run, env string) (*exec.Cmd, *bufio.Scanner, *bytes.Buffer) {
	t.Helper()
	cmd := exec.CommandContext(t.Context(), os.Args[0], "-test.run=^"+run+"$", "-test.count=1")
	cmd.Env = append(os.Environ(), env)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	return cmd, bufio.NewScanner(out), &stderr
}

// crashChild writes session state and an interaction per turn, forever,
// printing each acknowledged write, until the parent kills it.
func crashChild(path string) {
	ctx := context.Background()
	s, err := sqlite.Open(ctx, path, sqlite.Config{Dimensions: dims})
	if err != nil {
		childFail("open: %v", err)
	}
	sess := &store.Session{ID: liveSession, StartTime: t0}
	for i := 1; ; i++ {
		sess.State.TurnCounter = i
		sess.State.Turns = append(sess.State.Turns, store.Turn{Seq: i, Time: t0,
			Messages: []store.TurnMessage{{ID: fmt.Sprintf("m%d", i), Role: "user", Content: fmt.Sprintf("turn %d", i)}}})
		if len(sess.State.Turns) > 4 {
			sess.State.Turns = sess.State.Turns[1:]
			sess.State.PrunedThrough = sess.State.Turns[0].Seq - 1
		}
		if err := s.PutSession(ctx, liveUser, sess); err != nil { // conditional on the last ETag
			childFail("put session %d: %v", i, err)
		}
		fmt.Printf("ack session %d\n", i)
		in := interaction(fmt.Sprintf("i%d", i), liveSession, i, fmt.Sprintf("pruned turn number%d", i), 1, float32(i), 0, 0)
		if err := s.PutInteraction(ctx, liveUser, in); err != nil {
			childFail("put interaction %d: %v", i, err)
		}
		fmt.Printf("ack interaction %d\n", i)
	}
}

// TestCrashSafety kills a writing process with SIGKILL mid-stream and checks
// that every write it acknowledged is in the reopened file, which passes
// SQLite's and FTS5's integrity checks.
func TestCrashSafety(t *testing.T) {
	t.Parallel()
	if path := os.Getenv(crashChildEnv); path != "" {
		crashChild(path)
		return
	}
	path := filepath.Join(t.TempDir(), "crash.db")
	cmd, out, stderr := child(t, "TestCrashSafety", crashChildEnv+"="+path)
	const killAfter = 60
	var lastSession, lastInteraction int
	killed := false
	for out.Scan() {
		kind, n, ok := strings.Cut(strings.TrimPrefix(out.Text(), "ack "), " ")
		if !ok {
			continue
		}
		i, err := strconv.Atoi(n)
		require.NoError(t, err, out.Text())
		switch kind {
		case "session":
			lastSession = i
		case "interaction":
			lastInteraction = i
		}
		if !killed && lastInteraction == killAfter {
			require.NoError(t, cmd.Process.Kill()) // SIGKILL: no deferred code, no Close
			killed = true
		}
	}
	err := cmd.Wait()
	require.True(t, killed, "child stopped before %d writes: %v\n%s", killAfter, err, stderr)
	var exit *exec.ExitError
	require.ErrorAs(t, err, &exit, "child was killed")
	t.Logf("killed after %d acknowledged turns", lastSession)

	ctx := t.Context()
	s := openAt(t, path, sqlite.Config{})
	sess, err := s.GetSession(ctx, liveUser, liveSession)
	require.NoError(t, err)
	// The write after the last acknowledgement may have committed too.
	assert.Contains(t, []int{lastSession, lastSession + 1}, sess.State.TurnCounter)
	require.NotEmpty(t, sess.State.Turns)
	assert.Equal(t, sess.State.TurnCounter, sess.State.Turns[len(sess.State.Turns)-1].Seq, "state is whole")
	for i := 1; i <= lastInteraction; i++ {
		in, err := s.GetInteraction(ctx, liveUser, fmt.Sprintf("i%d", i))
		require.NoError(t, err, "acknowledged interaction %d", i)
		assert.Equal(t, fmt.Sprintf("pruned turn number%d", i), in.Content)
	}
	ints, err := s.ListInteractions(ctx, liveUser, store.InteractionFilter{})
	require.NoError(t, err)
	assert.Contains(t, []int{lastInteraction, lastInteraction + 1}, len(ints))

	hits, err := s.SearchInteractions(ctx, liveUser, store.SearchRequest{Text: fmt.Sprintf("number%d", lastInteraction)})
	require.NoError(t, err)
	assert.Equal(t, []string{fmt.Sprintf("i%d", lastInteraction)}, storetest.HitIDs(hits), "full text survived")

	checkIntegrity(t, path)
	// The interrupted writer's session can go on with the ETag it reads.
	sess.State.TurnCounter++
	require.NoError(t, s.PutSession(ctx, liveUser, sess))
}

// groupWriters is the number of goroutines of groupChild.
const groupWriters = 16

// groupChild writes from groupWriters goroutines at once, so that their
// writes share commits: each appends turns to its own session and
// records their count in the session's document under its ETag,
// printing each acknowledged pair, until the parent kills it.
func groupChild(path string) {
	ctx := context.Background()
	s, err := sqlite.Open(ctx, path, sqlite.Config{Dimensions: dims})
	if err != nil {
		childFail("open: %v", err)
	}
	var mu sync.Mutex
	var wg sync.WaitGroup
	for g := range groupWriters {
		wg.Go(func() {
			user := fmt.Sprint("writer-", g)
			sess := &store.Session{ID: liveSession, StartTime: t0, ETag: store.CreateOnly}
			for i := 1; ; i++ {
				turn := &store.Turn{ID: fmt.Sprint("t", i), SessionID: liveSession, Time: t0,
					Messages: []store.TurnMessage{{ID: fmt.Sprint("m", i), Role: "user", Content: fmt.Sprint("turn ", i)}}}
				if err := s.AppendTurn(ctx, user, turn); err != nil {
					childFail("%s: append turn %d: %v", user, i, err)
				}
				sess.State.TurnCounter = i
				if err := s.PutSession(ctx, user, sess); err != nil {
					childFail("%s: put session %d: %v", user, i, err)
				}
				mu.Lock()
				fmt.Printf("ack %d %d\n", g, i)
				mu.Unlock()
			}
		})
	}
	wg.Wait()
}

// TestCrashSafetyOfGroupCommit kills a process writing from many
// goroutines at once, whose writes share transactions, and checks that
// every write it acknowledged is in the reopened file: a write is
// answered only once the commit that holds it is durable.
func TestCrashSafetyOfGroupCommit(t *testing.T) {
	t.Parallel()
	if path := os.Getenv(groupChildEnv); path != "" {
		groupChild(path)
		return
	}
	path := filepath.Join(t.TempDir(), "group.db")
	cmd, out, stderr := child(t, "TestCrashSafetyOfGroupCommit", groupChildEnv+"="+path)
	const killAfter = 400
	last := make([]int, groupWriters)
	acks := 0
	for out.Scan() {
		var g, i int
		if _, err := fmt.Sscanf(out.Text(), "ack %d %d", &g, &i); err != nil {
			continue
		}
		last[g] = i
		if acks++; acks == killAfter {
			require.NoError(t, cmd.Process.Kill()) // SIGKILL: no deferred code, no Close
		}
	}
	err := cmd.Wait()
	require.GreaterOrEqual(t, acks, killAfter, "child stopped early: %v\n%s", err, stderr)
	var exit *exec.ExitError
	require.ErrorAs(t, err, &exit, "child was killed")

	ctx := t.Context()
	s := openAt(t, path, sqlite.Config{})
	for g, n := range last {
		user := fmt.Sprint("writer-", g)
		turns, err := s.ListTurns(ctx, user, liveSession, 0)
		require.NoError(t, err, user)
		// The writes after the last acknowledgement may have committed too.
		assert.Contains(t, []int{n, n + 1}, len(turns), "%s: %d turns acknowledged", user, n)
		for i, tr := range turns {
			assert.Equal(t, i+1, tr.Seq, user)
		}
		sess, err := s.GetSession(ctx, user, liveSession)
		if n == 0 {
			continue
		}
		require.NoError(t, err, user)
		assert.Contains(t, []int{n, n + 1}, sess.State.TurnCounter, user)
	}
	checkIntegrity(t, path)
}

// checkIntegrity runs SQLite's and FTS5's integrity checks on the file at
// path through a fresh connection. (A connection that has already queried
// an FTS5 table can report false corruption from PRAGMA integrity_check
// after another connection wrote: FTS5's integrity method reuses the
// connection's cached index structure without the staleness check its
// queries make. A fresh connection has no such cache.)
func checkIntegrity(t *testing.T, path string) {
	t.Helper()
	db, err := sql.Open("sqlite", path)
	require.NoError(t, err)
	defer db.Close()
	var result string
	require.NoError(t, db.QueryRow(`PRAGMA integrity_check`).Scan(&result))
	assert.Equal(t, "ok", result)
	for _, fts := range []string{"interactions_fts", "insights_fts", "sessions_fts"} {
		_, err := db.Exec(`INSERT INTO ` + fts + `(` + fts + `) VALUES ('integrity-check')`)
		assert.NoError(t, err, fts)
	}
}

// writerChild adds iterations turns to the shared session (ETag retry
// loop) and one interaction per turn, then exits.
func writerChild(spec string) {
	parts := strings.Split(spec, "|")
	if len(parts) != 3 {
		childFail("bad spec %q", spec)
	}
	path, name := parts[0], parts[1]
	n, err := strconv.Atoi(parts[2])
	if err != nil {
		childFail("bad spec %q: %v", spec, err)
	}
	if err := writeTurns(context.Background(), path, name, n); err != nil {
		childFail("%s: %v", name, err)
	}
}

func writeTurns(ctx context.Context, path, name string, n int) error {
	s, err := sqlite.Open(ctx, path, sqlite.Config{Dimensions: dims})
	if err != nil {
		return err
	}
	defer s.Close()
	for i := range n {
		if _, err := incrementSession(ctx, s, liveUser, liveSession); err != nil {
			return fmt.Errorf("turn %d: %w", i, err)
		}
		in := interaction(fmt.Sprintf("%s-%d", name, i), liveSession, i, "from "+name, 1, float32(i), 0, 0)
		if err := s.PutInteraction(ctx, liveUser, in); err != nil {
			return fmt.Errorf("interaction %d: %w", i, err)
		}
	}
	return s.Close()
}

// TestProcessesWritingConcurrently runs two child processes and this one
// writing the same session (conditional ETag writes) and their own
// interactions to one file at once: no update may be lost and the file must
// stay intact.
func TestProcessesWritingConcurrently(t *testing.T) {
	t.Parallel()
	if spec := os.Getenv(writerChildEnv); spec != "" {
		writerChild(spec)
		return
	}
	const n = 40
	ctx := t.Context()
	path := sqlitetest.NewFile(t)
	s := openAt(t, path, sqlite.Config{})
	require.NoError(t, s.PutSession(ctx, liveUser, &store.Session{ID: liveSession}))

	type proc struct {
		cmd    *exec.Cmd
		stderr *bytes.Buffer
	}
	var procs []proc
	for _, name := range []string{"a", "b"} {
		cmd, out, stderr := child(t, "TestProcessesWritingConcurrently", fmt.Sprintf("%s=%s|%s|%d", writerChildEnv, path, name, n))
		go func() {
			for out.Scan() { // drain the test framework's output
			}
		}()
		procs = append(procs, proc{cmd, stderr})
	}
	parentErr := writeTurns(ctx, path, "parent", n)
	for _, p := range procs {
		require.NoError(t, p.cmd.Wait(), "child: %s", p.stderr)
	}
	require.NoError(t, parentErr)

	sess, err := s.GetSession(ctx, liveUser, liveSession)
	require.NoError(t, err)
	assert.Equal(t, 3*n, sess.State.TurnCounter, "every conditional write counted once")
	for _, name := range []string{"a", "b", "parent"} {
		ints, err := s.ListInteractions(ctx, liveUser, store.InteractionFilter{})
		require.NoError(t, err)
		mine := 0
		for _, in := range ints {
			if strings.HasPrefix(in.ID, name+"-") {
				mine++
			}
		}
		assert.Equal(t, n, mine, name)
	}
	hits, err := s.SearchInteractions(ctx, liveUser, store.SearchRequest{Text: "from", Vector: []float32{1, 0, 0, 0}, TopK: store.MaxTopK})
	require.NoError(t, err)
	assert.Len(t, hits, 3*n)
	checkIntegrity(t, path)
}
