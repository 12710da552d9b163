package retrieval

import (
	"context"
	"fmt"
	"strings"

	"github.com/agentmemory/agentmemory/prompts"
)

// Rewrite modes for vague follow-ups.
const (
	// RewritePrepend adds the recent user messages to a vague query (no
	// model call). The default.
	RewritePrepend = "prepend"
	// RewriteLLM asks Config.Mini to rewrite a vague query as a standalone
	// one, falling back to RewritePrepend if the model fails.
	RewriteLLM = "llm"
	// RewriteOff searches with the message as it is.
	RewriteOff = "off"
)

// maxPrependTurns is how many recent user messages a prepended query takes.
const maxPrependTurns = 2

// Rewrite returns the search query for message given the recent turns of
// the conversation (oldest first). A message that is not vague is returned
// as it is.
func (r *Retriever) Rewrite(ctx context.Context, recent []prompts.Turn, message string) string {
	if r.cfg.Rewrite == RewriteOff || len(recent) == 0 || !IsVague(message) {
		return message
	}
	if r.cfg.Rewrite == RewriteLLM && r.cfg.Mini != nil {
		q, err := r.rewriteLLM(ctx, recent, message)
		if err == nil {
			return q
		}
		r.cfg.Logger.WarnContext(ctx, "memory: query rewrite failed; prepending context instead", "err", err)
	}
	return prepend(recent, message)
}

func (r *Retriever) rewriteLLM(ctx context.Context, recent []prompts.Turn, message string) (string, error) {
	p, err := r.cfg.Prompts.QueryRewrite(recent, message)
	if err != nil {
		return "", err
	}
	out, err := r.cfg.Mini.Complete(ctx, p.Request())
	if err != nil {
		return "", fmt.Errorf("query rewrite: %w", err)
	}
	return prompts.ParseQuery([]byte(out.Message.Text))
}

// prepend puts the last user messages of recent before message.
func prepend(recent []prompts.Turn, message string) string {
	var parts []string
	for i := len(recent) - 1; i >= 0 && len(parts) < maxPrependTurns; i-- {
		if recent[i].Role == "user" && strings.TrimSpace(recent[i].Text) != "" {
			parts = append([]string{strings.TrimSpace(recent[i].Text)}, parts...)
		}
	}
	return strings.Join(append(parts, message), " ")
}
