package keeper_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentmemory/agentmemory/embed/lexical"
	"github.com/agentmemory/agentmemory/internal/fakeopenai"
	"github.com/agentmemory/agentmemory/internal/sqlitetest"
	"github.com/agentmemory/agentmemory/keeper"
	"github.com/agentmemory/agentmemory/llm/openai"
	"github.com/agentmemory/agentmemory/prompts"
	"github.com/agentmemory/agentmemory/store"
	"github.com/agentmemory/agentmemory/store/sqlite"
)

// faithfulModel summarises by keeping everything: a cumulative summary is
// the previous one followed by every new message, a session summary the
// running one followed by every last message it does not hold yet. With
// it, a session summary that misses a turn is the keeper's fault.
func faithfulModel(r fakeopenai.Request) fakeopenai.Reply {
	blocks := prompts.Blocks(r.LastUserText())
	fold := func(prev string, turns []prompts.Turn) string {
		parts := []string{prev}
		for _, t := range turns {
			if !strings.Contains(prev, t.Text) {
				parts = append(parts, t.Text)
			}
		}
		return strings.TrimSpace(strings.Join(parts, " "))
	}
	switch sys := r.SystemText(); {
	case strings.HasPrefix(sys, prompts.Marker(prompts.NameInteractionMetadata)):
		return fakeopenai.JSON(map[string]any{"summary": "Preferences.", "mentioned_topics": []string{"preferences"}, "entities": []string{}})
	case strings.HasPrefix(sys, prompts.Marker(prompts.NameCumulativeSummary)):
		return fakeopenai.Text(fold(blocks[prompts.BlockPreviousSummary], prompts.ParseTurns(blocks[prompts.BlockNewTurns])))
	case strings.HasPrefix(sys, prompts.Marker(prompts.NameSessionSummary)):
		return fakeopenai.JSON(map[string]any{"summary": fold(blocks[prompts.BlockSummarySoFar], prompts.ParseTurns(blocks[prompts.BlockLastTurns])),
			"key_topics": []string{"preferences"}})
	}
	return fakeopenai.Text("?")
}

// Every turn recorded reaches the session summary's input: through the
// cumulative summary (each chunk pruned, the short last one at End
// included, is folded into it) or the last turns shown beside it,
// whatever K and ActiveTurns. One update of six user messages ending a
// session (K 10, ActiveTurns 5: the first message is in the cumulative
// summary only) is the shape the memory service gives a benchmark.
func TestEveryTurnReachesTheSessionSummary(t *testing.T) {
	said := []string{"I care about dark roast coffee a lot.", "I care about peanut allergy a lot.", "I care about saving for a house a lot.",
		"I care about jazz concerts a lot.", "I care about window seats a lot.", "I care about a vegetarian diet a lot."}
	for _, c := range []struct{ k, active int }{{0, 0}, {2, 5}, {4, 1}, {5, 5}, {6, 2}, {10, 1}} {
		t.Run(fmt.Sprintf("K=%d,ActiveTurns=%d", c.k, c.active), func(t *testing.T) {
			ctx := context.Background()
			srv := fakeopenai.New(t)
			srv.HandleChat(faithfulModel)
			mini, err := openai.NewChat(openai.Config{BaseURL: srv.URL(), ChatModel: "faithful", MaxRetries: -1,
				Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
			require.NoError(t, err)
			emb, err := lexical.New(lexical.Config{Dimensions: dims})
			require.NoError(t, err)
			st, err := sqlite.Open(ctx, sqlitetest.NewFile(t), sqlite.Config{Dimensions: dims})
			require.NoError(t, err)
			t.Cleanup(func() { st.Close() })
			k, err := keeper.New(st, keeper.Config{Mini: mini, Embedder: emb, K: c.k, ActiveTurns: c.active,
				Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
			require.NoError(t, err)
			s, err := k.Open(ctx, "u1", "s1")
			require.NoError(t, err)
			for i, text := range said {
				_, err := s.AddTurn(ctx, store.Turn{Messages: []store.TurnMessage{{ID: fmt.Sprint("m", i), Role: "user", Content: text}}})
				require.NoError(t, err)
				_, err = s.Prune(ctx) // as the provider does after each turn
				require.NoError(t, err)
			}
			end, err := s.End(ctx)
			require.NoError(t, err)
			require.False(t, end.Session.SummaryPending)
			for _, text := range said {
				assert.Contains(t, end.Session.Summary, text)
			}
		})
	}
}
