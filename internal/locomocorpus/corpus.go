// Package locomocorpus builds search benchmark corpora from LoCoMo
// conversations: documents of consecutive messages, replicated with
// variations to any number of documents, and the dataset's questions as
// queries.
//
// The data are not part of this repository: the directory of LoCoMo JSON
// files is named by the environment variable in EnvDir, and benchmarks
// skip when it is unset.
package locomocorpus

import (
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"strings"
)

// EnvDir is the environment variable naming the directory of LoCoMo JSON
// files (one conversation per file, as in the dataset's release).
const EnvDir = "AGENTMEMORY_LOCOMO_DIR"

// ErrNoData is returned by FromEnv when EnvDir is unset.
var ErrNoData = errors.New("locomocorpus: " + EnvDir + " is not set (a directory of LoCoMo JSON files)")

// DefaultPerDocument is the number of messages in a document, as in the
// LoCoMo evaluation (10 turns per interaction).
const DefaultPerDocument = 10

// Corpus is the messages of LoCoMo conversations and their questions.
type Corpus struct {
	// Conversations holds each conversation's messages in order, as
	// "Speaker: text" (an image's caption appended as "[image: …]").
	Conversations [][]string
	// Questions are the questions of categories 1–4, in file order.
	Questions []string
}

// FromEnv loads the corpus from the directory named by EnvDir, or returns
// ErrNoData when it is unset.
func FromEnv() (*Corpus, error) {
	dir := os.Getenv(EnvDir)
	if dir == "" {
		return nil, ErrNoData
	}
	return Load(dir)
}

type message struct {
	Speaker     string `json:"speaker"`
	Text        string `json:"text"`
	BlipCaption string `json:"blip_caption"`
}

type qa struct {
	Question string `json:"question"`
	Category int    `json:"category"`
}

// Load reads every *.json file of dir, in name order.
func Load(dir string) (*Corpus, error) {
	files, err := ReadDir(dir)
	if err != nil {
		return nil, err
	}
	c := &Corpus{}
	for _, f := range files {
		p := f.Path
		var msgs []string
		for _, sk := range f.Sessions() {
			var turns []message
			if err := json.Unmarshal(f.Conversation[sk.Key], &turns); err != nil {
				return nil, fmt.Errorf("locomocorpus: %s: %s: %w", p, sk.Key, err)
			}
			for _, t := range turns {
				text := t.Speaker + ": " + t.Text
				if t.BlipCaption != "" {
					text += " [image: " + t.BlipCaption + "]"
				}
				msgs = append(msgs, text)
			}
		}
		if len(msgs) == 0 {
			return nil, fmt.Errorf("locomocorpus: %s: no session messages", p)
		}
		c.Conversations = append(c.Conversations, msgs)
		var qs []qa
		if q, ok := f.Fields["qa"]; ok {
			if err := json.Unmarshal(q, &qs); err != nil {
				return nil, fmt.Errorf("locomocorpus: %s: qa: %w", p, err)
			}
		}
		for _, q := range qs {
			if q.Category >= 1 && q.Category <= 4 && strings.TrimSpace(q.Question) != "" {
				c.Questions = append(c.Questions, q.Question)
			}
		}
	}
	if len(c.Questions) == 0 {
		return nil, fmt.Errorf("locomocorpus: no question of categories 1–4 in %s", dir)
	}
	return c, nil
}

// Documents returns n documents of up to perDoc consecutive messages each.
// Replica 0 cuts every conversation into windows of perDoc messages; each
// further replica starts its windows at another offset and leaves out
// about one message in ten (a fixed choice per replica), so that no two
// replicas hold the same documents. first is the replica to start from: two
// users given different first values get different documents. The result
// depends only on the corpus and the arguments.
func (c *Corpus) Documents(n, perDoc, first int) []string {
	if perDoc < 1 {
		perDoc = DefaultPerDocument
	}
	out := make([]string, 0, n)
	for r := first; len(out) < n; r++ {
		rng := rand.New(rand.NewPCG(uint64(r), 0x10c0))
		shift := r % perDoc
		for _, msgs := range c.Conversations {
			for start := -shift; start < len(msgs) && len(out) < n; start += perDoc {
				var parts []string
				for i := max(start, 0); i < min(start+perDoc, len(msgs)); i++ {
					if r > 0 && rng.IntN(10) == 0 {
						continue
					}
					parts = append(parts, msgs[i])
				}
				if len(parts) > 0 {
					out = append(out, strings.Join(parts, "\n"))
				}
			}
		}
	}
	return out
}
