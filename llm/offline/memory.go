package offline

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/agentmemory/agentmemory/agent"
	"github.com/agentmemory/agentmemory/prompts"
)

// Limits of the memory prompt handlers (see the package documentation).
const (
	maxSummarySentences = 2
	maxSentenceWords    = 40
	maxOfflineEntities  = 10
	maxNewSentences     = 3
)

// memoryHandlers returns the default handlers for the memory prompts.
func memoryHandlers() map[string]Handler {
	return map[string]Handler{
		prompts.NameInteractionMetadata: handleInteractionMetadata,
		prompts.NameCumulativeSummary:   handleCumulativeSummary,
		prompts.NameSessionSummary:      handleSessionSummary,
		prompts.NameFactRetrieval:       handleFactRetrieval,
		prompts.NameQueryRewrite:        handleQueryRewrite,
		prompts.NameSessionReflection:   handleSessionReflection,
		prompts.NameProfileSynthesis:    handleProfileSynthesis,
		prompts.NameReconcile:           handleReconcile,
		prompts.NameAnswerJudge:         handleAnswerJudge,
	}
}

// dataBlocks returns the blocks of the last user message of req and checks
// that the wanted ones are present.
func dataBlocks(req *agent.ChatRequest, wanted ...string) (map[string]string, error) {
	for i := len(req.Messages) - 1; i >= 0; i-- {
		if req.Messages[i].Role != agent.RoleUser {
			continue
		}
		blocks := prompts.Blocks(req.Messages[i].Text)
		for _, w := range wanted {
			if _, ok := blocks[w]; !ok {
				return nil, fmt.Errorf("user message has no <%s> data block", w)
			}
		}
		return blocks, nil
	}
	return nil, fmt.Errorf("no user message with the data blocks")
}

func handleInteractionMetadata(ctx context.Context, req *agent.ChatRequest) (*agent.ChatResponse, error) {
	blocks, err := dataBlocks(req, prompts.BlockConversation)
	if err != nil {
		return nil, err
	}
	sents := turnSentences(prompts.ParseTurns(blocks[prompts.BlockConversation]))
	doc := analyse(sents)
	summary := joinSentences(doc.summarySentences(maxSummarySentences))
	if summary == "" { // no sentence has a word: echo the start of the text
		summary = capWords(collapse(blocks[prompts.BlockConversation]), maxSentenceWords)
	}
	m := prompts.Metadata{
		Summary:         summary,
		MentionedTopics: doc.topics(prompts.MaxTopics),
		Entities:        doc.entities(maxOfflineEntities),
	}
	return jsonResponse(req, m)
}

func handleCumulativeSummary(ctx context.Context, req *agent.ChatRequest) (*agent.ChatResponse, error) {
	blocks, err := dataBlocks(req, prompts.BlockPreviousSummary, prompts.BlockNewTurns)
	if err != nil {
		return nil, err
	}
	summary := fold(blocks[prompts.BlockPreviousSummary], prompts.ParseTurns(blocks[prompts.BlockNewTurns]), prompts.CumulativeSummaryWords)
	return &agent.ChatResponse{
		Message:      agent.AssistantText(summary),
		Usage:        usage(req, countWords(summary)),
		FinishReason: "stop",
		Model:        ModelName,
	}, nil
}

func handleSessionSummary(ctx context.Context, req *agent.ChatRequest) (*agent.ChatResponse, error) {
	blocks, err := dataBlocks(req, prompts.BlockSummarySoFar, prompts.BlockLastTurns)
	if err != nil {
		return nil, err
	}
	prev := blocks[prompts.BlockSummarySoFar]
	turns := prompts.ParseTurns(blocks[prompts.BlockLastTurns])
	all := append(textSentences(prev), turnSentences(turns)...)
	r := prompts.SessionSummaryResult{
		Summary:   fold(prev, turns, prompts.SessionSummaryWords),
		KeyTopics: analyse(all).topics(prompts.MaxTopics),
	}
	return jsonResponse(req, r)
}

func jsonResponse(req *agent.ChatRequest, v any) (*agent.ChatResponse, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, fmt.Errorf("encode answer: %w", err)
	}
	text := strings.TrimSpace(buf.String())
	return &agent.ChatResponse{
		Message:      agent.AssistantText(text),
		Usage:        usage(req, countWords(text)),
		FinishReason: "stop",
		Model:        ModelName,
	}, nil
}
