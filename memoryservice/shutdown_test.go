package memoryservice

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentmemory/agentmemory/internal/fakeopenai"
	"github.com/agentmemory/agentmemory/llm/openai"
	"github.com/agentmemory/agentmemory/store"
)

// TestAnUpdateCutByShutdownResumes: a shutdown whose drain time runs out
// while an update runs (its model call hanging) leaves the update in
// progress, not failed, and the next start completes it.
func TestAnUpdateCutByShutdownResumes(t *testing.T) {
	srv := fakeopenai.New(t)
	release := make(chan struct{})
	called := make(chan struct{})
	var once sync.Once
	srv.HandleChat(func(fakeopenai.Request) fakeopenai.Reply {
		once.Do(func() { close(called) })
		<-release
		return fakeopenai.Error(500, "gone")
	})
	chat, err := openai.NewChat(openai.Config{BaseURL: srv.URL(), ChatModel: "m", MaxRetries: -1})
	require.NoError(t, err)

	path := dbPath(t)
	s := start(t, path, Config{Chat: chat, Mini: chat})
	s.createStore("support", nil)
	id := s.update("support", "frank", 0, "I prefer trains to planes.")
	select {
	case <-called:
	case <-time.After(30 * time.Second):
		t.Fatal("the update's run never called the model")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	go func() { time.Sleep(500 * time.Millisecond); close(release) }()
	assert.Error(t, s.svc.Close(ctx), "the drain ran out of time")

	var rec updateRecord
	_, err = s.svc.getRecord(context.Background(), updateKey(id), &rec)
	require.NoError(t, err)
	assert.Equal(t, statusInProgress, rec.Status, "cut short, not failed")
	s.stop()

	s2 := start(t, path, Config{}) // offline models now
	done := s2.wait("support", id)
	operations(t, done)
	assert.Contains(t, contents(s2.list("support", "frank", "")), "trains")
}

// TestARunWaitingForADeletedScopeWritesNothing: an update that became due
// while delete_scope held the scope stores nothing after it: neither its
// record nor any session of the forgotten scope.
func TestARunWaitingForADeletedScopeWritesNothing(t *testing.T) {
	s := start(t, dbPath(t), Config{})
	s.createStore("support", nil)
	userID := UserID("support", "gina")
	unlock := s.svc.lockScope("run", userID) // as delete_scope holds it
	id := s.update("support", "gina", 0, "I prefer tea.")
	time.Sleep(100 * time.Millisecond) // the update is due and waits for the lock
	require.NoError(t, s.svc.deleteRecord(context.Background(), updateKey(id)))
	p, err := s.svc.providerFor(&memoryStore{Name: "support"})
	require.NoError(t, err)
	_, err = p.ForgetUser(context.Background(), userID)
	require.NoError(t, err)
	unlock()
	s.svc.wg.Wait() // the run, now past the lock

	var rec updateRecord
	_, err = s.svc.getRecord(context.Background(), updateKey(id), &rec)
	assert.ErrorIs(t, err, store.ErrNotFound, "the record is not written again")
	ss, err := s.st.ListSessions(context.Background(), userID, store.SessionFilter{})
	require.NoError(t, err)
	assert.Empty(t, ss, "no session of the forgotten scope")
}
