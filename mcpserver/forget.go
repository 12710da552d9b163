package mcpserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/agentmemory/agentmemory/erasure"
	"github.com/agentmemory/agentmemory/provider"
	"github.com/agentmemory/agentmemory/store"
)

func (h *handlers) forget(ctx context.Context, in forgetIn) (forgetOut, error) {
	id := strings.TrimSpace(in.InsightID)
	if err := store.CheckID("insight_id", id); err != nil {
		return forgetOut{}, err
	}
	rc, err := h.mem.ForgetInsight(ctx, h.user, id, provider.ForgetOptions{Sources: in.IncludeConversation})
	if err := forgetErr("insight", id, rc, err); err != nil {
		return forgetOut{}, err
	}
	return forgetOut{Forgotten: id, receiptOut: receiptOf(rc),
		AlsoForgotten: slices.DeleteFunc(rc.IDs(store.KindInsight, erasure.Deleted), func(x string) bool { return x == id })}, nil
}

func (h *handlers) forgetSession(ctx context.Context, in forgetSessionIn) (receiptOut, error) {
	id := strings.TrimSpace(in.SessionID)
	if err := store.CheckID("session_id", id); err != nil {
		return receiptOut{}, err
	}
	rc, err := h.mem.ForgetSession(ctx, h.user, id)
	if err := forgetErr("session", id, rc, err); err != nil {
		return receiptOut{}, err
	}
	return receiptOf(rc), nil
}

func (h *handlers) forgetInteraction(ctx context.Context, in forgetInteractionIn) (receiptOut, error) {
	id := strings.TrimSpace(in.InteractionID)
	if err := store.CheckID("interaction_id", id); err != nil {
		return receiptOut{}, err
	}
	rc, err := h.mem.ForgetInteraction(ctx, h.user, id)
	if err := forgetErr("interaction", id, rc, err); err != nil {
		return receiptOut{}, err
	}
	return receiptOf(rc), nil
}

// forgetErr turns a forget call's error into the tool's: what is unknown,
// or what was deleted before the failure.
func forgetErr(what, id string, rc *provider.Receipt, err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, store.ErrNotFound):
		return fmt.Errorf("no %s %q", what, id)
	case errors.Is(err, provider.ErrNotLogged):
		out, _ := json.Marshal(receiptOf(rc))
		return fmt.Errorf("forgotten (%s), but the deletion log was not written: %w", out, err)
	case errors.Is(err, provider.ErrNotErased):
		out, _ := json.Marshal(receiptOf(rc))
		return fmt.Errorf("forgotten and logged (%s), but the deleted text may stay readable in the store's files until the erasure is completed: %w", out, err)
	case rc != nil:
		out, _ := json.Marshal(receiptOf(rc))
		return fmt.Errorf("forgetting failed after deleting %s: %w", out, err)
	}
	return fmt.Errorf("forgetting failed: %w", err)
}
