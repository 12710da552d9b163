package sqlite

import (
	"context"
	"database/sql"
	"sync"

	"github.com/agentmemory/agentmemory/store"
)

// setLoads runs the loads of users' cached sets, at most one per set at a
// time, detached from the searches that wait for them: a search that gives
// up (its context ends) leaves the load running, so the set is cached for
// the next search instead of every search starting the load again and
// giving up again. A cold set of 10,000 interactions takes seconds to load
// (its text is tokenized through FTS5), more than retrieval gives a search.
type setLoads struct {
	mu  sync.Mutex
	m   map[cacheKey]*setLoad
	wg  sync.WaitGroup
	ctx context.Context // cancelled by Close
}

// setLoad is one load in flight; set and err are valid once done is
// closed.
type setLoad struct {
	done chan struct{}
	set  *vecSet
	err  error
}

// loadShared returns the load of key's set in flight, starting one unless
// there is.
func (s *Store) loadShared(key cacheKey, sp spec) *setLoad {
	s.loads.mu.Lock()
	defer s.loads.mu.Unlock()
	if l, ok := s.loads.m[key]; ok {
		return l
	}
	l := &setLoad{done: make(chan struct{})}
	if s.closed.Load() {
		// Close has stopped the loads (or is waiting for them): start none.
		l.err = store.ErrClosed
		close(l.done)
		return l
	}
	s.loads.m[key] = l
	s.loads.wg.Add(1)
	go func() {
		defer s.loads.wg.Done()
		defer close(l.done)
		defer func() {
			s.loads.mu.Lock()
			delete(s.loads.m, key)
			s.loads.mu.Unlock()
		}()
		ctx := s.loads.ctx
		l.err = s.readOn(ctx, s.lr, "load "+string(key.kind), func(tx *sql.Tx) error {
			gen, err := readGen(ctx, tx, key.user, key.kind)
			if err != nil {
				return err
			}
			set, err := loadSet(ctx, tx, key.user, sp, gen, true, s.pf.on())
			if err != nil {
				return err
			}
			if !s.closed.Load() {
				s.cache.put(key, set)
			}
			l.set = set
			sets, bytes := s.cache.stats()
			s.log.Debug("vector set loaded", "kind", sp.kind, "rows", len(set.rows), "bytes", set.bytes,
				"cached_sets", sets, "cached_bytes", bytes)
			return nil
		})
	}()
	return l
}
