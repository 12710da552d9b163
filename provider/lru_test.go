package provider

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestLRU(t *testing.T) {
	var evicted []string
	l := newLRU(2, func(k string, _ int) { evicted = append(evicted, k) })
	l.put("a", 1)
	l.put("b", 2)
	_, _ = l.get("a") // a is now the most recent
	l.put("c", 3)     // b gives way
	assert.Equal(t, []string{"b"}, evicted)
	_, ok := l.get("b")
	assert.False(t, ok)
	v, ok := l.get("a")
	assert.True(t, ok)
	assert.Equal(t, 1, v)
	l.put("a", 10) // update in place, no eviction
	v, _ = l.get("a")
	assert.Equal(t, 10, v)
	assert.Equal(t, []string{"b"}, evicted)
	l.remove("c")
	_, ok = l.get("c")
	assert.False(t, ok)
	n := 0
	l.each(func(string, int) { n++ })
	assert.Equal(t, 1, n)
}
