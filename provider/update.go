package provider

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/agentmemory/agentmemory/agent"
	"github.com/agentmemory/agentmemory/embed"
	"github.com/agentmemory/agentmemory/store"
)

// UpdateInsight replaces the text of one of the user's active insights
// (or of the long-term profile, by its id store.LongTermID) and embeds it
// anew; an embedder that fails is logged and the insight is kept without
// a vector, found by its text alone. When the long-term profile had folded
// the insight in, the profile is synthesised anew before returning, as
// ForgetInsight does, so that the old text leaves it, and open sessions
// here reload their initialization block. It runs under the user's lease
// (no reflection of the user interleaves). It fails with store.ErrNotFound
// for an insight the user does not have (a superseded one included) and
// store.ErrInvalid for blank text; when only the profile's rebuild failed,
// it returns the updated insight with the error, and the profile is left
// deleted (made anew at the next profile update) rather than old.
func (p *MemoryProvider) UpdateInsight(ctx context.Context, userID, insightID, text string) (*store.Insight, error) {
	if err := agent.ValidateUserID(userID); err != nil {
		return nil, fmt.Errorf("provider: update insight: %w", err)
	}
	if err := store.CheckID("insight id", insightID); err != nil {
		return nil, fmt.Errorf("provider: update insight: %w", err)
	}
	if strings.TrimSpace(text) == "" {
		return nil, fmt.Errorf("provider: update insight %s: %w: blank text", insightID, store.ErrInvalid)
	}
	vec, model := p.embedOne(ctx, text)
	profileID := store.LongTermID(userID)
	var updated *store.Insight
	// Under the lease, as a forget: the old text is what leaves, and the
	// profile is rebuilt when it carried it.
	_, err := p.reflector.Forget(ctx, userID, func(ctx context.Context) (bool, error) {
		in, err := p.store.GetInsight(ctx, userID, insightID)
		if err != nil {
			return false, fmt.Errorf("insight %s: %w", insightID, err)
		}
		folded := false
		if insightID != profileID {
			prof, err := p.store.GetInsight(ctx, userID, profileID)
			switch {
			case errors.Is(err, store.ErrNotFound):
			case err != nil:
				return false, fmt.Errorf("read the profile: %w", err)
			default:
				folded = in.Processed || slices.Contains(prof.SourceInsightIDs, insightID)
			}
		}
		in.InsightText, in.ContentHash, in.InsightVector, in.EmbeddingModel = text, "", vec, model
		in.UpdatedAt = p.cfg.Now().UTC()
		if err := p.store.PutInsight(ctx, userID, in); err != nil {
			return false, fmt.Errorf("write insight %s: %w", insightID, err)
		}
		updated = in
		return folded, nil
	})
	if updated != nil {
		p.reloadInit(ctx, userID)
	}
	if err != nil {
		return updated, fmt.Errorf("provider: update insight: %w", err)
	}
	return updated, nil
}

// embedOne embeds text with the provider's embedder: no vector with a
// lexical embedder, nor when the embedder fails (logged).
func (p *MemoryProvider) embedOne(ctx context.Context, text string) ([]float32, string) {
	if embed.IsLexical(p.cfg.Embedder) {
		return nil, p.cfg.Embedder.Model()
	}
	vs, err := p.cfg.Embedder.Embed(ctx, []string{text})
	if err != nil || len(vs) != 1 {
		p.log.WarnContext(ctx, "agentmemory: insight stored without its vector", "err", err)
		return nil, ""
	}
	return vs[0], p.cfg.Embedder.Model()
}
