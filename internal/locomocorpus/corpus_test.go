package locomocorpus

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestLoad(t *testing.T) {
	c, err := Load("testdata")
	require.NoError(t, err)
	require.Len(t, c.Conversations, 1)
	msgs := c.Conversations[0]
	require.Len(t, msgs, 8, "sessions 1, 2 and 10, in numeric order")
	assert.Equal(t, "Ana: Her name is Pebble. [image: a photo of a grey cat on a sofa]", msgs[2])
	assert.Equal(t, "Ben: Any news about the pottery?", msgs[7], "session_10 comes after session_2")
	assert.Equal(t, []string{"What is the name of Ana's cat?", "When did Ana adopt the cat?"}, c.Questions, "category 5 left out")

	_, err = Load(t.TempDir())
	assert.ErrorContains(t, err, "no *.json file")
}

func TestFromEnvUnset(t *testing.T) {
	t.Setenv(EnvDir, "")
	_, err := FromEnv()
	assert.ErrorIs(t, err, ErrNoData)
}

func TestDocuments(t *testing.T) {
	c, err := Load("testdata")
	require.NoError(t, err)
	docs := c.Documents(40, 3, 0)
	require.Len(t, docs, 40)
	// Replica 0: windows of 3 messages over the 8, all kept.
	assert.Equal(t, strings.Join(c.Conversations[0][:3], "\n"), docs[0])
	assert.Equal(t, strings.Join(c.Conversations[0][6:], "\n"), docs[2])
	assert.Equal(t, docs, c.Documents(40, 3, 0), "deterministic")
	other := c.Documents(40, 3, 7)
	assert.NotEqual(t, docs[:10], other[:10], "another first replica gives other documents")
	seen := map[string]int{}
	for _, d := range docs {
		seen[d]++
		for _, line := range strings.Split(d, "\n") {
			assert.Contains(t, c.Conversations[0], line)
		}
	}
	// Offsets alone give at most 11 distinct windows of 8 messages; the
	// left-out messages give more.
	assert.Greater(t, len(seen), 12, "replicas vary")
}
