package inspector

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"slices"
	"strconv"

	"github.com/agentmemory/agentmemory/erasure"
	"github.com/agentmemory/agentmemory/memoryservice"
	"github.com/agentmemory/agentmemory/provider"
	"github.com/agentmemory/agentmemory/store"
)

func escape(s string) string { return url.PathEscape(s) }

// What can be forgotten from a page.
const (
	forgetInsight = "insight"
	forgetSession = "session"
	forgetScope   = "scope"
)

type confirmData struct {
	Kind    string
	ID      string
	What    string // what the item says
	Href    string // its page
	Derived int    // insights drawn from it (a session)
}

// forgetTarget reads what a forget names: kind, and id unless the kind
// is the scope.
func (in *Inspector) forgetTarget(w http.ResponseWriter, r *http.Request, kind, id string) bool {
	switch kind {
	case forgetScope:
		return true
	case forgetInsight, forgetSession:
		if err := store.CheckID(kind+" id", id); err != nil {
			in.fail(w, r, http.StatusBadRequest, "id=%q is not a valid %s id: %v", truncate(id, 80), kind, err)
			return false
		}
		return true
	}
	in.fail(w, r, http.StatusBadRequest, "kind=%q: what is forgotten is an insight, a session or the scope.", truncate(kind, 40))
	return false
}

// confirmForget shows what a forget would remove, and the form that
// does it.
func (in *Inspector) confirmForget(w http.ResponseWriter, r *http.Request, s *scope) {
	q := r.URL.Query()
	kind, id := q.Get("kind"), q.Get("id")
	if !in.forgetTarget(w, r, kind, id) {
		return
	}
	ctx, st := r.Context(), s.store.Store()
	d := confirmData{Kind: kind, ID: id}
	switch kind {
	case forgetInsight:
		_, byID, err := allInsights(ctx, s)
		if err != nil {
			in.internal(w, r, err)
			return
		}
		x, ok := byID[id]
		if !ok {
			in.fail(w, r, http.StatusNotFound, "Scope %q has no insight %q.", s.scope, id)
			return
		}
		d.What, d.Href = x.InsightText, s.base+"/insights/"+escape(id)
	case forgetSession:
		doc, err := st.GetSession(ctx, s.userID, id)
		if errors.Is(err, store.ErrNotFound) {
			in.fail(w, r, http.StatusNotFound, "Scope %q has no session %q.", s.scope, id)
			return
		}
		if err != nil {
			in.internal(w, r, err)
			return
		}
		ins, err := st.ListInsights(ctx, s.userID, store.InsightFilter{SessionID: id})
		if err != nil {
			in.internal(w, r, err)
			return
		}
		d.What, d.Href, d.Derived = cmpOr(doc.Summary, "(no summary yet)"), s.base+"/sessions/"+escape(id), len(ins)
	case forgetScope:
		d.What, d.Href = "everything kept of scope "+strconv.Quote(s.scope), s.base+"/"
	}
	in.render(w, r, http.StatusOK, "confirm", s, d)
}

// forget forgets what the confirmed form names and shows its receipt.
func (in *Inspector) forget(w http.ResponseWriter, r *http.Request, s *scope) {
	r.Body = http.MaxBytesReader(w, r.Body, 16<<10)
	kind, id := r.PostFormValue("kind"), r.PostFormValue("id")
	if !in.forgetTarget(w, r, kind, id) {
		return
	}
	if r.PostFormValue("confirm") != "yes" {
		in.fail(w, r, http.StatusBadRequest, "A forget needs its confirmation (confirm=yes, as the confirmation page's form sends).")
		return
	}
	ctx := r.Context()
	if kind == forgetScope {
		err := s.store.ForgetScope(ctx, s.scope)
		switch {
		case errors.Is(err, memoryservice.ErrNoScope):
			in.fail(w, r, http.StatusNotFound, "Scope %q of memory store %q holds no memories.", s.scope, s.name)
		case errors.Is(err, memoryservice.ErrForgetIncomplete):
			in.fail(w, r, http.StatusServiceUnavailable, "Forgotten, but not yet erased from the server's files; the server completes it, or forget again.")
		case err != nil:
			in.internal(w, r, err)
		default:
			http.Redirect(w, r, s.base+"/deletions?forgot=scope", http.StatusSeeOther)
		}
		return
	}
	p, err := s.store.Provider()
	if err != nil {
		in.internal(w, r, err)
		return
	}
	var rc *provider.Receipt
	if kind == forgetInsight {
		rc, err = p.ForgetInsight(ctx, s.userID, id, provider.ForgetOptions{})
	} else {
		rc, err = p.ForgetSession(ctx, s.userID, id)
	}
	if errors.Is(err, store.ErrNotFound) {
		in.fail(w, r, http.StatusNotFound, "Scope %q has no %s %q (forgotten already?).", s.scope, kind, id)
		return
	}
	err = s.store.SettleForget(ctx, rc, err)
	switch {
	case errors.Is(err, memoryservice.ErrForgetIncomplete):
		in.fail(w, r, http.StatusServiceUnavailable, "Forgotten, but not yet erased from the server's files; the server completes it, or forget again.")
		return
	case err != nil:
		in.internal(w, r, err)
		return
	}
	if rc.LogSeq == 0 { // a store without a deletion log: the receipt is all there is
		in.render(w, r, http.StatusOK, "receipt", s, receiptData{Receipt: rc, Fresh: true})
		return
	}
	http.Redirect(w, r, s.base+"/deletions/"+strconv.FormatInt(rc.LogSeq, 10)+"?forgot="+kind, http.StatusSeeOther)
}

// scopeLog reads the deletion log's records of the scope (by the keyed
// hash that names its user), newest first, and verifies the chain.
func scopeLog(ctx context.Context, s *scope) (recs []*store.DeletionRecord, head erasure.Head, verr error, err error) {
	dl, ok := s.store.Store().(store.DeletionLog)
	p, perr := s.store.Provider()
	if !ok || perr != nil {
		return nil, erasure.Head{}, nil, errors.Join(perr, errors.New("inspector: the store keeps no deletion log"))
	}
	log := p.DeletionLog()
	subject, err := log.Subject(ctx, s.userID)
	if errors.Is(err, store.ErrNotFound) {
		return nil, erasure.Head{}, nil, nil // an empty log
	}
	if err != nil {
		return nil, erasure.Head{}, nil, err
	}
	const page = 500
	for after := int64(0); ; {
		batch, err := dl.ListDeletions(ctx, after, page)
		if err != nil {
			return nil, erasure.Head{}, nil, err
		}
		for _, rec := range batch {
			if rec.Subject == subject {
				recs = append(recs, rec)
			}
			after = rec.Seq
		}
		if len(batch) < page {
			break
		}
	}
	slices.Reverse(recs)
	head, verr = log.Verify(ctx)
	if verr != nil && !errors.Is(verr, erasure.ErrBroken) && !errors.Is(verr, erasure.ErrWrongKey) {
		return nil, erasure.Head{}, nil, verr
	}
	return recs, head, verr, nil
}

type deletionsData struct {
	Records []*store.DeletionRecord
	Head    erasure.Head
	Broken  string // why the chain does not verify; "" when it does
	Forgot  string // what was just forgotten
}

func (in *Inspector) deletions(w http.ResponseWriter, r *http.Request, s *scope) {
	recs, head, verr, err := scopeLog(r.Context(), s)
	if err != nil {
		in.internal(w, r, err)
		return
	}
	d := deletionsData{Records: recs, Head: head, Forgot: r.URL.Query().Get("forgot")}
	if verr != nil {
		d.Broken = verr.Error()
	}
	in.render(w, r, http.StatusOK, "deletions", s, d)
}

type receiptData struct {
	Record  *store.DeletionRecord
	Receipt *provider.Receipt // a receipt with no log record
	Head    erasure.Head
	Broken  string
	Fresh   bool   // just forgotten
	Forgot  string // what
	Links   map[string]string
}

func (in *Inspector) receipt(w http.ResponseWriter, r *http.Request, s *scope) {
	seq, err := strconv.ParseInt(r.PathValue("seq"), 10, 64)
	if err != nil || seq < 1 {
		in.fail(w, r, http.StatusBadRequest, "%q is not a record number of the deletion log (1 or more).", truncate(r.PathValue("seq"), 30))
		return
	}
	recs, head, verr, err := scopeLog(r.Context(), s)
	if err != nil {
		in.internal(w, r, err)
		return
	}
	i := slices.IndexFunc(recs, func(rec *store.DeletionRecord) bool { return rec.Seq == seq })
	if i < 0 {
		// Another scope's record is not this scope's to show.
		in.fail(w, r, http.StatusNotFound, "The deletion log has no record %d of scope %q.", seq, s.scope)
		return
	}
	forgot := r.URL.Query().Get("forgot")
	d := receiptData{Record: recs[i], Head: head, Fresh: forgot != "", Forgot: forgot, Links: map[string]string{}}
	if verr != nil {
		d.Broken = verr.Error()
	}
	for _, it := range recs[i].Items {
		if it.Action == store.ActionRewritten && it.ID != "" {
			d.Links[it.ID] = docHref(s, it.Kind, it.ID)
		}
	}
	in.render(w, r, http.StatusOK, "receipt", s, d)
}
