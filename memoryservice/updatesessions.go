package memoryservice

import (
	"context"
	"errors"

	"github.com/agentmemory/agentmemory/store"
)

// maxSupersededHops bounds the walk along superseded_by from a
// previous_update_id to the update that ran.
const maxSupersededHops = 100

// continuedSession returns the session that previous_update_id prev
// continues when prev (or, if it was superseded, the update that
// superseded it, and so on) completed having recorded turns: the new
// update's items continue that conversation. It returns "" when the
// update failed, recorded nothing, or is still queued or running (a
// queued one is continued anyway, as the debounce).
func (s *Service) continuedSession(ctx context.Context, prev *updateRecord) (string, error) {
	cur := prev
	for range maxSupersededHops {
		if cur.Status != statusSuperseded || cur.SupersededBy == "" {
			break
		}
		var next updateRecord
		_, err := s.getRecord(ctx, updateKey(cur.SupersededBy), &next)
		if errors.Is(err, store.ErrNotFound) {
			return "", nil // retired or forgotten
		}
		if err != nil {
			return "", err
		}
		cur = &next
	}
	if cur.Status != statusCompleted || cur.Turns == 0 {
		return "", nil
	}
	return cur.SessionID, nil
}

// reopenSession makes the completed memory session id of userID active
// again, so that an update continues it, and reports whether it did: a
// session forgotten since, or not completed (being written or ended by
// another update), is not reopened. It keeps the session's summary, which
// stays listed until the session ends again, and marks its reflection
// pending: reflection then reads the turns after those it read before.
func (s *Service) reopenSession(ctx context.Context, userID, id string) (bool, error) {
	d, err := s.st.GetSession(ctx, userID, id)
	if errors.Is(err, store.ErrNotFound) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	if d.Status != store.SessionCompleted {
		return false, nil
	}
	d.Status, d.ReflectionStatus, d.UpdatedAt = store.SessionActive, store.ReflectionPending, s.cfg.Now().UTC()
	err = s.st.PutSession(ctx, userID, d) // under the ETag it was read with
	if errors.Is(err, store.ErrConflict) || errors.Is(err, store.ErrNotFound) {
		return false, nil
	}
	return err == nil, err
}

// sessionActive reports whether session id of userID is stored and
// active.
func (s *Service) sessionActive(ctx context.Context, userID, id string) bool {
	d, err := s.st.GetSession(ctx, userID, id)
	return err == nil && d.Status == store.SessionActive
}

// sessionCompleted reports whether session id of userID is stored and
// completed.
func (s *Service) sessionCompleted(ctx context.Context, userID, id string) bool {
	d, err := s.st.GetSession(ctx, userID, id)
	return err == nil && d.Status == store.SessionCompleted
}
