package offline

import (
	"testing"

	"github.com/agentmemory/agentmemory/prompts"
)

func TestAnswerJudgeByWords(t *testing.T) {
	c := newClient(t, Config{})
	for _, tc := range []struct {
		gold, response string
		correct        bool
	}{
		{"Lisbon", "She lives in Lisbon now.", true},
		{"a greyhound; a frisbee", "Maya adopted a greyhound, which learned to fetch a frisbee.", true},
		{"a greyhound; a frisbee", "Maya adopted a greyhound.", false},
		{"Lisbon", "I don't know.", false},
		{"2 March 2023", "On 2 March 2023.", true},
		{"yes", "Yes, he would.", true},
		{"yes", "No.", false},
	} {
		r, err := prompts.AnswerJudge("Q?", tc.gold, tc.response)
		out := run(t, c, r, err)
		j, err := prompts.ParseJudgement([]byte(out))
		if err != nil {
			t.Fatalf("%q: %v", out, err)
		}
		if j.Correct != tc.correct {
			t.Errorf("gold %q, response %q: %s (%s)", tc.gold, tc.response, j.Label, j.Reasoning)
		}
	}
}
