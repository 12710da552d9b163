package fakeopenai

import (
	"context"
	"net/http"

	"github.com/agentmemory/agentmemory/embed"
)

// EmbedWith returns an embeddings handler, for HandleEmbeddings, that
// serves e's vectors of the request's inputs, so that the similarity of
// the served vectors means what e's does; an error of e is an HTTP 400.
func EmbedWith(e embed.Embedder) func(Request) Reply {
	return func(r Request) Reply {
		vs, err := e.Embed(context.Background(), r.Embeddings.Input)
		if err != nil {
			return Error(http.StatusBadRequest, err.Error())
		}
		return Embeddings(vs...)
	}
}
