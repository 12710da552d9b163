package memoryservice

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/agentmemory/agentmemory/store"
)

// scopeRecord notes a scope of a memory store, in the store's partition
// (scopesUser), so deleting the store can forget every scope and the
// sweep can visit each.
type scopeRecord struct {
	Store string `json:"store"`
	Scope string `json:"scope"`
	// Updates names the scope's update records written before updates
	// had partitions of their own (they are under RegistryUserID), until
	// the sweep retires them; no update is added to it any more.
	Updates []updateRef `json:"updates,omitempty"`
}

// scopeQueue is a scope's queue record, in the scope's updates partition
// (queueKey), written under ETags by the accepts of every replica.
type scopeQueue struct {
	// Queued is the update the scope's last accept queued: the one the
	// next accept supersedes if no replica has claimed it yet.
	Queued string `json:"queued,omitempty"`
	// DeletingUntil, while in the future, marks a scope that a
	// delete_scope is forgetting: accepts are refused (503) until then.
	DeletingUntil time.Time `json:"deleting_until,omitzero"`
}

func queueKey(name, scope string) recKey { return recKey{updatesUser(scopeHash(name, scope)), "queue"} }

// noteScope records that memory store name has scope (once).
func (s *Service) noteScope(ctx context.Context, name, scope string) error {
	err := s.putRecord(ctx, scopeKey(name, scope), store.CreateOnly, s.cfg.Now(), false, scopeRecord{Store: name, Scope: scope})
	if errors.Is(err, store.ErrConflict) {
		return nil
	}
	return err
}

// updateRef is an older update of a scope, as the scope's record lists it.
type updateRef struct {
	ID        string    `json:"id"`
	CreatedAt time.Time `json:"created_at"`
}

// maxScopeAttempts bounds the retries of a scope record's write on an
// ETag conflict (another process writing the same scope).
const maxScopeAttempts = 5

// changeScope applies change to the record of a scope of memory store
// name and writes it under the ETag it was read with, retrying on a
// conflict; a scope with no record is left so. change reports whether
// there is anything to write.
func (s *Service) changeScope(ctx context.Context, name, scope string, change func(*scopeRecord) bool) error {
	k := scopeKey(name, scope)
	for range maxScopeAttempts {
		rec := scopeRecord{Store: name, Scope: scope}
		etag, err := s.getRecord(ctx, k, &rec)
		switch {
		case errors.Is(err, store.ErrNotFound):
			return nil
		case err != nil:
			return err
		}
		if !change(&rec) {
			return nil
		}
		err = s.putRecord(ctx, k, etag, s.cfg.Now(), false, rec)
		if !errors.Is(err, store.ErrConflict) {
			return err
		}
	}
	return fmt.Errorf("memoryservice: scope record of %q in %q: %w", scope, name, store.ErrConflict)
}

// deleteScopeUpdates removes a scope's update records (its partition's,
// and the older ones its record lists) with their markers, dropping
// this replica's timers. The caller holds the scope's accept and run
// locks.
func (s *Service) deleteScopeUpdates(ctx context.Context, name, scope string) error {
	part := updatesUser(scopeHash(name, scope))
	docs, err := s.listRecords(ctx, part, store.RecordFilter{Prefix: "update."})
	if err != nil {
		return err
	}
	if err := s.deleteRecord(ctx, queueKey(name, scope)); err != nil {
		return err
	}
	for _, d := range docs {
		s.dropTimer(strings.TrimPrefix(d.ID, "update."))
		if err := s.deleteRecord(ctx, activeKey(strings.TrimPrefix(d.ID, "update."))); err != nil {
			return err
		}
		if err := s.deleteRecord(ctx, recKey{part, d.ID}); err != nil {
			return err
		}
	}
	var sc scopeRecord
	_, err = s.getRecord(ctx, scopeKey(name, scope), &sc)
	if errors.Is(err, store.ErrNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	for _, ref := range sc.Updates {
		if err := s.deleteRecord(ctx, updateKey(ref.ID)); err != nil {
			return err
		}
	}
	return nil
}

// deleteScopeRequest is the body of delete_scope.
type deleteScopeRequest struct {
	Scope string `json:"scope"`
}

// scopeDeleted is the answer to delete_scope.
type scopeDeleted struct {
	Object  string `json:"object"`
	Name    string `json:"name"`
	Scope   string `json:"scope"`
	Deleted bool   `json:"deleted"`
}

func (s *Service) deleteScope(w http.ResponseWriter, r *http.Request) (scopeDeleted, error) {
	name := r.PathValue("name")
	var req deleteScopeRequest
	if err := s.decode(w, r, &req); err != nil {
		return scopeDeleted{}, err
	}
	if _, _, err := s.loadStore(r.Context(), name); err != nil {
		return scopeDeleted{}, err
	}
	if _, err := scopeUser(name, req.Scope); err != nil {
		return scopeDeleted{}, err
	}
	if err := s.forgetScope(r.Context(), name, req.Scope); err != nil {
		return scopeDeleted{}, err
	}
	return scopeDeleted{Object: "memory_store.scope.deleted", Name: name, Scope: req.Scope, Deleted: true}, nil
}

// forgetScope deletes everything of a scope: its queued and past updates,
// then every memory and turn (provider.ForgetUser), then its index
// record, and erases all of it from the store's files. A scope that holds
// nothing is a 404 naming the scope, and nothing is logged. A forget of
// the scope left incomplete before is completed first.
func (s *Service) forgetScope(ctx context.Context, name, scope string) error {
	def, _, err := s.loadStore(ctx, name)
	if err != nil {
		return err
	}
	userID := UserID(name, scope)
	// Not while an update of the scope is accepted or runs, on any
	// replica: this replica's accepts wait, other replicas' are refused
	// while the scope's record says it is being deleted, and one under
	// way is waited for; the runs hold the scope's lease.
	unlockAccept := s.lockScope("accept", userID)
	defer unlockAccept()
	unlockRun, err := s.lockRun(ctx, name, scope)
	if err != nil {
		return err
	}
	defer unlockRun()
	if err := s.markDeleting(ctx, name, scope); err != nil {
		return err
	}
	// Its searches go first, so that erasing the scope erases them too.
	if err := s.dropSearches(ctx, name, scope); err != nil {
		return err
	}
	completed, err := s.completeUnfinished(ctx, ofUser(userID))
	if err != nil {
		s.log.ErrorContext(ctx, "memoryservice: a forget of the scope is still not complete", "store", name, "err", err)
		return notErased()
	}
	held, err := s.scopeHolds(ctx, name, scope)
	if err != nil {
		return err
	}
	if !held {
		if completed > 0 { // the retry of a delete_scope: now complete
			return nil
		}
		return notFound("scope", "scope %q of memory store %q holds no memories", scope, name)
	}
	if err := s.deleteScopeUpdates(ctx, name, scope); err != nil {
		return err
	}
	p, err := s.providerFor(def)
	if err != nil {
		return err
	}
	rc, err := p.ForgetUser(ctx, userID)
	if err != nil && (rc == nil || !incomplete(err)) {
		return err
	}
	// The scope's record goes now, so the scrub that completes the
	// forget erases it too (its document is full-text indexed).
	if err := s.deleteRecord(ctx, scopeKey(name, scope)); err != nil {
		return err
	}
	// Logs the forget if ForgetUser could not, and scrubs: each step is
	// safe to repeat.
	return s.complete(ctx, name, p, rc)
}

// scopeHolds reports whether a scope of memory store name has a record
// or any memory, turn or interaction.
func (s *Service) scopeHolds(ctx context.Context, name, scope string) (bool, error) {
	var sc scopeRecord
	_, err := s.getRecord(ctx, scopeKey(name, scope), &sc)
	if err == nil {
		return true, nil
	}
	if !errors.Is(err, store.ErrNotFound) {
		return false, err
	}
	userID := UserID(name, scope)
	ss, err := s.st.ListSessions(ctx, userID, store.SessionFilter{Limit: 1})
	if err != nil || len(ss) > 0 {
		return len(ss) > 0, err
	}
	ins, err := s.st.ListInsights(ctx, userID, store.InsightFilter{IncludeSuperseded: true, Limit: 1})
	if err != nil || len(ins) > 0 {
		return len(ins) > 0, err
	}
	its, err := s.st.ListInteractions(ctx, userID, store.InteractionFilter{Limit: 1})
	return len(its) > 0, err
}

// markDeleting marks a scope's queue record as being deleted, refusing
// other replicas' accepts for deleteWindow, and waits for the accept the
// record names to finish if it has not (one under way on another
// replica), up to acceptGrace.
func (s *Service) markDeleting(ctx context.Context, name, scope string) error {
	k := queueKey(name, scope)
	var queued string
	for attempt := 0; ; attempt++ {
		var q scopeQueue
		etag, err := s.getRecord(ctx, k, &q)
		if errors.Is(err, store.ErrNotFound) {
			etag = store.CreateOnly
		} else if err != nil {
			return err
		}
		queued, q.DeletingUntil = q.Queued, s.cfg.Now().Add(deleteWindow)
		err = s.putRecord(ctx, k, etag, s.cfg.Now(), false, q)
		if err == nil {
			break
		}
		if !errors.Is(err, store.ErrConflict) || attempt == maxScopeAttempts {
			return err
		}
	}
	if queued == "" {
		return nil
	}
	for wait := time.Now().Add(acceptGrace); ; {
		var rec updateRecord
		_, err := s.getRecord(ctx, updateKey(queued), &rec)
		if errors.Is(err, store.ErrNotFound) {
			return nil // never written (an accept that failed)
		}
		if err != nil {
			return err
		}
		if !s.stillAccepting(ctx, &rec) {
			return nil // accepted, or left by a replica that died accepting it
		}
		if time.Now().After(wait) {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// deleteWindow is how long a delete_scope refuses the scope's accepts on
// other replicas, at most: the deletion removes the scope's record
// (ending it) when done.
const deleteWindow = time.Minute
