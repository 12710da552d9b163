package openai

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	"github.com/openai/openai-go/v3/option"

	"github.com/agentmemory/agentmemory/internal/reach"
)

// ErrUnreachable reports a server that refused the connection or whose host
// name does not resolve. Such a call fails at its first attempt, without
// the SDK's retries (which took 38 s against an unreachable server, and a
// refused connection or an unknown host does not heal in seconds); the
// message names the endpoint and the cause.
var ErrUnreachable = errors.New("server unreachable")

// ErrNotFound reports a server that answered 404 Not Found: the model
// (Azure: the deployment) is unknown to it, or the base URL is wrong.
var ErrNotFound = errors.New("model or deployment not found")

// reportAttempts is the SDK middleware that reports each attempt's error
// to internal/reach.
var reportAttempts = option.WithMiddleware(func(req *http.Request, next option.MiddlewareNext) (*http.Response, error) {
	res, err := next(req)
	reach.Report(req.Context(), err)
	return res, err
})

// guarded runs one SDK call under internal/reach's guard: an unreachable
// server ends it at its first attempt, and its error then wraps
// ErrUnreachable, naming endpoint and the cause.
func guarded(ctx context.Context, endpoint string, call func(context.Context, option.RequestOption) error) error {
	ctx, done := reach.Guard(ctx)
	defer done()
	err := call(ctx, reportAttempts)
	if err == nil {
		return nil
	}
	if cause := reach.Err(ctx); cause != nil {
		return fmt.Errorf("%w at %s: %w", ErrUnreachable, endpoint, cause)
	}
	return err
}
