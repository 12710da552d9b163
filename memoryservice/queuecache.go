package memoryservice

import (
	"sync"

	"github.com/agentmemory/agentmemory/store"
)

// maxQueueCache bounds the scopes queueCache keeps; past it the cache
// starts empty again.
const maxQueueCache = 10_000

// queueCache keeps, for each scope this replica accepted an update of,
// the scope's queue record and the update it names as this replica last
// wrote them, with their ETags: the next accept of the scope here writes
// under those ETags without reading either again. It is a cache, not
// state: a write another replica made since (an accept of the scope, a
// claim of the update, a deletion's mark) changed an ETag, so the
// accept's batch fails with a conflict and enqueue reads them. It is
// used only where the batch is written whole (store.RecordBatch): written
// one by one, the queue record's write would succeed and the new update's
// be made before the stale update was found out.
type queueCache struct {
	mu sync.Mutex
	m  map[string]queuedState // by the scope's user id
}

// queuedState is a scope's queue record q, written with ETag qtag, and
// the record of the update it names, as written (with its ETag).
type queuedState struct {
	q    scopeQueue
	qtag string
	upd  store.Record
}

// get returns what the cache keeps of the scope of user id userID.
func (c *queueCache) get(userID string) (queuedState, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	st, ok := c.m[userID]
	return st, ok
}

// put keeps st for the scope of user id userID.
func (c *queueCache) put(userID string, st queuedState) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil || len(c.m) >= maxQueueCache {
		c.m = make(map[string]queuedState)
	}
	c.m[userID] = st
}

// drop forgets the scope of user id userID.
func (c *queueCache) drop(userID string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.m, userID)
}
