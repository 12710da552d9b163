package sqlite

import (
	"container/list"
	"slices"
	"sync"
	"unsafe"

	"github.com/agentmemory/agentmemory/embed"
	"github.com/agentmemory/agentmemory/internal/topk"
	"github.com/agentmemory/agentmemory/store"
	"github.com/agentmemory/agentmemory/store/driver"
)

// vecRow is one document in a vector set: its id, the columns the search
// filters read, and its vectors (one per vector field of the kind, nil when
// absent) with their norms.
type vecRow struct {
	id string
	// session is the interaction's session id or the session's own id.
	session string
	// sessions are an insight's session ids.
	sessions    []string
	t           string // the kind's time field, as timeKey
	insightType store.InsightType
	category    string
	superseded  bool
	vecs        [2][]float32
	norms       [2]float32
}

// rowOverhead approximates a vecRow's bytes beyond its vectors and strings.
const rowOverhead = 200

func (r *vecRow) size() int64 {
	n := int64(rowOverhead + len(r.id) + len(r.session) + len(r.category) + len(r.insightType))
	for _, s := range r.sessions {
		n += int64(16 + len(s))
	}
	for _, v := range r.vecs {
		n += int64(4 * len(v))
	}
	return n
}

func (r *vecRow) setVectors(vs ...[]float32) {
	for i, v := range vs {
		r.vecs[i] = v
		r.norms[i] = embed.Norm(v)
	}
}

// vecSet holds one user's searchable rows of one kind, as of generation
// gen: their vectors and filter columns, and (text, when built) their
// full-text index.
type vecSet struct {
	mu    sync.RWMutex
	gen   int64
	rows  []vecRow
	pos   map[string]int // id → index in rows
	bytes int64          // of rows and codes
	text  *textIndex

	// With coded, each row's vectors also have an int8 code and its
	// codeMeta (prefilter.go), in step with rows: row i's code of slot j
	// is codes[j][i*dim:(i+1)*dim], its meta meta[j][i] (the zero
	// codeMeta for a missing vector or one of another length than dim,
	// which is the length of the first vector put).
	coded bool
	dim   int
	codes [2][]int8
	meta  [2][]codeMeta
}

// size is the set's approximate memory in bytes.
func (s *vecSet) size() int64 {
	if s.text != nil {
		return s.bytes + s.text.bytes
	}
	return s.bytes
}

func newVecSet(gen int64, n int) *vecSet {
	return &vecSet{gen: gen, rows: make([]vecRow, 0, n), pos: make(map[string]int, n)}
}

// withCodes makes an empty set keep int8 codes of its vectors.
func (s *vecSet) withCodes() *vecSet {
	s.coded = true
	return s
}

// put inserts or replaces a row; the caller holds mu for writing or owns s.
func (s *vecSet) put(r vecRow) {
	if i, ok := s.pos[r.id]; ok {
		s.bytes += r.size() - s.rows[i].size()
		s.rows[i] = r
		s.encode(i)
		return
	}
	s.pos[r.id] = len(s.rows)
	s.rows = append(s.rows, r)
	s.bytes += r.size()
	s.encode(len(s.rows) - 1)
}

// encode computes the codes of row i, appending them when i is new.
func (s *vecSet) encode(i int) {
	if !s.coded {
		return
	}
	r := &s.rows[i]
	if s.dim == 0 {
		for _, v := range r.vecs {
			if len(v) > 0 {
				s.dim = len(v)
				break
			}
		}
		if s.dim == 0 {
			// No vector seen yet: keep the metas in step with the rows.
			for j := range s.meta {
				if i == len(s.meta[j]) {
					s.meta[j] = append(s.meta[j], codeMeta{})
				}
			}
			return
		}
		s.recode() // with the dimension now known, every row included
		return
	}
	for j, v := range r.vecs {
		if i == len(s.meta[j]) {
			s.codes[j] = append(s.codes[j], make([]int8, s.dim)...)
			s.meta[j] = append(s.meta[j], codeMeta{})
			s.bytes += codeBytes(s.dim)
		}
		code := s.codes[j][i*s.dim : (i+1)*s.dim]
		s.meta[j][i] = codeMeta{}
		clear(code)
		if len(v) == s.dim {
			s.meta[j][i] = encodeInt8(v, r.norms[j], code)
		}
	}
}

// codeBytes is the memory of one vector's code and meta.
func codeBytes(dim int) int64 { return int64(dim) + int64(unsafe.Sizeof(codeMeta{})) }

// recode computes every row's codes afresh, s.dim being known.
func (s *vecSet) recode() {
	for j := range s.codes {
		s.codes[j], s.meta[j] = s.codes[j][:0], s.meta[j][:0]
	}
	for i := range s.rows {
		s.encode(i)
	}
}

// remove deletes a row by id; the caller holds mu for writing.
func (s *vecSet) remove(id string) {
	i, ok := s.pos[id]
	if !ok {
		return
	}
	s.bytes -= s.rows[i].size()
	last := len(s.rows) - 1
	if i != last {
		s.rows[i] = s.rows[last]
		s.pos[s.rows[i].id] = i
	}
	s.rows[last] = vecRow{}
	s.rows = s.rows[:last]
	delete(s.pos, id)
	if s.coded {
		d := s.dim
		for j := range s.meta {
			if len(s.meta[j]) <= last {
				continue
			}
			if d > 0 {
				copy(s.codes[j][i*d:(i+1)*d], s.codes[j][last*d:])
				s.codes[j] = s.codes[j][:last*d]
				s.bytes -= codeBytes(d)
			}
			s.meta[j][i] = s.meta[j][last]
			s.meta[j] = s.meta[j][:last]
		}
	}
}

type cacheKey struct {
	user string
	kind store.Kind
}

type cacheEntry struct {
	key   cacheKey
	set   *vecSet
	bytes int64 // the set's size as last accounted
}

// vecCache keeps vector sets under a byte budget, evicting the least
// recently used. A set larger than the budget is never cached.
type vecCache struct {
	mu    sync.Mutex
	max   int64 // <= 0: disabled
	total int64
	lru   list.List // of *cacheEntry, most recent at the front
	m     map[cacheKey]*list.Element
}

func newVecCache(max int64) *vecCache {
	return &vecCache{max: max, m: make(map[cacheKey]*list.Element)}
}

// get returns the cached set for k, or nil, and marks it recently used.
func (c *vecCache) get(k cacheKey) *vecSet {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.m[k]
	if !ok {
		return nil
	}
	c.lru.MoveToFront(e)
	return e.Value.(*cacheEntry).set
}

// put caches a freshly loaded set (not yet shared), replacing any other set
// for k, unless it is larger than the budget.
func (c *vecCache) put(k cacheKey, s *vecSet) {
	bytes := s.size()
	if c.max <= 0 || bytes > c.max {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.m[k]; ok {
		c.removeLocked(e)
	}
	c.m[k] = c.lru.PushFront(&cacheEntry{key: k, set: s, bytes: bytes})
	c.total += bytes
	c.evictLocked()
}

// staleGen marks a set that must not be used again: generations are
// non-negative (newGen, or 0 for none).
const staleGen = -1

// unknownGen is the generation a write replaced when it did not read it
// (no set of the user's kind was cached): no set has it, so apply marks
// one cached meanwhile stale.
const unknownGen = -2

// has reports whether the cache holds a set for k.
func (c *vecCache) has(k cacheKey) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	_, ok := c.m[k]
	return ok
}

// hasText reports whether a set with a text index is cached for k: a
// write then tokenizes what it writes, for apply.
func (c *vecCache) hasText(k cacheKey) bool {
	c.mu.Lock()
	e, ok := c.m[k]
	c.mu.Unlock()
	if !ok {
		return false
	}
	s := e.Value.(*cacheEntry).set
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.text != nil
}

// apply brings the cached set of k from generation old to gen by applying
// changes, the committed work of one write transaction. A set at another
// generation than old missed a write (another process's, or a load racing
// this write) and is dropped, to be reloaded by the next search; so is a
// set whose text index cannot take the changes (an upsert without its
// tokens) or has too many dead slots.
func (c *vecCache) apply(k cacheKey, old, gen int64, changes []change) {
	c.mu.Lock()
	e, ok := c.m[k]
	c.mu.Unlock()
	if !ok {
		return
	}
	ent := e.Value.(*cacheEntry)
	s := ent.set
	s.mu.Lock()
	stale := s.gen != old
	if !stale {
		for _, ch := range changes {
			if ch.upsert != nil {
				s.put(*ch.upsert)
				if s.text != nil {
					if ch.terms == nil {
						stale = true
					} else {
						s.text.put(*ch.upsert, ch.terms)
					}
				}
			} else {
				s.remove(ch.remove)
				if s.text != nil {
					s.text.remove(ch.remove)
				}
			}
		}
		if s.text != nil && s.text.tooSparse() {
			stale = true
		}
		if stale {
			s.gen = staleGen
		} else {
			s.gen = gen
		}
	}
	bytes, cur := s.size(), s.gen
	s.mu.Unlock()

	c.mu.Lock()
	defer c.mu.Unlock()
	if cur, ok := c.m[k]; !ok || cur != e {
		return // evicted or replaced meanwhile
	}
	if stale && cur != gen {
		c.removeLocked(e)
		return
	}
	c.total += bytes - ent.bytes
	ent.bytes = bytes
	if bytes > c.max {
		c.removeLocked(e)
	}
	c.evictLocked()
}

// dropUser forgets every set of a user.
func (c *vecCache) dropUser(user string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, kind := range store.Kinds {
		if e, ok := c.m[cacheKey{user, kind}]; ok {
			c.removeLocked(e)
		}
	}
}

func (c *vecCache) clear() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.lru.Init()
	clear(c.m)
	c.total = 0
}

func (c *vecCache) removeLocked(e *list.Element) {
	ent := e.Value.(*cacheEntry)
	c.lru.Remove(e)
	delete(c.m, ent.key)
	c.total -= ent.bytes
}

func (c *vecCache) evictLocked() {
	for c.total > c.max {
		back := c.lru.Back()
		if back == nil {
			return
		}
		c.removeLocked(back)
	}
}

// stats reports the cached sets and their bytes.
func (c *vecCache) stats() (sets int, bytes int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.m), c.total
}

// filter is the part of a SearchRequest a vector set row must match.
type filter struct {
	kind         store.Kind
	session      string
	insightType  store.InsightType
	category     string
	since, until string // timeKey bounds; "" when unset
}

// all reports whether f matches every row of its kind: no row need be
// read to apply it.
func (f *filter) all() bool {
	return f.kind != store.KindInsight && f.session == "" && f.since == "" && f.until == ""
}

func (f *filter) match(r *vecRow) bool {
	switch f.kind {
	case store.KindInsight:
		if r.superseded {
			return false
		}
		if f.session != "" && !slices.Contains(r.sessions, f.session) {
			return false
		}
		if f.insightType != "" && r.insightType != f.insightType {
			return false
		}
		if f.category != "" && r.category != f.category {
			return false
		}
	default:
		if f.session != "" && r.session != f.session {
			return false
		}
	}
	if f.since != "" && r.t < f.since {
		return false
	}
	if f.until != "" && r.t >= f.until {
		return false
	}
	return true
}

// usePrefilter reports whether a leg over s for a query of dim dimensions
// goes through the codes.
func (s *vecSet) usePrefilter(dim int, pf prefilter) bool {
	return s.coded && pf.on() && len(s.rows) >= pf.min && s.dim > 0 && dim == s.dim
}

// rank runs one vector leg per field slot over the set's matching rows, in
// one pass; the caller holds mu for reading or owns s. Each leg is what
// driver.VectorRanker returns (the same similarity expression, threshold,
// bound and tie order), without its per-candidate allocations.
//
// A coded set of at least pf.min rows is ranked through its codes
// (rankPrefiltered) when the query has the set's dimension: the same
// result, with fewer rows ranked exactly.
func (s *vecSet) rank(f *filter, slots []int, query []float32, k int, minSim float64, pf prefilter) [][]driver.Scored {
	qn := embed.Norm(query)
	if k <= 0 || qn == 0 {
		return make([][]driver.Scored, len(slots))
	}
	if s.usePrefilter(len(query), pf) {
		return s.rankPrefiltered(f, slots, query, qn, k, minSim, pf)
	}
	return s.rankExact(f, slots, query, qn, k, minSim)
}

// rankExact is rank by an exact scan of every matching row (no threshold
// pruning: see the package doc).
func (s *vecSet) rankExact(f *filter, slots []int, query []float32, qn float32, k int, minSim float64) [][]driver.Scored {
	legs := make([][]driver.Scored, len(slots))
	heaps := make([]*topk.Heap[driver.Scored], len(slots))
	for i := range heaps {
		heaps[i] = newTop(k)
	}
	for i := range s.rows {
		r := &s.rows[i]
		if !f.match(r) {
			continue
		}
		for j, slot := range slots {
			v, n := r.vecs[slot], r.norms[slot]
			if len(v) != len(query) || n == 0 {
				continue
			}
			sim := float64(embed.Dot(query, v) / (n * qn))
			if sim < minSim {
				continue
			}
			heaps[j].Offer(driver.Scored{ID: r.id, Score: sim})
		}
	}
	for i := range heaps {
		legs[i] = heaps[i].Sorted()
		if legs[i] == nil {
			legs[i] = []driver.Scored{}
		}
	}
	return legs
}
