package prompts

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"unicode"
)

// The answer_judge prompt's labels.
const (
	LabelCorrect = "CORRECT"
	LabelWrong   = "WRONG"
)

// JudgeData is what the answer_judge template sees.
type JudgeData struct {
	// Question, GoldAnswer and Response are the <question>,
	// <gold_answer> and <response> blocks.
	Question, GoldAnswer, Response string
}

func judgeData(question, gold, response string) JudgeData {
	return JudgeData{
		Question:   Fence(BlockQuestion, question),
		GoldAnswer: Fence(BlockGoldAnswer, gold),
		Response:   Fence(BlockResponse, response),
	}
}

// AnswerJudge renders the prompt that grades response, an answer to
// question, against the reference answer gold as CORRECT or WRONG: the J
// metric of the mem0 paper (arXiv 2504.19413), generous about wording and
// strict about facts. It asks for a JSON object; the answer parses with
// ParseJudgement. Every argument must hold text: an empty response is
// wrong without asking a model.
func (s *Set) AnswerJudge(question, gold, response string) (Rendered, error) {
	for _, f := range []struct{ name, v string }{{"question", question}, {"gold answer", gold}, {"response", response}} {
		if strings.TrimSpace(f.v) == "" {
			return Rendered{}, fmt.Errorf("prompts: answer_judge: empty %s", f.name)
		}
	}
	return s.render(NameAnswerJudge, judgeData(question, gold, response))
}

// AnswerJudge renders the answer_judge prompt of the default set.
func AnswerJudge(question, gold, response string) (Rendered, error) {
	return Default().AnswerJudge(question, gold, response)
}

// Judgement is the answer to the answer_judge prompt.
type Judgement struct {
	// Label is LabelCorrect or LabelWrong; Correct is Label == LabelCorrect.
	Label   string
	Correct bool
	// Reasoning is the judge's explanation, cleaned, or "".
	Reasoning string
}

// ParseJudgement reads the model's answer to the answer_judge prompt.
//
// The first JSON object with a "label" field (or "verdict", "judgement",
// "judgment", "grade", "result"; keys in any case, wherever the object
// sits, wrapped once or not) gives the label: CORRECT, or WRONG or
// INCORRECT, in any case, with surrounding quotes, spaces and punctuation
// ignored. "reasoning" (or "reason", "explanation") gives the reasoning.
// Without such an object the text is read: it must name exactly one of
// the two verdicts as a word — "correct", or "wrong" or "incorrect", any
// case — where "correct" after "not", "isn't" or "never" counts as wrong.
//
// It fails, wrapping ErrUnusable, when no label can be read, when the
// label is something else, or when the text names both verdicts.
func ParseJudgement(out []byte) (Judgement, error) {
	if len(out) > MaxOutputBytes {
		return Judgement{}, fmt.Errorf("answer judgement: %w: output of %d bytes exceeds %d", ErrUnusable, len(out), MaxOutputBytes)
	}
	labelKeys := []string{"label", "verdict", "judgement", "judgment", "grade", "result"}
	obj, objErr := findObject(out, labelKeys...)
	if objErr == nil {
		obj = unwrapLabel(obj, labelKeys)
		raw := stringField(obj, labelKeys...)
		label, ok := normLabel(raw)
		if !ok {
			return Judgement{}, fmt.Errorf("answer judgement: %w: label %q is neither CORRECT nor WRONG", ErrUnusable, clip(raw, 40))
		}
		return Judgement{Label: label, Correct: label == LabelCorrect,
			Reasoning: cleanSummary(stringField(obj, "reasoning", "reason", "explanation"))}, nil
	}
	text := strings.ToValidUTF8(string(stripReasoning(out)), "\uFFFD")
	correct, wrong := verdictWords(text)
	switch {
	case correct && !wrong:
		return Judgement{Label: LabelCorrect, Correct: true}, nil
	case wrong && !correct:
		return Judgement{Label: LabelWrong}, nil
	case correct && wrong:
		return Judgement{}, fmt.Errorf("answer judgement: %w: the text names both verdicts", ErrUnusable)
	}
	return Judgement{}, fmt.Errorf("answer judgement: %w: no label", errors.Join(ErrUnusable, objErr))
}

// unwrapLabel returns the object held by obj's label field when that
// field is an object ({"judgement": {"label": …}}), else obj.
func unwrapLabel(obj map[string]json.RawMessage, keys []string) map[string]json.RawMessage {
	for _, k := range keys {
		var inner map[string]json.RawMessage
		if raw, ok := obj[k]; ok && json.Unmarshal(raw, &inner) == nil && inner != nil {
			if inner = normKeys(inner); hasAny(inner, keys) {
				return inner
			}
		}
	}
	return obj
}

// normLabel reads a label value.
func normLabel(s string) (string, bool) {
	s = strings.ToUpper(strings.TrimFunc(s, func(r rune) bool { return !unicode.IsLetter(r) }))
	switch s {
	case LabelCorrect:
		return LabelCorrect, true
	case LabelWrong, "INCORRECT":
		return LabelWrong, true
	}
	return "", false
}

// verdictWords reports whether text names the CORRECT verdict and whether
// it names the WRONG one, as words.
func verdictWords(text string) (correct, wrong bool) {
	words := strings.FieldsFunc(strings.ToLower(text), func(r rune) bool {
		return !unicode.IsLetter(r) && r != '\'' && r != '’'
	})
	for i, w := range words {
		switch w {
		case "correct":
			if i > 0 && negation(words[i-1]) {
				wrong = true
			} else {
				correct = true
			}
		case "wrong", "incorrect":
			wrong = true
		}
	}
	return correct, wrong
}

func negation(w string) bool {
	switch strings.ReplaceAll(w, "’", "'") {
	case "not", "isn't", "never", "isnt":
		return true
	}
	return false
}
