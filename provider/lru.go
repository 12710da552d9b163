package provider

import "container/list"

// lru is a bounded map that forgets its least recently used entries. It is
// not safe for concurrent use: the provider guards it with its mutex.
type lru[V any] struct {
	max   int
	order *list.List // front: most recently used; values are keys
	items map[string]lruEntry[V]
	// evicted is called with each entry dropped for room.
	evicted func(key string, v V)
}

type lruEntry[V any] struct {
	v  V
	el *list.Element
}

func newLRU[V any](max int, evicted func(string, V)) *lru[V] {
	return &lru[V]{max: max, order: list.New(), items: make(map[string]lruEntry[V]), evicted: evicted}
}

// get returns the value of key and marks it used.
func (l *lru[V]) get(key string) (V, bool) {
	e, ok := l.items[key]
	if ok {
		l.order.MoveToFront(e.el)
	}
	return e.v, ok
}

// put sets key to v, marks it used, and drops the least recently used
// entries beyond max.
func (l *lru[V]) put(key string, v V) {
	if e, ok := l.items[key]; ok {
		l.order.MoveToFront(e.el)
		l.items[key] = lruEntry[V]{v: v, el: e.el}
		return
	}
	l.items[key] = lruEntry[V]{v: v, el: l.order.PushFront(key)}
	for l.order.Len() > l.max {
		back := l.order.Back()
		k := back.Value.(string)
		old := l.items[k]
		l.order.Remove(back)
		delete(l.items, k)
		if l.evicted != nil {
			l.evicted(k, old.v)
		}
	}
}

// remove drops key.
func (l *lru[V]) remove(key string) {
	if e, ok := l.items[key]; ok {
		l.order.Remove(e.el)
		delete(l.items, key)
	}
}

// each calls f for every entry.
func (l *lru[V]) each(f func(string, V)) {
	for k, e := range l.items {
		f(k, e.v)
	}
}
