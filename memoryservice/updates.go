package memoryservice

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"time"

	"github.com/agentmemory/agentmemory/agent"
	"github.com/agentmemory/agentmemory/store"
	"github.com/agentmemory/agentmemory/usage"
)

// Update statuses.
const (
	statusQueued     = "queued"
	statusInProgress = "in_progress"
	statusCompleted  = "completed"
	statusFailed     = "failed"
	statusSuperseded = "superseded"
)

// maxUpdateItems caps update_memories' items.
const maxUpdateItems = 1000

// maxUpdateDelay caps update_delay (one day).
const maxUpdateDelay = 24 * 60 * 60

// updateRecord is an update_memories operation as the registry keeps it.
type updateRecord struct {
	ID               string    `json:"id"`
	Store            string    `json:"store"`
	Scope            string    `json:"scope"`
	SessionID        string    `json:"session_id"`
	Status           string    `json:"status"`
	PreviousUpdateID string    `json:"previous_update_id,omitempty"`
	SupersededBy     string    `json:"superseded_by,omitempty"`
	CreatedAt        time.Time `json:"created_at"`
	DueAt            time.Time `json:"due_at"`
	// Turns is how many turns the update recorded into its session.
	Turns int `json:"turns"`
	// Reopened marks an update that continues the session of a completed
	// update (previous_update_id): the run ends it again even if no turn
	// was recorded (a crash between reopening and recording).
	Reopened bool `json:"reopened,omitempty"`
	// Before maps the scope's memory items (id to the nanosecond of their
	// last write) as the run began, so a run resumed after a crash lists
	// what the whole run did.
	Before map[string]int64 `json:"before_ns,omitempty"`
	Result *updateResult    `json:"result,omitempty"`
	Error  *apiError        `json:"error,omitempty"`
}

func (u *updateRecord) active() bool {
	return u.Status == statusQueued || u.Status == statusInProgress
}

type updateResult struct {
	MemoryOperations []memoryOperation `json:"memory_operations"`
	Usage            apiUsage          `json:"usage"`
}

type memoryOperation struct {
	Kind       string     `json:"kind"`
	MemoryItem memoryItem `json:"memory_item"`
}

// apiUsage reports the tokens an operation's model calls spent, as a
// usage.Meter counted them: input and output are the chat calls' prompt
// and completion tokens, embedding the embedding calls' input tokens, and
// total all three. The details are zero: agent.Usage carries no cached or
// reasoning counts.
type apiUsage struct {
	EmbeddingTokens     int            `json:"embedding_tokens"`
	InputTokens         int            `json:"input_tokens"`
	InputTokensDetails  map[string]int `json:"input_tokens_details"`
	OutputTokens        int            `json:"output_tokens"`
	OutputTokensDetails map[string]int `json:"output_tokens_details"`
	TotalTokens         int            `json:"total_tokens"`
}

func usageOf(m *usage.Meter) apiUsage {
	t := m.Totals()
	return apiUsage{InputTokens: t.InputTokens, OutputTokens: t.OutputTokens, EmbeddingTokens: t.EmbeddingTokens, TotalTokens: t.Total(),
		InputTokensDetails: map[string]int{"cached_tokens": 0}, OutputTokensDetails: map[string]int{"reasoning_tokens": 0}}
}

// updateResponse is what the API shows of an update.
func (u *updateRecord) response() map[string]any {
	out := map[string]any{"update_id": u.ID, "status": u.Status}
	if u.SupersededBy != "" {
		out["superseded_by"] = u.SupersededBy
	}
	if u.Result != nil {
		out["result"] = u.Result
	}
	if u.Error != nil {
		out["error"] = u.Error
	}
	return out
}

// scheduled is a queued update waiting for its due time.
type scheduled struct {
	rec   *updateRecord
	timer *time.Timer
	// meter counts the tokens spent for the update since it was accepted
	// in this process (the pruning of its turns, then its run), and those
	// of the queued updates it superseded.
	meter *usage.Meter
}

// inputItem is a conversation item of update_memories or search_memories:
// a Responses API message, whose content is a string or a list of parts.
type inputItem struct {
	Type    string          `json:"type"`
	Role    string          `json:"role"`
	Content json.RawMessage `json:"content"`
}

// itemText returns the text of items[i] and whether it is kept: user and
// assistant messages are; system and developer messages are skipped.
func itemText(i int, it inputItem) (string, agent.Role, bool, error) {
	param := "items[" + strconv.Itoa(i) + "]"
	if it.Type != "" && it.Type != "message" {
		return "", "", false, badRequest(param+".type", "%q: only \"message\" items are supported", it.Type)
	}
	var role agent.Role
	switch it.Role {
	case "user":
		role = agent.RoleUser
	case "assistant":
		role = agent.RoleAssistant
	case "system", "developer":
		return "", "", false, nil
	case "":
		return "", "", false, badRequest(param+".role", "required")
	default:
		return "", "", false, badRequest(param+".role", "%q: user, assistant, system or developer", it.Role)
	}
	if len(it.Content) == 0 || string(it.Content) == "null" {
		return "", "", false, badRequest(param+".content", "required")
	}
	var text string
	if err := json.Unmarshal(it.Content, &text); err == nil {
		return text, role, text != "", nil
	}
	var parts []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	if err := json.Unmarshal(it.Content, &parts); err != nil {
		return "", "", false, badRequest(param+".content", "a string or a list of text parts")
	}
	for j, p := range parts {
		switch p.Type {
		case "input_text", "output_text", "text":
			if text != "" {
				text += "\n"
			}
			text += p.Text
		default:
			return "", "", false, badRequest(param+".content["+strconv.Itoa(j)+"].type", "%q: only text parts are supported", p.Type)
		}
	}
	return text, role, text != "", nil
}

func (s *Service) updateMemories(w http.ResponseWriter, r *http.Request, name string) {
	var req struct {
		Scope            string      `json:"scope"`
		Items            []inputItem `json:"items"`
		PreviousUpdateID string      `json:"previous_update_id"`
		UpdateDelay      *float64    `json:"update_delay"`
	}
	if err := s.decode(w, r, &req); err != nil {
		writeError(w, err)
		return
	}
	ctx := r.Context()
	def, _, err := s.loadStore(ctx, name)
	if err != nil {
		s.fail(w, r, "update memories", err)
		return
	}
	userID, err := scopeUser(name, req.Scope)
	if err != nil {
		writeError(w, err)
		return
	}
	if len(req.Items) > maxUpdateItems {
		writeError(w, badRequest("items", "%d items, at most %d", len(req.Items), maxUpdateItems))
		return
	}
	var msgs []agent.Message
	for i, it := range req.Items {
		text, role, keep, err := itemText(i, it)
		if err != nil {
			writeError(w, err)
			return
		}
		if keep {
			msgs = append(msgs, agent.Message{Role: role, Text: text})
		}
	}
	delay := s.cfg.DefaultUpdateDelay
	if req.UpdateDelay != nil {
		d := *req.UpdateDelay
		if d < 0 || d > maxUpdateDelay || d != float64(int64(d)) {
			writeError(w, badRequest("update_delay", "%v: whole seconds from 0 to %d", d, maxUpdateDelay))
			return
		}
		delay = time.Duration(d) * time.Second
	}
	var prev updateRecord
	if req.PreviousUpdateID != "" {
		_, err := s.getRecord(ctx, updateDocID(req.PreviousUpdateID), &prev)
		if errors.Is(err, store.ErrNotFound) || errors.Is(err, store.ErrInvalid) || (err == nil && prev.Store != name) {
			writeError(w, badRequest("previous_update_id", "%q is not an update of memory store %q", req.PreviousUpdateID, name))
			return
		}
		if err != nil {
			s.fail(w, r, "update memories", err)
			return
		}
		if prev.Scope != req.Scope {
			writeError(w, badRequest("previous_update_id", "%q belongs to another scope", req.PreviousUpdateID))
			return
		}
	}
	p, err := s.providerFor(def)
	if err != nil {
		s.fail(w, r, "update memories", err)
		return
	}
	var cont string // a completed update's session to continue
	if req.PreviousUpdateID != "" && len(msgs) > 0 {
		if cont, err = s.continuedSession(ctx, &prev); err != nil {
			s.fail(w, r, "update memories", err)
			return
		}
	}
	rec, err := s.accept(ctx, p, userID, name, req.Scope, req.PreviousUpdateID, cont, msgs, delay)
	if err != nil {
		s.fail(w, r, "update memories", err)
		return
	}
	w.Header().Set("Operation-Location", s.operationLocation(r, name, rec["update_id"].(string)))
	writeJSON(w, http.StatusAccepted, rec)
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
		_, err := s.getRecord(ctx, updateDocID(cur.SupersededBy), &next)
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

// accept makes an update durable before it is answered: the record first
// (queued), then the items as turns of the scope's open memory session. A
// queued update of the same scope is superseded by this one, whose
// session it continues (the debounce of update_delay); failing that, the
// completed session cont (of previous_update_id) is reopened and
// continued. It returns the update as the API shows it on acceptance.
func (s *Service) accept(ctx context.Context, p providerLike, userID, name, scope, prevID, cont string, msgs []agent.Message, delay time.Duration) (map[string]any, error) {
	unlock := s.lockScope("accept", userID)
	defer unlock()
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil, unavailable("the server is shutting down")
	}
	old := s.pending[userID]
	if old != nil {
		delete(s.pending, userID) // ours now: its timer finds it gone
		old.timer.Stop()
	}
	s.mu.Unlock()
	restore := func() {
		if old != nil {
			s.schedule(old.rec, old.meter)
		}
	}
	meter := &usage.Meter{}
	if old != nil {
		meter = old.meter // the superseded update's work is this one's
	}
	ctx = usage.WithMeter(ctx, meter)
	now := s.cfg.Now()
	rec := &updateRecord{ID: newID("memupd_"), Store: name, Scope: scope, Status: statusQueued,
		PreviousUpdateID: prevID, CreatedAt: now, DueAt: now.Add(delay), SessionID: newID("mss_")}
	if err := s.indexUpdate(ctx, name, scope, rec.ID, now); err != nil {
		restore()
		return nil, err
	}
	if old != nil {
		rec.SessionID = old.rec.SessionID
		rec.Turns = old.rec.Turns
	} else if cont != "" {
		rec.SessionID, rec.Reopened = cont, true
	}
	if err := s.putRecord(ctx, updateDocID(rec.ID), store.CreateOnly, now, true, rec); err != nil {
		restore()
		return nil, err
	}
	if rec.Reopened {
		ok, err := s.reopenSession(ctx, userID, cont)
		if err != nil {
			restore()
			return nil, fmt.Errorf("continue the previous update's session: %w", err)
		}
		if !ok { // gone or busy: a session of its own
			rec.SessionID, rec.Reopened = newID("mss_"), false
			if err := s.putRecord(ctx, updateDocID(rec.ID), "", now, true, rec); err != nil {
				restore()
				return nil, err
			}
		}
	}
	sess, err := agent.NewSession(rec.SessionID, userID)
	if err != nil {
		restore()
		return nil, err
	}
	for i, m := range msgs {
		m.ID = rec.ID + "-" + strconv.Itoa(i) // a retried record stores the turn once
		m.CreatedAt = now
		if err := p.Record(ctx, sess, m); err != nil {
			restore()
			return nil, fmt.Errorf("record items: %w", err)
		}
		rec.Turns++
	}
	if err := s.putRecord(ctx, updateDocID(rec.ID), "", now, true, rec); err != nil {
		restore()
		return nil, err
	}
	if old != nil {
		old.rec.Status, old.rec.SupersededBy = statusSuperseded, rec.ID
		if err := s.putRecord(ctx, updateDocID(old.rec.ID), "", old.rec.CreatedAt, false, old.rec); err != nil {
			s.log.WarnContext(ctx, "memoryservice: marking a superseded update", "update", old.rec.ID, "err", err)
		}
	}
	accepted := rec.response() // before the runner owns rec
	s.schedule(rec, meter)
	return accepted, nil
}

// providerLike is the part of provider.MemoryProvider an update uses.
type providerLike interface {
	Record(ctx context.Context, sess *agent.Session, msgs ...agent.Message) error
}

// schedule queues rec to run at its due time (at once if past), its
// tokens counted by meter (a new one when nil).
func (s *Service) schedule(rec *updateRecord, meter *usage.Meter) {
	userID := UserID(rec.Store, rec.Scope)
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return
	}
	if meter == nil {
		meter = &usage.Meter{}
	}
	sc := &scheduled{rec: rec, meter: meter}
	sc.timer = time.AfterFunc(max(0, rec.DueAt.Sub(s.cfg.Now())), func() { s.fire(userID, sc) })
	s.pending[userID] = sc
}

// fire starts a due update unless it was superseded meanwhile.
func (s *Service) fire(userID string, sc *scheduled) {
	s.mu.Lock()
	if s.closed || s.pending[userID] != sc {
		s.mu.Unlock()
		return
	}
	delete(s.pending, userID)
	s.wg.Add(1)
	s.mu.Unlock()
	go func() {
		defer s.wg.Done()
		s.run(usage.WithMeter(s.runCtx, sc.meter), sc.rec)
	}()
}

// run ends the update's memory session (pruning, summary, reflection and
// the profile) and records the memory operations it caused, with the
// tokens counted by the usage.Meter of ctx.
func (s *Service) run(ctx context.Context, rec *updateRecord) {
	userID := UserID(rec.Store, rec.Scope)
	unlock := s.lockScope("run", userID)
	defer unlock()
	log := s.log.With("update", rec.ID, "store", rec.Store)
	// The scope may have been deleted while this run waited for the lock:
	// its record went with it, and nothing is to be written again.
	var cur updateRecord
	if _, err := s.getRecord(ctx, updateDocID(rec.ID), &cur); err != nil || !cur.active() {
		if err != nil && !errors.Is(err, store.ErrNotFound) {
			log.WarnContext(ctx, "memoryservice: update not run", "err", err)
		}
		return
	}
	def, _, err := s.loadStore(ctx, rec.Store)
	if err != nil {
		log.WarnContext(ctx, "memoryservice: update of a memory store that is gone", "err", err)
		return
	}
	p, err := s.providerFor(def)
	if err != nil {
		var ae *apiError
		if errors.As(err, &ae) && ae.Status == http.StatusBadRequest {
			// The store's models cannot serve: no retry will help.
			s.finish(ctx, rec, fmt.Errorf("the memory store's models: %w", err))
			return
		}
		log.WarnContext(ctx, "memoryservice: update not run; it resumes at the next start", "err", err)
		return
	}
	if rec.Before == nil {
		before, err := s.scopeItems(ctx, def, rec.Scope)
		if err != nil {
			s.finish(ctx, rec, fmt.Errorf("read the scope's memories: %w", err))
			return
		}
		rec.Before = map[string]int64{}
		for _, it := range before {
			rec.Before[it.MemoryID] = it.version
		}
	}
	rec.Status = statusInProgress
	if err := s.putRecord(ctx, updateDocID(rec.ID), "", rec.CreatedAt, true, rec); err != nil {
		log.WarnContext(ctx, "memoryservice: marking an update in progress", "err", err)
	}
	end := rec.Turns > 0
	if rec.Reopened { // not if forgotten meanwhile, or ended before a crash
		end = s.sessionActive(ctx, userID, rec.SessionID)
	}
	if end {
		sess, err := agent.NewSession(rec.SessionID, userID)
		if err != nil {
			s.finish(ctx, rec, err)
			return
		}
		if _, err := p.EndSession(ctx, sess); err != nil {
			s.finish(ctx, rec, fmt.Errorf("end the memory session: %w", err))
			return
		}
		if err := p.Flush(ctx); err != nil { // session reflection
			s.finish(ctx, rec, fmt.Errorf("reflection: %w", err))
			return
		}
		if def.profileEnabled() {
			if _, err := p.Reflector().ReflectLongTerm(ctx, userID); err != nil {
				log.WarnContext(ctx, "memoryservice: long-term profile not updated", "err", err)
			}
		}
	}
	if ctx.Err() != nil {
		return // shutting down: the record stays in progress and resumes
	}
	after, err := s.scopeItems(ctx, def, rec.Scope)
	if err != nil {
		s.finish(ctx, rec, fmt.Errorf("read the scope's memories: %w", err))
		return
	}
	meter := usage.From(ctx)
	if meter == nil {
		meter = &usage.Meter{}
	}
	res := &updateResult{MemoryOperations: []memoryOperation{}, Usage: usageOf(meter)}
	seen := map[string]bool{}
	for _, it := range after {
		seen[it.MemoryID] = true
		at, had := rec.Before[it.MemoryID]
		switch {
		case !had:
			res.MemoryOperations = append(res.MemoryOperations, memoryOperation{Kind: "create", MemoryItem: it})
		case at != it.version:
			res.MemoryOperations = append(res.MemoryOperations, memoryOperation{Kind: "update", MemoryItem: it})
		}
	}
	var gone []string
	for id := range rec.Before {
		if !seen[id] {
			gone = append(gone, id)
		}
	}
	sort.Strings(gone)
	for _, id := range gone {
		_, _, docID, _ := parseItemID(id)
		res.MemoryOperations = append(res.MemoryOperations, memoryOperation{Kind: "delete",
			MemoryItem: memoryItem{MemoryID: id, Scope: rec.Scope, Kind: kindOfID(id), UpdatedAt: s.cfg.Now().Unix(), Content: "", docID: docID}})
	}
	// The record keeps what each operation did, not the text: a poll reads
	// the items as they are now (liveOperations), so forgetting an item
	// leaves nothing of it here.
	for i := range res.MemoryOperations {
		res.MemoryOperations[i].MemoryItem.Content = ""
	}
	rec.Result = res
	s.finish(ctx, rec, nil)
}

// liveOperations fills a finished update's memory operations with their
// items as the scope holds them now: an item since forgotten (deleted,
// expired, its session forgotten) shows with empty content, and a record
// of an earlier version that kept the text never shows it.
func (s *Service) liveOperations(ctx context.Context, def *memoryStore, rec *updateRecord) error {
	if rec.Result == nil || len(rec.Result.MemoryOperations) == 0 {
		return nil
	}
	now, err := s.scopeItems(ctx, def, rec.Scope)
	if err != nil {
		return err
	}
	byID := make(map[string]memoryItem, len(now))
	for _, it := range now {
		byID[it.MemoryID] = it
	}
	ops := make([]memoryOperation, len(rec.Result.MemoryOperations))
	for i, op := range rec.Result.MemoryOperations {
		if it, ok := byID[op.MemoryItem.MemoryID]; ok && op.Kind != "delete" {
			op.MemoryItem = it
		} else {
			op.MemoryItem.Content = ""
		}
		ops[i] = op
	}
	res := *rec.Result
	res.MemoryOperations = ops
	rec.Result = &res
	return nil
}

// sessionActive reports whether session id of userID is stored and
// active.
func (s *Service) sessionActive(ctx context.Context, userID, id string) bool {
	d, err := s.st.GetSession(ctx, userID, id)
	return err == nil && d.Status == store.SessionActive
}

// finish stores rec as completed, or failed with err. A run cut short by
// the shutdown (ctx ended) is left in progress, to resume at the next
// start.
func (s *Service) finish(ctx context.Context, rec *updateRecord, err error) {
	if err != nil && ctx.Err() != nil {
		s.log.WarnContext(context.WithoutCancel(ctx), "memoryservice: update cut short by the shutdown; it resumes at the next start", "update", rec.ID, "err", err)
		return
	}
	if err != nil {
		s.log.ErrorContext(ctx, "memoryservice: update failed", "update", rec.ID, "err", err)
		rec.Status = statusFailed
		msg := "the update failed; see the server log"
		var ae *apiError
		if errors.As(err, &ae) { // what the client may know, such as a model that cannot serve
			msg = "the update failed: " + ae.Message
		}
		rec.Error = &apiError{Code: "update_failed", Message: msg, Type: "server_error"}
	} else {
		rec.Status = statusCompleted
	}
	if perr := s.putRecord(context.WithoutCancel(ctx), updateDocID(rec.ID), "", rec.CreatedAt, false, rec); perr != nil {
		s.log.ErrorContext(ctx, "memoryservice: storing an update's outcome", "update", rec.ID, "err", perr)
	}
}

func (s *Service) getUpdate(w http.ResponseWriter, r *http.Request) {
	name, id := r.PathValue("name"), r.PathValue("id")
	def, _, err := s.loadStore(r.Context(), name)
	if err != nil {
		s.fail(w, r, "get update", err)
		return
	}
	var rec updateRecord
	_, err = s.getRecord(r.Context(), updateDocID(id), &rec)
	if errors.Is(err, store.ErrNotFound) || errors.Is(err, store.ErrInvalid) || (err == nil && rec.Store != name) {
		writeError(w, notFound("update_id", "update %q not found in memory store %q", id, name))
		return
	}
	if err == nil {
		err = s.liveOperations(r.Context(), def, &rec)
	}
	if err != nil {
		s.fail(w, r, "get update", err)
		return
	}
	writeJSON(w, http.StatusOK, rec.response())
}

// resume schedules the updates a previous process accepted and did not
// finish: for each scope the newest queued one at its due time, the others
// (and those in progress) at once.
func (s *Service) resume(ctx context.Context) error {
	docs, err := s.listRecords(ctx, "update.", store.SessionFilter{Status: store.SessionActive})
	if err != nil {
		return fmt.Errorf("memoryservice: resume updates: %w", err)
	}
	var recs []*updateRecord
	for _, d := range docs {
		var rec updateRecord
		if _, err := s.getRecordFrom(d, &rec); err != nil || !rec.active() {
			s.log.WarnContext(ctx, "memoryservice: unreadable update record skipped", "id", d.ID, "err", err)
			continue
		}
		recs = append(recs, &rec)
	}
	sort.Slice(recs, func(i, j int) bool { return recs[i].CreatedAt.Before(recs[j].CreatedAt) })
	newest := map[string]*updateRecord{}
	for _, rec := range recs {
		newest[UserID(rec.Store, rec.Scope)] = rec
	}
	// A crash after a new update was written and before the queued one it
	// continues was marked superseded leaves both queued on one session:
	// the older is superseded now, as it would have been.
	// (Or the write that marked it failed, which is only logged.)
	lastOf := map[string]*updateRecord{} // newest unfinished update by session
	for _, rec := range recs {
		lastOf[rec.SessionID] = rec
	}
	kept := recs[:0]
	for _, rec := range recs {
		if last := lastOf[rec.SessionID]; rec.Status == statusQueued && last != rec {
			rec.Status, rec.SupersededBy = statusSuperseded, last.ID
			if err := s.putRecord(ctx, updateDocID(rec.ID), "", rec.CreatedAt, false, rec); err != nil {
				return fmt.Errorf("memoryservice: resume updates: supersede %s: %w", rec.ID, err)
			}
			s.log.InfoContext(ctx, "memoryservice: an update left queued by a crash superseded", "update", rec.ID, "superseded_by", last.ID)
			continue
		}
		kept = append(kept, rec)
	}
	recs = kept
	for _, rec := range recs {
		if rec.Status == statusQueued && newest[UserID(rec.Store, rec.Scope)] == rec {
			s.schedule(rec, nil)
			continue
		}
		s.log.InfoContext(ctx, "memoryservice: resuming an update", "update", rec.ID, "status", rec.Status)
		s.mu.Lock()
		s.wg.Add(1)
		s.mu.Unlock()
		go func() { defer s.wg.Done(); s.run(usage.WithMeter(s.runCtx, &usage.Meter{}), rec) }()
	}
	return nil
}

// deleteUpdates removes the update records of memory store name that no
// scope lists any more (those of versions before the scope index), once
// every scope has been forgotten, dropping queued ones from the schedule.
// It reads every update record, as deleting a store is rare; deleting a
// scope reads only the scope's (deleteScopeUpdates).
func (s *Service) deleteUpdates(ctx context.Context, name string) error {
	docs, err := s.listRecords(ctx, "update.", store.SessionFilter{})
	if err != nil {
		return err
	}
	for _, d := range docs {
		var rec updateRecord
		if _, err := s.getRecordFrom(d, &rec); err != nil || rec.Store != name {
			continue
		}
		userID := UserID(rec.Store, rec.Scope)
		s.mu.Lock()
		if sc := s.pending[userID]; sc != nil {
			sc.timer.Stop()
			delete(s.pending, userID)
		}
		s.mu.Unlock()
		if err := s.deleteRecord(ctx, d.ID); err != nil {
			return err
		}
	}
	return nil
}
