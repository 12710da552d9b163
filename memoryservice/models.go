package memoryservice

import (
	"context"
	"errors"
	"fmt"

	"github.com/agentmemory/agentmemory/agent"
	"github.com/agentmemory/agentmemory/embed"
)

// Models gives the clients of the models a memory store's definition
// names, the way Foundry names a project's deployments: chat_model does
// all the store's memory work (summaries, extraction, reflection, the
// profile, query rewriting) and embedding_model embeds its memories. The
// endpoint and its credentials are the implementation's (cmd/agentmemory-
// server's come from the environment). Implementations must be safe for
// concurrent use and should return the same client for the same name.
type Models interface {
	// Chat returns the client of chat model (Azure: deployment) name.
	Chat(ctx context.Context, name string) (agent.ChatClient, error)
	// Embedder returns the embedder of embedding model name.
	Embedder(ctx context.Context, name string) (embed.Embedder, error)
}

// ErrUnknownModel is wrapped by the error of a Models implementation whose
// endpoint does not know the model named: creating a memory store naming
// it is answered 400, naming the definition's field.
var ErrUnknownModel = errors.New("memoryservice: unknown model")

// storeModels returns the clients of the models def names (Config.Models),
// or Config's own, wrapped by Config.WrapModels. A model the endpoint
// does not know, or an embedding model whose vectors the store cannot
// hold, is an *apiError naming the definition's field.
func (s *Service) storeModels(ctx context.Context, def *memoryStore) (chat, mini agent.ChatClient, emb embed.Embedder, err error) {
	chat, mini, emb, err = s.namedModels(ctx, def)
	if err != nil || s.cfg.WrapModels == nil {
		return chat, mini, emb, err
	}
	chat, mini, emb = s.cfg.WrapModels(chat, mini, emb)
	return chat, mini, emb, nil
}

// namedModels is storeModels before Config.WrapModels.
func (s *Service) namedModels(ctx context.Context, def *memoryStore) (chat, mini agent.ChatClient, emb embed.Embedder, err error) {
	if s.cfg.Models == nil {
		return s.cfg.Chat, s.cfg.Mini, s.cfg.Embedder, nil
	}
	d := def.Definition
	chat, err = s.cfg.Models.Chat(ctx, d.ChatModel)
	if err != nil {
		return nil, nil, nil, modelError("definition.chat_model", d.ChatModel, err)
	}
	emb, err = s.cfg.Models.Embedder(ctx, d.EmbeddingModel)
	if err != nil {
		return nil, nil, nil, modelError("definition.embedding_model", d.EmbeddingModel, err)
	}
	if n := emb.Dimensions(); s.cfg.Dimensions > 0 && n != s.cfg.Dimensions && !embed.IsLexical(emb) {
		return nil, nil, nil, badRequest("definition.embedding_model", "%q makes %d-dimensional vectors; this server's store holds %d-dimensional vectors only (memory store %q)",
			d.EmbeddingModel, n, s.cfg.Dimensions, def.Name)
	}
	return chat, chat, emb, nil
}

// modelError is the error of a model that could not be had: a 400 when
// the endpoint does not know it.
func modelError(param, name string, err error) error {
	if errors.Is(err, ErrUnknownModel) {
		return badRequest(param, "%q: the model endpoint does not know this model (Azure: deployment): %v", name, err)
	}
	return fmt.Errorf("%s %q: %w", param, name, err)
}
