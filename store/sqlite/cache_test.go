package sqlite

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentmemory/agentmemory/store"
	"github.com/agentmemory/agentmemory/store/driver"
)

func testSet(gen int64, ids ...string) *vecSet {
	s := newVecSet(gen, len(ids))
	for _, id := range ids {
		r := vecRow{id: id, session: "s"}
		r.setVectors([]float32{1, 0, 0, 0}, nil)
		s.put(r)
	}
	return s
}

func setIDs(s *vecSet) []string {
	var ids []string
	for _, r := range s.rows {
		ids = append(ids, r.id)
	}
	return ids
}

func TestVecSetPutRemove(t *testing.T) {
	s := testSet(1, "a", "b", "c", "d")
	before := s.bytes
	s.remove("b")
	s.remove("zzz")
	assert.ElementsMatch(t, []string{"a", "c", "d"}, setIDs(s))
	for i, r := range s.rows {
		assert.Equal(t, i, s.pos[r.id], r.id)
	}
	r := vecRow{id: "c", session: "longer session id"}
	r.setVectors([]float32{0, 1, 0, 0}, []float32{1, 1, 1, 1})
	s.put(r)
	assert.Len(t, s.rows, 3, "put replaces")
	assert.Equal(t, "longer session id", s.rows[s.pos["c"]].session)
	assert.Equal(t, before-testSet(1, "b").bytes+r.size()-testSet(1, "c").bytes, s.bytes)
}

func TestVecCacheEvictsLeastRecentlyUsed(t *testing.T) {
	one := testSet(1, "a").bytes
	c := newVecCache(2*one + one/2) // room for two one-row sets
	k := func(u string) cacheKey { return cacheKey{u, store.KindInteraction} }
	c.put(k("u1"), testSet(1, "a"))
	c.put(k("u2"), testSet(1, "a"))
	require.NotNil(t, c.get(k("u1"))) // u1 is now the most recent
	c.put(k("u3"), testSet(1, "a"))
	assert.NotNil(t, c.get(k("u1")))
	assert.Nil(t, c.get(k("u2")), "least recently used evicted")
	assert.NotNil(t, c.get(k("u3")))
	sets, bytes := c.stats()
	assert.Equal(t, 2, sets)
	assert.Equal(t, 2*one, bytes)

	c.put(k("big"), testSet(1, "a", "b", "c"))
	assert.Nil(t, c.get(k("big")), "a set over the budget is not cached")
	assert.NotNil(t, c.get(k("u1")), "and evicts nothing")

	c.dropUser("u1")
	assert.Nil(t, c.get(k("u1")))

	off := newVecCache(-1)
	off.put(k("u1"), testSet(1, "a"))
	assert.Nil(t, off.get(k("u1")), "disabled cache")
}

func TestVecCacheApply(t *testing.T) {
	c := newVecCache(1 << 20)
	k := cacheKey{"u", store.KindInteraction}
	c.put(k, testSet(10, "a", "b"))
	row := &vecRow{id: "c"}
	row.setVectors([]float32{0, 0, 1, 0}, nil)

	c.apply(k, 10, 11, []change{{upsert: row}, {remove: "a"}})
	s := c.get(k)
	require.NotNil(t, s)
	assert.Equal(t, int64(11), s.gen)
	assert.ElementsMatch(t, []string{"b", "c"}, setIDs(s))
	_, bytes := c.stats()
	assert.Equal(t, s.bytes, bytes, "accounting follows the set")

	c.apply(k, 11, 11, nil) // a set already at the new generation is kept
	require.NotNil(t, c.get(k))

	c.apply(k, 99, 12, []change{{remove: "b"}})
	assert.Nil(t, c.get(k), "a set that missed a write is dropped")
	_, bytes = c.stats()
	assert.Zero(t, bytes)
}

func TestVecSetRankFilters(t *testing.T) {
	s := newVecSet(1, 4)
	for i, r := range []vecRow{
		{id: "s1-early", session: "s1", t: timeKey(t0(1))},
		{id: "s1-late", session: "s1", t: timeKey(t0(5))},
		{id: "s2", session: "s2", t: timeKey(t0(3))},
		{id: "ins", sessions: []string{"s1", "s2"}, t: timeKey(t0(2)), insightType: store.InsightSession, category: "risk_profile"},
		{id: "gone", sessions: []string{"s1"}, t: timeKey(t0(2)), insightType: store.InsightSession, superseded: true},
	} {
		r.setVectors([]float32{1, float32(i), 0, 0}, nil)
		s.put(r)
	}
	q := []float32{1, 0, 0, 0}
	ids := func(f filter) []string {
		var out []string
		for _, sc := range s.rank(&f, []int{0}, q, 10, -1, prefilter{})[0] {
			out = append(out, sc.ID)
		}
		return out
	}
	kind := store.KindInteraction
	assert.Equal(t, []string{"s1-early", "s1-late"}, ids(filter{kind: kind, session: "s1"}))
	assert.Equal(t, []string{"s1-late", "s2"}, ids(filter{kind: kind, since: timeKey(t0(3))}))
	assert.Equal(t, []string{"s1-early", "ins", "gone"}, ids(filter{kind: kind, until: timeKey(t0(3))}))
	ins := store.KindInsight
	assert.Equal(t, []string{"ins"}, ids(filter{kind: ins, session: "s2", category: "risk_profile"}))
	assert.Equal(t, []string{"ins"}, ids(filter{kind: ins, session: "s1", insightType: store.InsightSession}), "superseded never ranked")
	assert.Empty(t, ids(filter{kind: ins, insightType: store.InsightLongTerm}))
}

func t0(h int) time.Time { return time.Date(2026, 3, 1, h, 0, 0, 0, time.UTC) }

// TestVecSetRankMatchesVectorRanker checks the set's one-pass ranking
// against driver.VectorRanker, the reference, on random vectors of two
// fields with some rows missing a field: identical ids, order and scores.
func TestVecSetRankMatchesVectorRanker(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(3, 4))
	vec := func(d int) []float32 {
		v := make([]float32, d)
		for i := range v {
			v[i] = float32(rng.NormFloat64())
		}
		return v
	}
	const d = 48
	s := newVecSet(1, 3000)
	dup := vec(d)
	for i := range 3000 {
		r := vecRow{id: fmt.Sprintf("r%05d", rng.IntN(100000)), session: fmt.Sprintf("s%d", i%9), t: timeKey(t0(i % 24))}
		a, b := vec(d), vec(d)
		switch i % 10 {
		case 0:
			a = nil
		case 1:
			b = nil
		case 2:
			b = vec(d - 1) // another length: skipped
		case 3:
			a = dup // equal similarities: ties broken by id
		}
		r.setVectors(a, b)
		s.put(r)
	}
	for qi := range 40 {
		q := vec(d)
		f := filter{kind: store.KindInteraction}
		if qi%3 == 0 {
			f.session = "s4"
		}
		minSim := []float64{-1, 0, 0.2}[qi%3]
		for _, k := range []int{1, 5, 100} {
			got := s.rank(&f, []int{0, 1}, q, k, minSim, prefilter{})
			for j, slot := range []int{0, 1} {
				ref := driver.NewVectorRanker(q, k, minSim)
				for i := range s.rows {
					if r := &s.rows[i]; f.match(r) && r.vecs[slot] != nil {
						ref.Add(r.id, r.vecs[slot], r.norms[slot])
					}
				}
				require.Equal(t, ref.Result(), got[j], "query %d k %d slot %d", qi, k, slot)
			}
		}
	}
}
