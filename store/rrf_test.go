package store

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestFuseRRF(t *testing.T) {
	got := FuseRRF(0, []string{"a", "b", "c"}, []string{"c", "a", "d"})
	ids := make([]string, len(got))
	for i, f := range got {
		ids[i] = f.ID
	}
	// a: 1/61+1/62, c: 1/63+1/61, b: 1/62, d: 1/63.
	assert.Equal(t, []string{"a", "c", "b", "d"}, ids)
	assert.InDelta(t, 1.0/61+1.0/62, got[0].Score, 1e-12)
	assert.InDelta(t, 1.0/63, got[3].Score, 1e-12)
}

func TestFuseRRFTiesAndRepeats(t *testing.T) {
	// x and y tie on score; x reached rank 1, so it wins. A repeated id counts once.
	got := FuseRRF(60, []string{"x", "y", "x"}, []string{"y", "x"})
	require.Len(t, got, 2)
	assert.Equal(t, got[0].Score, got[1].Score)
	assert.Equal(t, "x", got[0].ID)
	got = FuseRRF(60, []string{"b"}, []string{"a"})
	assert.Equal(t, "a", got[0].ID, "full tie falls back to id order")
}
