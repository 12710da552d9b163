package memoryservice

import "sync"

// maxRecent bounds the entries a recent keeps; past it the cache starts
// empty again.
const maxRecent = 10_000

// recent keeps what this replica last wrote or read of some records, by
// key, for its next accept to write without reading them again. It is a
// cache, not state: every entry used is checked in the accept's batch (an
// ETag it writes under, or checks), so that a write another replica made
// since fails the batch whole and the accept reads again. Its users keep
// entries only where the batch is written whole (store.RecordBatch). The
// zero value is empty and ready; it is safe for concurrent use.
type recent[V any] struct {
	mu sync.Mutex
	m  map[string]V
}

// get returns the entry of key.
func (c *recent[V]) get(key string) (V, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	v, ok := c.m[key]
	return v, ok
}

// put keeps v under key.
func (c *recent[V]) put(key string, v V) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil || len(c.m) >= maxRecent {
		c.m = make(map[string]V)
	}
	c.m[key] = v
}

// drop forgets key.
func (c *recent[V]) drop(key string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.m, key)
}
