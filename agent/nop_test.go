package agent

import "context"

// nopClient answers every request with an empty assistant message. It stands
// in for a model only where no model call matters to the test.
type nopClient struct{}

func (nopClient) Complete(context.Context, *ChatRequest) (*ChatResponse, error) {
	return &ChatResponse{Message: AssistantText("")}, nil
}
