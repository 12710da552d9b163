package retrieval

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/agentmemory/agentmemory/store"
)

func TestRankDateWindow(t *testing.T) {
	day := func(y int, m time.Month, d int) time.Time { return time.Date(y, m, d, 0, 0, 0, 0, time.UTC) }
	for q, want := range map[string][2]time.Time{
		"What dish did Nate make on 9 November, 2022?":             {day(2022, 11, 8), day(2022, 11, 17)},
		"What did we say on October 6, 2022?":                      {day(2022, 10, 5), day(2022, 10, 14)},
		"the 8th of December, 2023 call":                           {day(2023, 12, 7), day(2023, 12, 16)},
		"notes from 2024-02-29":                                    {day(2024, 2, 28), day(2024, 3, 8)},
		"What did I decide about my IRA in March 2024?":            {day(2024, 2, 29), day(2024, 4, 8)},
		"Which career-high performances did John achieve in 2023?": {day(2022, 12, 31), day(2024, 1, 8)},
		"Where was John between August 11 and August 15 2023?":     {day(2023, 8, 10), day(2023, 8, 23)},
		"What did I buy from March to May 2024?":                   {day(2024, 2, 29), day(2024, 6, 8)},
		"between 2 and 5 June, 2024":                               {day(2024, 6, 4), day(2024, 6, 13)},
		"from 2020 until 2022, how did my savings grow?":           {day(2019, 12, 31), day(2023, 1, 8)},
		"between 10 May 2024 and 1 May 2024":                       {day(2024, 5, 9), day(2024, 5, 18)},
	} {
		since, until, ok := rankDateWindow(q)
		if assert.True(t, ok, q) {
			assert.Equal(t, want[0], since, q)
			assert.Equal(t, want[1], until, q)
		}
	}
	for _, q := range []string{"What did we discuss last week?", "in June", "my 401k balance"} {
		_, _, ok := rankDateWindow(q)
		assert.False(t, ok, q)
	}
}

func TestRankQueryText(t *testing.T) {
	assert.Equal(t, "Melanie destress", rankQueryText("What does Melanie do to destress?"))
	assert.Equal(t, "what is it?", rankQueryText("what is it?"), "a query of stopwords only is kept")
}

func TestRankScore(t *testing.T) {
	at := time.Date(2024, 3, 1, 0, 0, 0, 0, time.UTC)
	doc := func(id, content string, ts time.Time) *store.Interaction {
		return &store.Interaction{ID: id, Content: content, Timestamp: ts}
	}
	// "repeat" has the best BM25 by repeating one word; "all" holds every
	// query term and wins on coverage.
	cands := []*rankCandidate{
		{doc: doc("repeat", "user: roth roth roth roth", at), text: 10},
		{doc: doc("all", "user: my roth ira rollover", at), text: 8},
		{doc: doc("none", "user: the weather", at)},
	}
	rankScore("roth ira rollover", cands)
	assert.Equal(t, []string{"all", "repeat", "none"}, ids(cands))

	// A document in the window the query's date names comes first; equal
	// scores order by time, newest first.
	cands = []*rankCandidate{
		{doc: doc("old", "user: taxes", at.AddDate(-1, 0, 0)), text: 5},
		{doc: doc("new", "user: taxes", at), text: 5},
		{doc: doc("dated", "user: taxes", at.AddDate(0, -6, 0)), text: 4, inWindow: true},
	}
	rankScore("taxes", cands)
	assert.Equal(t, []string{"dated", "new", "old"}, ids(cands))

	// The nearest vector match lifts a weaker text match above a stronger one.
	cands = []*rankCandidate{
		{doc: doc("text", "user: pension", at), text: 5},
		{doc: doc("vector", "user: my pension and retirement plan at work", at), relevance: 1, text: 4},
	}
	rankScore("pension", cands)
	assert.Equal(t, []string{"vector", "text"}, ids(cands))
}

func TestRankCoverageTerms(t *testing.T) {
	at := time.Date(2024, 3, 1, 0, 0, 0, 0, time.UTC)
	cand := func(id, content string, text float64) *rankCandidate {
		return &rankCandidate{doc: &store.Interaction{ID: id, Content: content, Timestamp: at}, text: text}
	}
	for _, tc := range []struct {
		name, query string
		cands       []*rankCandidate
		want        []string
	}{{
		// "many" asks for a count: the document that merely says "many"
		// no longer out-covers the one with the better text match.
		name:  "asking word",
		query: "How many turtles does Nate have?",
		cands: []*rankCandidate{
			cand("says-many", "Nate: so many things to do, and the turtles", 5),
			cand("answer", "Nate: I have three turtles now", 6),
			cand("other", "Nate: hello", 1),
		},
		want: []string{"answer", "says-many", "other"},
	}, {
		// The question's "did win" meets the conversation's "won".
		name:  "irregular past",
		query: "When did Nate win a tournament?",
		cands: []*rankCandidate{
			cand("lost", "Nate: the tournament was rough and I lost again", 6),
			cand("won", "Nate: I won the regional tournament!", 5),
			cand("other", "Nate: hello", 1),
		},
		want: []string{"won", "lost", "other"},
	}, {
		// A word that only looks like an asking word stays a term.
		name:  "not an asking phrase",
		query: "What did Nate say about the long drive?",
		cands: []*rankCandidate{
			cand("drive", "Nate: the drive home was fine", 5.5),
			cand("long-drive", "Nate: such a long drive yesterday", 5),
			cand("other", "Nate: hello", 1),
		},
		want: []string{"long-drive", "drive", "other"},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			rankScore(tc.query, tc.cands)
			assert.Equal(t, tc.want, ids(tc.cands))
		})
	}
}

func TestRankCoverageQuery(t *testing.T) {
	for q, want := range map[string]string{
		"How many turtles does Nate have?":        "How turtles does Nate have?",
		"how long has she had them":               "how has she had them",
		"What kind of art does Caroline make?":    "What of art does Caroline make?",
		"In what ways is Caroline participating?": "In what is Caroline participating?",
		"Which types of pottery have they made?":  "Which of pottery have they made?",
		"What did Nate say about the long drive?": "What did Nate say about the long drive?",
		"How did the kind stranger help?":         "How did the kind stranger help?",
	} {
		assert.Equal(t, want, rankCoverageQuery(q), q)
	}
}

func ids(cands []*rankCandidate) []string {
	var out []string
	for _, c := range cands {
		out = append(out, c.doc.ID)
	}
	return out
}
