// Package topk keeps the k greatest values of a stream: the ranking step of
// a search, which sees many candidates and returns the best few.
//
// A [Heap] holds at most k values in a min-heap under a less function, so
// the least kept value — the cut-off a new value must beat — is at hand in
// constant time, and an offer costs O(log k). After the heap has held k
// values once, offers allocate nothing; [Heap.Reset] reuses the storage
// for the next stream.
//
// # Order
//
// less(a, b) reports whether a ranks below b. The heap keeps values no k
// others rank above; which of several equal values stay is unspecified, but
// a value equal to the least kept does not replace it. For a total order (a search ranks by score, then by id, so no two
// results are equal) the kept set is exactly the k greatest, whatever the
// order of the stream: TestMatchesSort checks it against sorting.
package topk

// Heap keeps the k greatest values offered to it under less. The zero Heap
// is not usable; make one with [New].
type Heap[T any] struct {
	k    int
	less func(a, b T) bool
	s    []T // a min-heap under less: s[0] is the least kept
}

// New returns an empty heap keeping the k greatest values under less,
// which reports whether a ranks below b. With k <= 0 it keeps nothing.
func New[T any](k int, less func(a, b T) bool) *Heap[T] {
	return &Heap[T]{k: k, less: less, s: make([]T, 0, max(k, 0))}
}

// Reset empties the heap to keep the k greatest of a new stream, reusing
// its storage.
func (h *Heap[T]) Reset(k int) {
	h.k = k
	clear(h.s) // drop references the values may hold
	h.s = h.s[:0]
}

// Len returns the number of values kept, at most k.
func (h *Heap[T]) Len() int { return len(h.s) }

// Full reports whether the heap holds k values, so that an offer must beat
// [Heap.Min] to be kept.
func (h *Heap[T]) Full() bool { return len(h.s) >= h.k }

// Min returns the least value kept. It panics on an empty heap.
func (h *Heap[T]) Min() T { return h.s[0] }

// Offer considers v and reports whether it was kept: always while the heap
// holds fewer than k values, and afterwards when it ranks above the least
// kept, which it replaces.
func (h *Heap[T]) Offer(v T) bool {
	if len(h.s) < h.k {
		h.s = append(h.s, v)
		h.up(len(h.s) - 1)
		return true
	}
	if h.k <= 0 || !h.less(h.s[0], v) {
		return false
	}
	h.s[0] = v
	h.down(h.s, 0)
	return true
}

// Sorted returns the values kept, greatest first, in a new slice, or nil
// when there are none. The heap is unchanged.
func (h *Heap[T]) Sorted() []T {
	if len(h.s) == 0 {
		return nil
	}
	out := make([]T, len(h.s))
	copy(out, h.s)
	// Heap sort: move the least to the end, restore the heap on the rest.
	for n := len(out) - 1; n > 0; n-- {
		out[0], out[n] = out[n], out[0]
		h.down(out[:n], 0)
	}
	return out
}

// up restores the heap from i up to the root.
func (h *Heap[T]) up(i int) {
	s := h.s
	for i > 0 {
		p := (i - 1) / 2
		if !h.less(s[i], s[p]) {
			return
		}
		s[i], s[p] = s[p], s[i]
		i = p
	}
}

// down restores the heap s from i down to the leaves.
func (h *Heap[T]) down(s []T, i int) {
	n := len(s)
	for {
		l := 2*i + 1
		if l >= n {
			return
		}
		m := l
		if r := l + 1; r < n && h.less(s[r], s[l]) {
			m = r
		}
		if !h.less(s[m], s[i]) {
			return
		}
		s[i], s[m] = s[m], s[i]
		i = m
	}
}
