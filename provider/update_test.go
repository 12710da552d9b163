package provider_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentmemory/agentmemory/internal/sqlitetest"
	"github.com/agentmemory/agentmemory/provider"
	"github.com/agentmemory/agentmemory/store"
)

// An insight whose text is replaced (a memory item updated over the
// Memory Store API) takes its old text out of the long-term profile that
// had folded it in, and out of an open session's initialization block.
func TestUpdatedInsightLeavesTheProfile(t *testing.T) {
	ctx := context.Background()
	s := openOffline(t, sqlitetest.NewFile(t), func(c *provider.Config) { c.ProfileEvery = 1 })
	talkAndEnd(t, s, "u1", "My old 401k from Zyxwvutco holds $40,000.")
	prof, err := s.st.GetInsight(ctx, "u1", store.LongTermID("u1"))
	require.NoError(t, err)
	require.Contains(t, prof.InsightText, "Zyxwvutco", "the profile folded the insight in")
	ins, err := s.st.ListInsights(ctx, "u1", store.InsightFilter{Type: store.InsightSession})
	require.NoError(t, err)
	require.Len(t, ins, 1)

	in, err := s.mem.UpdateInsight(ctx, "u1", ins[0].ID, "The user's old 401k from Quuxcorp holds $40,000.")
	require.NoError(t, err)
	assert.Equal(t, "The user's old 401k from Quuxcorp holds $40,000.", in.InsightText)
	got, err := s.st.GetInsight(ctx, "u1", ins[0].ID)
	require.NoError(t, err)
	assert.Equal(t, in.InsightText, got.InsightText)
	assert.Equal(t, ins[0].EmbeddingModel, got.EmbeddingModel)

	prof, err = s.st.GetInsight(ctx, "u1", store.LongTermID("u1"))
	require.NoError(t, err)
	assert.NotContains(t, prof.InsightText, "Zyxwvutco", "the old text left the profile")
	assert.Contains(t, prof.InsightText, "Quuxcorp", "the new text is in it")

	_, err = s.mem.UpdateInsight(ctx, "u1", "ins-nope", "x")
	assert.ErrorIs(t, err, store.ErrNotFound)
	_, err = s.mem.UpdateInsight(ctx, "u1", ins[0].ID, "  ")
	assert.ErrorIs(t, err, store.ErrInvalid)
}
