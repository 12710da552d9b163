package provider

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/agentmemory/agentmemory/agent"
	"github.com/agentmemory/agentmemory/store"
)

// ReasonExpired is the deletion-log reason of ForgetBefore: memory removed
// because it outlived its time to live, not because anyone asked.
const ReasonExpired = "ttl_expired"

// ForgetBefore forgets the user's memory last written before cutoff (see
// the documents' LastWritten, such as store.Session.LastWritten): each
// such session with its turns and summary, each such interaction and
// insight, and whatever forgetting those follows (as
// ForgetSession, ForgetInteraction and ForgetInsight do) — in one call
// logged with ReasonExpired. A session still being written is kept until
// its last write is older than cutoff, and its turns with it. The long-term
// profile is synthesised anew when it carried an expired insight; when it
// is itself older than cutoff afterwards, it is deleted by a second logged
// call. Superseded insights (see store.InsightFilter.IncludeSuperseded)
// expire like active ones. With nothing older than cutoff it changes and
// logs nothing, and returns an empty receipt.
//
// Its errors are those of the other forget calls (see ErrNotErased); a
// repeated call finds what is left to expire, and CompleteForget with the
// receipt completes an ErrNotLogged or ErrNotErased. When both calls ran,
// the receipt names the first call's log record.
func (p *MemoryProvider) ForgetBefore(ctx context.Context, userID string, cutoff time.Time) (*Receipt, error) {
	if err := agent.ValidateUserID(userID); err != nil {
		return nil, fmt.Errorf("provider: forget expired: %w", err)
	}
	if cutoff.IsZero() {
		return nil, errors.New("provider: forget expired: zero cutoff")
	}
	e := p.newEraser(userID, ReasonExpired)
	old := func(t time.Time) bool { return !t.IsZero() && t.Before(cutoff) }
	sessions, err := p.store.ListSessions(ctx, userID, store.SessionFilter{})
	if err != nil {
		return nil, fmt.Errorf("provider: forget expired: list sessions: %w", err)
	}
	for _, s := range sessions {
		if old(s.LastWritten()) {
			e.sessions[s.ID] = true
		}
	}
	inters, err := p.store.ListInteractions(ctx, userID, store.InteractionFilter{Until: cutoff})
	if err != nil {
		return nil, fmt.Errorf("provider: forget expired: list interactions: %w", err)
	}
	for _, in := range inters {
		if old(in.LastWritten()) {
			e.interactions[in.ID] = true
		}
	}
	profileID := store.LongTermID(userID)
	// Superseded insights too: their text is memory as well, and an
	// expired merge must not bring its expired members back.
	insights, err := p.store.ListInsights(ctx, userID, store.InsightFilter{IncludeSuperseded: true})
	if err != nil {
		return nil, fmt.Errorf("provider: forget expired: list insights: %w", err)
	}
	for _, in := range insights {
		// The profile alone is deleted apart: forgetting it takes no
		// other document with it.
		if in.ID != profileID && old(in.LastWritten()) {
			e.insights[in.ID] = true
		}
	}
	rc := e.rc
	var runErr error
	if len(e.sessions)+len(e.interactions)+len(e.insights) > 0 {
		rc, runErr = e.run(ctx)
		// Deleted but not logged or not erased: the profile's turn still
		// comes (CompleteForget finishes the rest).
		if runErr != nil && !errors.Is(runErr, ErrNotLogged) && !errors.Is(runErr, ErrNotErased) {
			return rc, runErr
		}
	}
	prof, err := p.store.GetInsight(ctx, userID, profileID)
	switch {
	case errors.Is(err, store.ErrNotFound):
		return rc, runErr
	case err != nil:
		return rc, errors.Join(runErr, fmt.Errorf("provider: forget expired: read the profile: %w", err))
	case !old(prof.LastWritten()):
		return rc, runErr
	}
	pe := p.newEraser(userID, ReasonExpired)
	pe.insights[profileID] = true
	prc, err := pe.run(ctx)
	if prc != nil {
		if len(rc.Items) == 0 {
			rc.LogSeq, rc.LogHash = prc.LogSeq, prc.LogHash
		}
		rc.Items = append(rc.Items, prc.Items...)
	}
	return rc, errors.Join(runErr, err)
}
