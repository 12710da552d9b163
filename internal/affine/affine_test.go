package affine

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentmemory/agentmemory/embed"
	"github.com/agentmemory/agentmemory/embed/lexical"
)

func TestCosinesAreMappedAffinely(t *testing.T) {
	lex, err := lexical.New(lexical.Config{})
	require.NoError(t, err)
	texts := []string{
		"I adopted a puppy named Max last weekend",
		"Max the puppy chewed my running shoes",
		"The quarterly tax payment is due in April",
		"",
	}
	plain, err := lex.Embed(context.Background(), texts)
	require.NoError(t, err)
	for _, floor := range []float64{0, 0.15, 0.7} {
		a, err := New(lex, floor)
		require.NoError(t, err)
		vs, err := a.Embed(context.Background(), texts)
		require.NoError(t, err)
		for i := range texts {
			require.Len(t, vs[i], a.Dimensions())
			for j := range texts {
				want := floor + (1-floor)*float64(embed.Cosine(plain[i], plain[j]))
				if i == 3 || j == 3 {
					want = 0 // a zero vector stays zero
				}
				assert.InDelta(t, want, float64(embed.Cosine(vs[i], vs[j])), 1e-5, "floor %v, texts %d and %d", floor, i, j)
			}
		}
	}
}

func TestNewRefusesABadFloor(t *testing.T) {
	lex, err := lexical.New(lexical.Config{})
	require.NoError(t, err)
	for _, f := range []float64{-0.1, 1, 2} {
		_, err := New(lex, f)
		assert.ErrorContains(t, err, "outside [0, 1)")
	}
	_, err = New(nil, 0.5)
	assert.Error(t, err)
}
