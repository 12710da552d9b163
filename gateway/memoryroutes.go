package gateway

import (
	"errors"
	"net/http"

	"github.com/agentmemory/agentmemory/memoryservice"
	"github.com/agentmemory/agentmemory/provider"
	"github.com/agentmemory/agentmemory/store"
)

// userParam is the user a memory route names: the user_id query
// parameter, else the X-Memory-User header. required makes its absence a
// 400.
func (h *Handler) userParam(r *http.Request, required bool) (string, error) {
	user, from := r.URL.Query().Get("user_id"), "user_id"
	if user == "" {
		user, from = r.Header.Get(UserHeader), UserHeader
	}
	if user == "" {
		if required {
			return "", badRequest("user_id", "required (or the %s header)", UserHeader)
		}
		return "", nil
	}
	return user, h.checkUser(user, from)
}

// memoryList is the answer of GET /v1/memory.
type memoryList struct {
	Object string                 `json:"object"`
	User   string                 `json:"user_id"`
	Store  string                 `json:"memory_store"`
	Data   []memoryservice.Memory `json:"data"`
}

// listMemory serves GET /v1/memory?user_id=…: the user's memory items,
// as the Memory Store API's items:list shows the scope's.
func (h *Handler) listMemory(w http.ResponseWriter, r *http.Request) {
	user, err := h.userParam(r, true)
	if err != nil {
		h.fail(w, err)
		return
	}
	ms, err := h.mem.Memories(r.Context(), user)
	if err != nil {
		h.fail(w, err)
		return
	}
	if ms == nil {
		ms = []memoryservice.Memory{}
	}
	writeJSON(w, http.StatusOK, memoryList{Object: "list", User: user, Store: h.mem.Name(), Data: ms})
}

// forgotten is the answer of a memory route's deletion: the provider's
// receipt, which names the deletion-log record (log_seq, log_hash).
type forgotten struct {
	Object  string            `json:"object"`
	ID      string            `json:"id,omitempty"`
	User    string            `json:"user_id"`
	Deleted bool              `json:"deleted"`
	Receipt *provider.Receipt `json:"receipt"`
}

// forgetMemory serves DELETE /v1/memory/{id}: the memory item of that id
// (a memory_id of the Memory Store API, as GET /v1/memory lists it) is
// forgotten with ForgetInsight (user_profile, procedural) or
// ForgetSession (chat_summary). With user_id (or X-Memory-User), an item
// of another user is not found.
func (h *Handler) forgetMemory(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	id := r.PathValue("id")
	user, err := h.userParam(r, false)
	if err != nil {
		h.fail(w, err)
		return
	}
	m, err := h.mem.FindMemory(ctx, id)
	if errors.Is(err, memoryservice.ErrNoMemory) || (err == nil && user != "" && m.Scope != user) {
		h.fail(w, notFound("id", "memory %q not found in memory store %q", id, h.mem.Name()))
		return
	}
	if err != nil {
		h.fail(w, err)
		return
	}
	userID := h.mem.UserID(m.Scope)
	var rc *provider.Receipt
	if m.Kind == "chat_summary" {
		rc, err = h.p.ForgetSession(ctx, userID, m.Document)
	} else {
		rc, err = h.p.ForgetInsight(ctx, userID, m.Document, provider.ForgetOptions{})
	}
	if errors.Is(err, store.ErrNotFound) {
		h.fail(w, notFound("id", "memory %q not found in memory store %q", id, h.mem.Name()))
		return
	}
	if err := h.settle(r, rc, err); err != nil {
		h.fail(w, err)
		return
	}
	writeJSON(w, http.StatusOK, forgotten{Object: "memory.deleted", ID: id, User: m.Scope, Deleted: true, Receipt: rc})
}

// forgetUser serves DELETE /v1/memory?user_id=…: everything kept about
// the user (provider.ForgetUser), then the scope's record in the memory
// store, and the user's sessions held by the gateway.
func (h *Handler) forgetUser(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	user, err := h.userParam(r, true)
	if err != nil {
		h.fail(w, err)
		return
	}
	userID := h.mem.UserID(user)
	h.sessions.dropUser(userID)
	rc, err := h.p.ForgetUser(ctx, userID)
	if err != nil && (rc == nil || !incomplete(err)) {
		h.fail(w, err)
		return
	}
	if err := h.mem.DropScope(ctx, user); err != nil {
		h.fail(w, err)
		return
	}
	// Logs the forget if ForgetUser could not, and scrubs the store's
	// files of the scope's record too: each step is safe to repeat.
	if err := h.settle(r, rc, h.p.CompleteForget(ctx, rc)); err != nil {
		h.fail(w, err)
		return
	}
	writeJSON(w, http.StatusOK, forgotten{Object: "memory.deleted", User: user, Deleted: true, Receipt: rc})
}

// incomplete reports the errors CompleteForget completes.
func incomplete(err error) bool {
	return errors.Is(err, provider.ErrNotLogged) || errors.Is(err, provider.ErrNotErased)
}

// settle completes a forget that deleted but could not log or erase
// (once more); one still incomplete is a retryable 503.
func (h *Handler) settle(r *http.Request, rc *provider.Receipt, err error) error {
	if err == nil {
		return nil
	}
	if rc == nil || !incomplete(err) {
		return err
	}
	if cerr := h.p.CompleteForget(r.Context(), rc); cerr != nil {
		h.log.ErrorContext(r.Context(), "gateway: a forget is not complete; repeat the request", "user", rc.UserID, "err", cerr)
		code := "forget_incomplete"
		return &apiError{Status: http.StatusServiceUnavailable, Type: "server_error", Code: &code,
			Message: "deleted, but not yet erased from the store's files; repeat the request to complete it"}
	}
	return nil
}
