package sqlite

import (
	"context"
	"errors"
	"maps"
	"slices"
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
		ctx := s.loads.ctx
		var unsaved map[int64]*docTerms
		var loadedAt int64 // the generation loaded; the set's own moves as writes apply to it
		l.err = s.readOn(ctx, s.lr, nil, "load "+string(key.kind), func(tx *readTx) error {
			gen, err := readGen(ctx, tx, key.user, key.kind)
			if err != nil {
				return err
			}
			loadedAt = gen
			set, u, err := loadSet(ctx, tx, key.user, sp, gen, true, s.pf.on())
			if err != nil {
				return err
			}
			if !s.closed.Load() {
				s.cache.put(key, set)
			}
			l.set, unsaved = set, u
			sets, bytes := s.cache.stats()
			s.log.Debug("vector set loaded", "kind", sp.kind, "rows", len(set.rows), "bytes", set.bytes,
				"cached_sets", sets, "cached_bytes", bytes, "tokenized", len(u))
			return nil
		})
		s.loads.mu.Lock()
		delete(s.loads.m, key)
		s.loads.mu.Unlock()
		close(l.done)
		if l.err == nil && len(unsaved) > 0 {
			if err := s.saveTerms(ctx, key, sp, loadedAt, unsaved); err != nil && ctx.Err() == nil && !errors.Is(err, store.ErrClosed) {
				s.log.Warn("store the tokens of loaded documents", "kind", sp.kind, "err", err)
			}
		}
	}()
	return l
}

// saveTerms stores the tokens that a load of key's set, at generation
// gen, found missing and tokenized, unless a write has changed the user's
// documents of the kind since (they are then tokenized again when next
// loaded). It writes in transactions of saveTermsChunk documents, so that
// writers wait for one at most.
func (s *Store) saveTerms(ctx context.Context, key cacheKey, sp spec, gen int64, unsaved map[int64]*docTerms) error {
	rids := slices.Sorted(maps.Keys(unsaved))
	for lo := 0; lo < len(rids); lo += saveTermsChunk {
		part := make(map[int64]*docTerms, saveTermsChunk)
		for _, rid := range rids[lo:min(lo+saveTermsChunk, len(rids))] {
			part[rid] = unsaved[rid]
		}
		stale := false
		err := s.write(ctx, "store terms", key.user, func(tx *writeTx) ([]change, error) {
			cur, err := readGen(ctx, tx, key.user, key.kind)
			if err != nil {
				return nil, err
			}
			if stale = cur != gen; stale {
				return nil, nil
			}
			return nil, insertTerms(ctx, tx, key.user, sp, part)
		})
		if err != nil || stale {
			return err
		}
	}
	return nil
}

// saveTermsChunk is the number of documents whose terms saveTerms writes
// in one transaction.
const saveTermsChunk = 5000
