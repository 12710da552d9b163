package memoryservice

import (
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
)

// lockScope keeps a scope's lock only while someone holds or waits for
// it: after many scopes were locked, contended and released, the map of
// locks is empty again.
func TestScopeLocksAreDroppedWhenUnused(t *testing.T) {
	s := start(t, dbPath(t), Config{})
	var wg sync.WaitGroup
	for i := range 200 {
		user := UserID("support", string(rune('a'+i%26)))
		wg.Add(1)
		go func() {
			defer wg.Done()
			unlock := s.svc.lockScope("run", user)
			unlock()
		}()
	}
	wg.Wait()
	hold := s.svc.lockScope("accept", UserID("support", "zed"))
	s.svc.mu.Lock()
	assert.Len(t, s.svc.scopeMu, 1, "only the lock held")
	s.svc.mu.Unlock()
	hold()
	s.svc.mu.Lock()
	defer s.svc.mu.Unlock()
	assert.Empty(t, s.svc.scopeMu, "no lock is kept once unused")
}
