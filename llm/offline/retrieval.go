package offline

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/agentmemory/agentmemory/agent"
	"github.com/agentmemory/agentmemory/internal/lexis"
	"github.com/agentmemory/agentmemory/prompts"
)

// The retrieval prompts' rules.
const (
	// noMemory is the fact_retrieval answer when nothing relevant came back.
	noMemory = "No relevant information found in memory."
	// maxFacts bounds the fact_retrieval answer's lines.
	maxFacts = 8
	// maxRewriteWords bounds the words a rewrite borrows from the context.
	maxRewriteWords = 8
)

// retrievalSearches are the tools the fact_retrieval rule calls, in order.
var retrievalSearches = []string{"search_insights", "search_interactions"}

// handleFactRetrieval plays the retrieval mini-agent by rule. First turn:
// it calls search_insights and search_interactions (those offered) with the
// request as the query. Once results are back: it answers with the result
// lines (one memory each, citation first) that share the most words with
// the request, at most maxFacts, in the order they came; or noMemory.
func handleFactRetrieval(ctx context.Context, req *agent.ChatRequest) (*agent.ChatResponse, error) {
	blocks, err := dataBlocks(req, prompts.BlockRequest)
	if err != nil {
		return nil, err
	}
	request := collapse(blocks[prompts.BlockRequest])
	last := req.Messages[len(req.Messages)-1]
	if last.Role != agent.RoleTool {
		var calls []agent.ToolCall
		for _, name := range retrievalSearches {
			if !slices.ContainsFunc(req.Tools, func(t agent.Tool) bool { return t.Name() == name }) {
				continue
			}
			args, _ := json.Marshal(map[string]string{"query": request})
			calls = append(calls, agent.ToolCall{ID: callID(req, len(calls), name), Name: name, Arguments: args})
		}
		if len(calls) > 0 {
			return &agent.ChatResponse{Message: agent.Message{Role: agent.RoleAssistant, ToolCalls: calls}, Usage: usage(req, 0), FinishReason: "tool_calls", Model: ModelName}, nil
		}
	}
	var lines []string
	for _, m := range req.Messages {
		if m.Role != agent.RoleTool {
			continue
		}
		for _, l := range strings.Split(prompts.Blocks(m.Text)[prompts.BlockMemories], "\n") {
			if l = strings.TrimSpace(l); strings.HasPrefix(l, "- [") && !slices.Contains(lines, l) {
				lines = append(lines, l)
			}
		}
	}
	ranked := lexis.Rank(request, lines, maxFacts)
	text := noMemory
	if len(ranked) > 0 {
		idx := make([]int, len(ranked))
		for i, r := range ranked {
			idx[i] = r.Index
		}
		slices.Sort(idx)
		facts := make([]string, len(idx))
		for i, j := range idx {
			facts[i] = lines[j]
		}
		text = strings.Join(facts, "\n")
	}
	return &agent.ChatResponse{Message: agent.AssistantText(text), Usage: usage(req, countWords(text)), FinishReason: "stop", Model: ModelName}, nil
}

// handleQueryRewrite makes a follow-up standalone by context prepend: the
// question, followed by the most frequent content words of the recent
// turns that it does not already contain.
func handleQueryRewrite(ctx context.Context, req *agent.ChatRequest) (*agent.ChatResponse, error) {
	blocks, err := dataBlocks(req, prompts.BlockRecentTurns, prompts.BlockQuestion)
	if err != nil {
		return nil, err
	}
	question := collapse(blocks[prompts.BlockQuestion])
	if question == "" {
		return nil, fmt.Errorf("empty <%s> block", prompts.BlockQuestion)
	}
	have := map[string]bool{}
	for _, w := range lexis.Words(question) {
		have[w] = true
	}
	var texts []string
	for _, t := range prompts.ParseTurns(blocks[prompts.BlockRecentTurns]) {
		if !(t.Role == "assistant" && ownAnswer(t.Text)) {
			texts = append(texts, t.Text)
		}
	}
	words := analyse(textSentences(strings.Join(texts, "\n"))).topics(maxRewriteWords)
	var extra []string
	for _, w := range words {
		if !have[strings.ToLower(w)] {
			extra = append(extra, w)
		}
	}
	text := question
	if len(extra) > 0 {
		text += " (" + strings.Join(extra, ", ") + ")"
	}
	return &agent.ChatResponse{Message: agent.AssistantText(text), Usage: usage(req, countWords(text)), FinishReason: "stop", Model: ModelName}, nil
}
