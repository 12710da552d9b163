package mem

import (
	"context"
	"fmt"
	"slices"

	"github.com/agentmemory/agentmemory/store"
)

// The calls that the kinds of document share. docs picks the kind's map
// out of a user's partition and clone copies a document in or out; reads
// run both under the read lock.

// put stores a copy of doc, once valid says it is, with set, which
// overwrites any document of the same id.
func put[D any](ctx context.Context, s *Store, userID string, doc D, valid func(string, D) error, set func(*userDocs, D), clone func(D) D) error {
	if err := s.begin(ctx, userID); err != nil {
		return err
	}
	if err := valid(userID, doc); err != nil {
		return err
	}
	c := clone(doc)
	if err := s.lock(); err != nil {
		return err
	}
	defer s.mu.Unlock()
	set(s.userForWrite(userID), c)
	return nil
}

// get returns a copy of the document id of one kind (named so in errors),
// or store.ErrNotFound when userID has none, or live reports it gone.
func get[D any](ctx context.Context, s *Store, userID, name, id string, docs func(*userDocs) map[string]D, live func(D) bool, clone func(D) D) (D, error) {
	var zero D
	if err := s.begin(ctx, userID); err != nil {
		return zero, err
	}
	if err := store.CheckID(name+" id", id); err != nil {
		return zero, err
	}
	if err := s.rlock(); err != nil {
		return zero, err
	}
	defer s.mu.RUnlock()
	if u := s.user(userID); u != nil {
		if d, ok := docs(u)[id]; ok && live(d) {
			return clone(d), nil
		}
	}
	return zero, fmt.Errorf("mem: %s %q: %w", name, id, store.ErrNotFound)
}

// list returns copies of userID's documents of one kind that keep accepts,
// sorted by order: all of them when limit is zero, else the first limit,
// or the last limit when last is set. sessionID is the filter's session,
// checked when not empty.
func list[D any](ctx context.Context, s *Store, userID string, limit int, sessionID string, docs func(*userDocs) map[string]D, keep func(D) bool, order func(a, b D) int, clone func(D) D, last bool) ([]D, error) {
	if err := s.begin(ctx, userID); err != nil {
		return nil, err
	}
	if err := checkLimit(limit); err != nil {
		return nil, err
	}
	if err := checkFilterSession(sessionID); err != nil {
		return nil, err
	}
	if err := s.rlock(); err != nil {
		return nil, err
	}
	defer s.mu.RUnlock()
	out := []D{}
	if u := s.user(userID); u != nil {
		for _, d := range docs(u) {
			if keep(d) {
				out = append(out, d)
			}
		}
	}
	slices.SortFunc(out, order)
	if limit > 0 && len(out) > limit {
		if last {
			out = out[len(out)-limit:]
		} else {
			out = out[:limit]
		}
	}
	for i, d := range out {
		out[i] = clone(d)
	}
	return out, nil
}
