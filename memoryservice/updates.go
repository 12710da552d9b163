package memoryservice

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"time"

	"github.com/agentmemory/agentmemory/store"
)

// maxUpdateDelay caps update_delay (one day).
const maxUpdateDelay = 24 * 60 * 60

// updateRequest is the body of update_memories.
type updateRequest struct {
	Scope            string      `json:"scope"`
	Items            []inputItem `json:"items"`
	PreviousUpdateID string      `json:"previous_update_id"`
	UpdateDelay      *float64    `json:"update_delay"`
}

// updateMemories accepts an update (accept) and answers 202 with the
// address to poll.
func (s *Service) updateMemories(w http.ResponseWriter, r *http.Request) (updateResponse, error) {
	name := r.PathValue("name")
	var req updateRequest
	if err := s.decode(w, r, &req); err != nil {
		return updateResponse{}, err
	}
	ctx := r.Context()
	def, defTag, err := s.acceptingStore(ctx, name, false)
	if err != nil {
		return updateResponse{}, err
	}
	if _, err := scopeUser(name, req.Scope); err != nil {
		return updateResponse{}, err
	}
	msgs, err := conversation(req.Items)
	if err != nil {
		return updateResponse{}, err
	}
	delay := s.cfg.DefaultUpdateDelay
	if req.UpdateDelay != nil {
		d := *req.UpdateDelay
		if d < 0 || d > maxUpdateDelay || d != float64(int64(d)) {
			return updateResponse{}, badRequest("update_delay", "%v: whole seconds from 0 to %d", d, maxUpdateDelay)
		}
		delay = time.Duration(d) * time.Second
	}
	var prev updateRecord
	if req.PreviousUpdateID != "" {
		_, err := s.getRecord(ctx, updateKey(req.PreviousUpdateID), &prev)
		if errors.Is(err, store.ErrNotFound) || errors.Is(err, store.ErrInvalid) || (err == nil && prev.Store != name) {
			return updateResponse{}, badRequest("previous_update_id", "%q is not an update of memory store %q", req.PreviousUpdateID, name)
		}
		if err != nil {
			return updateResponse{}, err
		}
		if prev.Scope != req.Scope {
			return updateResponse{}, badRequest("previous_update_id", "%q belongs to another scope", req.PreviousUpdateID)
		}
	}
	a := acceptance{store: name, scope: req.Scope, previousID: req.PreviousUpdateID, msgs: msgs, delay: delay}
	if req.PreviousUpdateID != "" && len(msgs) > 0 {
		if a.continues, err = s.continuedSession(ctx, &prev); err != nil {
			return updateResponse{}, err
		}
	}
	var accepted updateResponse
	for attempt := 0; ; attempt++ {
		p, err := s.providerFor(def)
		if err != nil {
			return updateResponse{}, err
		}
		a.storeTag = defTag
		accepted, err = s.accept(ctx, p, a)
		if errors.Is(err, errStaleStore) && attempt == 0 {
			// Changed or deleted since this replica read it: once more,
			// as it is now (deleted, the answer is 404).
			if def, defTag, err = s.acceptingStore(ctx, name, true); err != nil {
				return updateResponse{}, err
			}
			continue
		}
		if errors.Is(err, errStaleStore) {
			return updateResponse{}, unavailable(fmt.Sprintf("memory store %q changed while the update was accepted; retry", name))
		}
		if err != nil {
			return updateResponse{}, err
		}
		break
	}
	w.Header().Set("Operation-Location", s.operationLocation(r, name, accepted.UpdateID))
	return accepted, nil
}

// operationLocation is the address the client polls.
func (s *Service) operationLocation(r *http.Request, name, id string) string {
	scheme, host := s.publicAddress(r)
	u := url.URL{Scheme: scheme, Host: host, Path: "/memory_stores/" + name + "/updates/" + id}
	if v := r.URL.Query().Get("api-version"); v != "" {
		u.RawQuery = url.Values{"api-version": {v}}.Encode()
	}
	return u.String()
}

// getUpdate reads an update for its poller, with the memory items of
// its operations as the scope holds them now.
func (s *Service) getUpdate(w http.ResponseWriter, r *http.Request) (updateResponse, error) {
	name, id := r.PathValue("name"), r.PathValue("id")
	def, _, err := s.loadStore(r.Context(), name)
	if err != nil {
		return updateResponse{}, err
	}
	var rec updateRecord
	_, err = s.getRecord(r.Context(), updateKey(id), &rec)
	if errors.Is(err, store.ErrNotFound) || errors.Is(err, store.ErrInvalid) || (err == nil && rec.Store != name) {
		return updateResponse{}, notFound("update_id", "update %q not found in memory store %q", id, name)
	}
	if err != nil {
		return updateResponse{}, err
	}
	if err := s.liveOperations(r.Context(), def, &rec); err != nil {
		return updateResponse{}, err
	}
	return rec.response(), nil
}
