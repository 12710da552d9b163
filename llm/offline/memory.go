package offline

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"regexp"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/agentmemory/agentmemory/agent"
	"github.com/agentmemory/agentmemory/internal/lexis"
	"github.com/agentmemory/agentmemory/prompts"
)

// Limits of the memory prompt handlers (see the package documentation).
const (
	maxSummarySentences = 2
	maxSentenceWords    = 40
	maxOfflineEntities  = 10
	maxNewSentences     = 3
)

// memoryHandlers returns the default handlers for the memory prompts.
func memoryHandlers() map[string]Handler {
	return map[string]Handler{
		prompts.NameInteractionMetadata: handleInteractionMetadata,
		prompts.NameCumulativeSummary:   handleCumulativeSummary,
		prompts.NameSessionSummary:      handleSessionSummary,
		prompts.NameFactRetrieval:       handleFactRetrieval,
		prompts.NameQueryRewrite:        handleQueryRewrite,
		prompts.NameSessionReflection:   handleSessionReflection,
		prompts.NameProfileSynthesis:    handleProfileSynthesis,
		prompts.NameReconcile:           handleReconcile,
		prompts.NameAnswerJudge:         handleAnswerJudge,
	}
}

// dataBlocks returns the blocks of the last user message of req and checks
// that the wanted ones are present.
func dataBlocks(req *agent.ChatRequest, wanted ...string) (map[string]string, error) {
	for i := len(req.Messages) - 1; i >= 0; i-- {
		if req.Messages[i].Role != agent.RoleUser {
			continue
		}
		blocks := prompts.Blocks(req.Messages[i].Text)
		for _, w := range wanted {
			if _, ok := blocks[w]; !ok {
				return nil, fmt.Errorf("user message has no <%s> data block", w)
			}
		}
		return blocks, nil
	}
	return nil, fmt.Errorf("no user message with the data blocks")
}

func handleInteractionMetadata(ctx context.Context, req *agent.ChatRequest) (*agent.ChatResponse, error) {
	blocks, err := dataBlocks(req, prompts.BlockConversation)
	if err != nil {
		return nil, err
	}
	sents := turnSentences(prompts.ParseTurns(blocks[prompts.BlockConversation]))
	doc := analyse(sents)
	summary := joinSentences(doc.summarySentences(maxSummarySentences))
	if summary == "" { // no sentence has a word: echo the start of the text
		summary = capWords(collapse(blocks[prompts.BlockConversation]), maxSentenceWords)
	}
	m := prompts.Metadata{
		Summary:         summary,
		MentionedTopics: doc.topics(prompts.MaxTopics),
		Entities:        doc.entities(maxOfflineEntities),
	}
	return jsonResponse(req, m)
}

func handleCumulativeSummary(ctx context.Context, req *agent.ChatRequest) (*agent.ChatResponse, error) {
	blocks, err := dataBlocks(req, prompts.BlockPreviousSummary, prompts.BlockNewTurns)
	if err != nil {
		return nil, err
	}
	summary := fold(blocks[prompts.BlockPreviousSummary], prompts.ParseTurns(blocks[prompts.BlockNewTurns]), prompts.CumulativeSummaryWords)
	return &agent.ChatResponse{
		Message:      agent.AssistantText(summary),
		Usage:        usage(req, countWords(summary)),
		FinishReason: "stop",
		Model:        ModelName,
	}, nil
}

func handleSessionSummary(ctx context.Context, req *agent.ChatRequest) (*agent.ChatResponse, error) {
	blocks, err := dataBlocks(req, prompts.BlockSummarySoFar, prompts.BlockLastTurns)
	if err != nil {
		return nil, err
	}
	prev := blocks[prompts.BlockSummarySoFar]
	turns := prompts.ParseTurns(blocks[prompts.BlockLastTurns])
	all := append(textSentences(prev), turnSentences(turns)...)
	r := prompts.SessionSummaryResult{
		Summary:   fold(prev, turns, prompts.SessionSummaryWords),
		KeyTopics: analyse(all).topics(prompts.MaxTopics),
	}
	return jsonResponse(req, r)
}

func jsonResponse(req *agent.ChatRequest, v any) (*agent.ChatResponse, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, fmt.Errorf("encode answer: %w", err)
	}
	text := strings.TrimSpace(buf.String())
	return &agent.ChatResponse{
		Message:      agent.AssistantText(text),
		Usage:        usage(req, countWords(text)),
		FinishReason: "stop",
		Model:        ModelName,
	}, nil
}

// fold composes a running summary: prev followed by the most informative
// new sentences, within budget words.
func fold(prev string, turns []prompts.Turn, budget int) string {
	prevSents := textSentences(prev)
	newSents := turnSentences(turns)
	doc := analyse(append(slices.Clone(prevSents), newSents...))
	nPrev := len(prevSents)

	covered := make(map[string]bool)
	for _, s := range doc.sents[:nPrev] {
		for _, t := range s.terms {
			covered[t] = true
		}
	}
	// New sentences first: up to maxNewSentences, within 3/5 of the budget.
	var chosenNew []int
	used := 0
	for _, i := range doc.byScore(nPrev, len(doc.sents)) {
		s := doc.sents[i]
		if len(chosenNew) == maxNewSentences || s.score <= 0 || redundant(s.terms, covered) || isQuestion(s.text) {
			continue
		}
		if used > 0 && used+s.words > budget*3/5 {
			continue
		}
		chosenNew = append(chosenNew, i)
		used += min(s.words, maxSentenceWords)
		for _, t := range s.terms {
			covered[t] = true
		}
	}
	// Then as much of the previous summary as fits, its most informative
	// sentences first.
	var chosenPrev []int
	for _, i := range doc.byScore(0, nPrev) {
		w := min(doc.sents[i].words, maxSentenceWords)
		if used+w > budget {
			continue
		}
		chosenPrev = append(chosenPrev, i)
		used += w
	}
	chosen := append(chosenPrev, chosenNew...)
	slices.Sort(chosen)
	if len(chosen) == 0 && len(doc.sents) > 0 {
		chosen = []int{nPrev % len(doc.sents)} // nothing informative: keep the first new sentence
	}
	parts := make([]string, len(chosen))
	for k, i := range chosen {
		parts[k] = capWords(doc.sents[i].text, maxSentenceWords)
	}
	out := capWords(joinSentences(parts), budget)
	if out == "" { // no sentence has a word: keep what there is
		var texts []string
		for _, t := range turns {
			texts = append(texts, t.Text)
		}
		out = capWords(collapse(prev+" "+strings.Join(texts, " ")), budget)
	}
	return out
}

// isQuestion reports whether a sentence asks rather than states: a summary
// keeps what was said, and a question quoted alone reads as if the
// summary were asking it.
func isQuestion(s string) bool {
	return strings.HasSuffix(strings.TrimRight(s, "\"'”’)] "), "?")
}

// redundant reports whether at least 80% of terms are already covered.
func redundant(terms []string, covered map[string]bool) bool {
	if len(terms) == 0 {
		return true
	}
	n := 0
	for _, t := range terms {
		if covered[t] {
			n++
		}
	}
	return n*5 >= len(terms)*4
}

// sentence is one sentence of the analysed text.
type sentence struct {
	text  string
	toks  []token
	terms []string // distinct content stems
	words int
	score float64
	ents  []entity
}

// token is one word of a sentence.
type token struct {
	surface    string // as written
	norm       string // lexis-normalised
	stem       string // stemmed norm
	start, end int    // byte span in the sentence
	content    bool   // not a stopword or filler
}

// doc is an analysed list of sentences.
type doc struct {
	sents []sentence
	freq  map[string]int // content stem → occurrences
}

func textSentences(text string) []string {
	var out []string
	for _, s := range lexis.Sentences(text) {
		out = append(out, collapse(s))
	}
	return out
}

// turnSentences returns the sentences of the turns, leaving out this
// client's own composed answers (see ownAnswer).
func turnSentences(turns []prompts.Turn) []string {
	var out []string
	for _, t := range turns {
		if t.Role == "assistant" && ownAnswer(t.Text) {
			continue
		}
		out = append(out, textSentences(t.Text)...)
	}
	return out
}

// analyse tokenises and scores sentences.
func analyse(texts []string) *doc {
	d := &doc{freq: make(map[string]int)}
	for _, text := range texts {
		s := sentence{text: text, toks: tokenize(text), words: countWords(text)}
		for _, tk := range s.toks {
			if tk.content {
				d.freq[tk.stem]++
				if !slices.Contains(s.terms, tk.stem) {
					s.terms = append(s.terms, tk.stem)
				}
			}
		}
		s.ents = findEntities(text, s.toks)
		d.sents = append(d.sents, s)
	}
	for i := range d.sents {
		s := &d.sents[i]
		if len(s.terms) == 0 {
			continue
		}
		sum := 0
		for _, t := range s.terms {
			sum += d.freq[t]
		}
		s.score = float64(sum)/math.Sqrt(float64(len(s.terms))) + float64(len(s.ents))
	}
	return d
}

// byScore returns the indexes lo..hi-1 by decreasing score, ties in order.
func (d *doc) byScore(lo, hi int) []int {
	idx := make([]int, 0, hi-lo)
	for i := lo; i < hi; i++ {
		idx = append(idx, i)
	}
	slices.SortStableFunc(idx, func(a, b int) int {
		switch sa, sb := d.sents[a].score, d.sents[b].score; {
		case sa > sb:
			return -1
		case sa < sb:
			return 1
		}
		return 0
	})
	return idx
}

// summarySentences returns the n most informative sentences, in order.
func (d *doc) summarySentences(n int) []string {
	var idx []int
	for _, i := range d.byScore(0, len(d.sents)) {
		if len(idx) == n || d.sents[i].score <= 0 {
			break
		}
		idx = append(idx, i)
	}
	if len(idx) == 0 && len(d.sents) > 0 {
		idx = []int{0}
	}
	slices.Sort(idx)
	out := make([]string, len(idx))
	for k, i := range idx {
		out[k] = capWords(d.sents[i].text, maxSentenceWords)
	}
	return out
}

// topic is a candidate topic: a content stem or a pair of adjacent ones.
type topic struct {
	key     string // stem, "stem\x01stem" or "\x00product"
	count   int
	first   int
	forms   map[string]int
	formSeq []string // forms in order of first use
}

// topics returns up to n topics: the most frequent content stems (ties by
// first appearance), each shown in its most frequent written form. A pair
// of adjacent content words seen at least twice, as often as one of its
// words, replaces that word ("Roth IRA" for "Roth").
func (d *doc) topics(n int) []string {
	cands := map[string]*topic{}
	var order []string
	add := func(key, form string, pos int) {
		c := cands[key]
		if c == nil {
			c = &topic{key: key, first: pos, forms: map[string]int{}}
			cands[key] = c
			order = append(order, key)
		}
		c.count++
		if c.forms[form] == 0 {
			c.formSeq = append(c.formSeq, form)
		}
		c.forms[form]++
	}
	pos := 0
	for _, s := range d.sents {
		inProduct := func(tk token) bool {
			for _, e := range s.ents {
				if e.product && tk.start < e.end && e.start < tk.end {
					return true
				}
			}
			return false
		}
		for _, e := range s.ents {
			if e.product {
				add("\x00"+strings.ToLower(e.text), e.text, pos)
			}
		}
		for j, tk := range s.toks {
			pos++
			if !tk.content || !topicWord(tk.norm) || inProduct(tk) {
				continue
			}
			add(tk.stem, topicForm(tk, j == 0), pos)
			if j+1 < len(s.toks) {
				nx := s.toks[j+1]
				if nx.content && topicWord(nx.norm) && nx.stem != tk.stem && !inProduct(nx) && onlySpaceBetween(s.text, tk, nx) {
					add(tk.stem+"\x01"+nx.stem, topicForm(tk, j == 0)+" "+topicForm(nx, false), pos)
				}
			}
		}
	}
	absorbed := map[string]bool{}
	var list []*topic
	for _, key := range order {
		c := cands[key]
		a, b, phrase := strings.Cut(key, "\x01")
		if !phrase {
			continue
		}
		if c.count < 2 || (cands[a].count != c.count && cands[b].count != c.count) {
			continue
		}
		list = append(list, c)
		for _, w := range []string{a, b} {
			if cands[w].count == c.count {
				absorbed[w] = true
			}
		}
	}
	for _, key := range order {
		if !strings.Contains(key, "\x01") && !absorbed[key] {
			list = append(list, cands[key])
		}
	}
	slices.SortStableFunc(list, func(a, b *topic) int {
		if a.count != b.count {
			return b.count - a.count
		}
		return a.first - b.first
	})
	out := []string{}
	seen := map[string]bool{}
	for _, c := range list {
		if len(out) == n {
			break
		}
		best := c.formSeq[0]
		for _, f := range c.formSeq {
			if c.forms[f] > c.forms[best] {
				best = f
			}
		}
		if k := strings.ToLower(best); !seen[k] && utf8.RuneCountInString(best) <= prompts.MaxItemRunes {
			seen[k] = true
			out = append(out, best)
		}
	}
	return out
}

// topicWord reports whether a normalised content word can be a topic: not
// a bare number and at least three characters.
func topicWord(norm string) bool {
	if utf8.RuneCountInString(norm) < 3 {
		return false
	}
	return strings.IndexFunc(norm, unicode.IsLetter) >= 0
}

// topicForm is how a topic word is shown: as written, except that a word
// capitalised only because it starts a sentence is lower-cased.
// A possessive "'s" is dropped.
func topicForm(tk token, sentenceStart bool) string {
	w := tk.surface
	for _, suf := range []string{"'s", "’s", "'S", "’S"} {
		w = strings.TrimSuffix(w, suf)
	}
	if isAllCaps(w) || (isTitle(w) && !sentenceStart) {
		return w
	}
	return strings.ToLower(w)
}

func onlySpaceBetween(text string, a, b token) bool {
	return strings.TrimSpace(text[a.end:b.start]) == ""
}

// entities returns up to n entities, by first appearance, deduplicated
// case-insensitively.
func (d *doc) entities(n int) []string {
	out := []string{}
	seen := map[string]bool{}
	for _, s := range d.sents {
		for _, e := range s.ents {
			k := strings.ToLower(e.text)
			if seen[k] || utf8.RuneCountInString(e.text) > prompts.MaxItemRunes {
				continue
			}
			seen[k] = true
			out = append(out, e.text)
			if len(out) == n {
				return out
			}
		}
	}
	return out
}

// tokenize splits a sentence into tokens.
func tokenize(text string) []token {
	var out []token
	var buf []byte
	for i := 0; ; {
		st, e := lexis.NextWord(text, i)
		if st == e {
			return out
		}
		i = e
		buf = lexis.AppendNorm(buf[:0], text[st:e])
		if len(buf) == 0 {
			continue
		}
		norm := string(buf)
		stop := lexis.IsStopwordBytes(buf)
		stem := string(lexis.Stem(buf))
		out = append(out, token{
			surface: text[st:e], norm: norm, stem: stem, start: st, end: e,
			content: !stop && !isFiller(norm),
		})
	}
}

// isFiller reports conversational words that carry no topic.
func isFiller(w string) bool {
	if isSocial(w) {
		return true
	}
	switch w {
	case "want", "wants", "wanted", "think", "thinks", "know", "like", "likes", "get", "got", "make", "makes",
		"need", "needs", "let", "lets", "tell", "say", "said", "go", "going", "take", "sounds", "sound",
		"really", "maybe", "probably", "still", "already", "now", "well", "right", "much", "many", "lot",
		"lots", "thing", "things", "something", "anything", "way", "one", "also", "old", "new", "sense",
		"yes", "no", "can", "could", "would", "should", "will", "shall", "might", "must", "us",
		"sir", "madam", "fine", "perfect", "awesome", "welcome", "glad", "happy", "help",
		"user", "users", "assistant", "ask", "asks", "asked", "discuss", "discussed", "mention", "mentioned",
		"explain", "explained", "agree", "agreed", "agrees", "suggest", "suggested",
		"last", "next", "two", "three", "four", "five", "ten", "hundred":
		return true
	}
	return isInterjection(w)
}

// isInterjection reports exclamations and stock reactions that carry no
// topic and start no name ("Wow", "Oh", "Congrats").
func isInterjection(w string) bool {
	switch w {
	case "wow", "oh", "ooh", "ah", "aw", "aww", "awww", "whoa", "yay", "omg", "haha", "hahaha", "lol", "hmm", "um", "uh",
		"congrats", "congratulations", "sorry", "please", "dear", "hiya", "heya", "yo", "nice", "amazing", "awesome":
		return true
	}
	return false
}

func isTitle(s string) bool {
	r, n := utf8.DecodeRuneInString(s)
	if !unicode.IsUpper(r) {
		return false
	}
	for _, r := range s[n:] {
		if unicode.IsUpper(r) {
			return false
		}
	}
	return true
}

func isAllCaps(s string) bool {
	letters := 0
	for _, r := range s {
		if unicode.IsLower(r) {
			return false
		}
		if unicode.IsUpper(r) {
			letters++
		}
	}
	return letters >= 2
}

// capWords cuts s to n words, marking a cut with "…".
func capWords(s string, n int) string {
	if cut, ok := cutWords(s, n); ok {
		return cut
	}
	return s
}

func joinSentences(parts []string) string { return strings.Join(parts, " ") }

// entity is a span of a sentence recognised as an entity.
type entity struct {
	text       string
	start, end int
	product    bool // an account or product name, also a topic
}

// asWrittenLower names an entity by its lower-cased text.
const asWrittenLower = "\x00lower"

// Entity patterns, tried in this order; an earlier match claims its span.
var (
	productPatterns = []struct {
		re   *regexp.Regexp
		name string
	}{
		{regexp.MustCompile(`(?i)\broth\s+401\s?\(?k\)?`), "Roth 401k"},
		{regexp.MustCompile(`(?i)\b401\s?\(?k\)?`), "401k"},
		{regexp.MustCompile(`(?i)\b403\s?\(?b\)?`), "403b"},
		{regexp.MustCompile(`(?i)\b457\s?\(?b\)?`), "457b"},
		{regexp.MustCompile(`(?i)\broth\s+iras?\b`), "Roth IRA"},
		{regexp.MustCompile(`(?i)\bsep[\s-]iras?\b`), "SEP IRA"},
		{regexp.MustCompile(`(?i)\btraditional\s+iras?\b`), "traditional IRA"},
		{regexp.MustCompile(`(?i)\brollover\s+iras?\b`), "rollover IRA"},
		{regexp.MustCompile(`\bIRAs?\b`), "IRA"},
		{regexp.MustCompile(`\bHSAs?\b`), "HSA"},
		{regexp.MustCompile(`(?i)\b529\s+plans?\b`), "529 plan"},
		{regexp.MustCompile(`\bETFs?\b`), "ETF"},
		{regexp.MustCompile(`(?i)\bindex\s+funds?\b`), "index fund"},
		{regexp.MustCompile(`(?i)\bmutual\s+funds?\b`), "mutual fund"},
		{regexp.MustCompile(`(?i)\btarget[\s-]date\s+funds?\b`), "target-date fund"},
		{regexp.MustCompile(`(?i)\bemergency\s+funds?\b`), "emergency fund"},
		{regexp.MustCompile(`(?i)\b(?:brokerage|savings|checking|retirement)\s+accounts?\b`), asWrittenLower},
		{regexp.MustCompile(`(?i)\bannuit(?:y|ies)\b`), "annuity"},
		{regexp.MustCompile(`(?i)\bsocial\s+security\b`), "Social Security"},
		{regexp.MustCompile(`(?i)\bS&P\s?500\b`), "S&P 500"},
		{regexp.MustCompile(`(?i)\bmortgages?\b`), "mortgage"},
	}
	moneyRE  = regexp.MustCompile(`(?i)(?:[$€£]|\bUSD\s?|\bEUR\s?)\d[\d,]*(?:\.\d+)?(?:\s?(?:k|m|bn|million|billion|thousand)\b)?|\b\d[\d,]*(?:\.\d+)?(?:\s?%|\s(?:percent|dollars|euros|pounds)\b)`)
	unitRE   = regexp.MustCompile(`(?i)\b\d[\d,]*(?:\.\d+)?[\s-](?:years?|yrs?|months?|weeks?|days?|hours?|shares?)(?:\s+old)?\b|\bage\s\d{1,3}\b`)
	dateRE   = regexp.MustCompile(`\b(?:Jan(?:uary)?|Feb(?:ruary)?|Mar(?:ch)?|Apr(?:il)?|May|June?|July?|Aug(?:ust)?|Sep(?:t(?:ember)?)?|Oct(?:ober)?|Nov(?:ember)?|Dec(?:ember)?)\.?\s\d{1,2}(?:st|nd|rd|th)?(?:,?\s\d{4})?\b|\b(?:19|20)\d{2}\b`)
	joinName = map[string]bool{"of": true, "and": true, "&": true, "de": true, "van": true, "von": true}
)

// findEntities returns the entities of one sentence, by position.
func findEntities(text string, toks []token) []entity {
	var ents []entity
	claimed := func(st, e int) bool {
		for _, x := range ents {
			if st < x.end && x.start < e {
				return true
			}
		}
		return false
	}
	// addAll adds the matches of re, named name, or as written (whitespace
	// collapsed) when name is empty, lower-cased when name is asWrittenLower.
	addAll := func(re *regexp.Regexp, name string) {
		for _, m := range re.FindAllStringIndex(text, -1) {
			if claimed(m[0], m[1]) {
				continue
			}
			t := name
			switch name {
			case "":
				t = collapse(text[m[0]:m[1]])
			case asWrittenLower:
				t = strings.ToLower(collapse(text[m[0]:m[1]]))
			}
			ents = append(ents, entity{text: t, start: m[0], end: m[1]})
		}
	}
	for _, p := range productPatterns {
		addAll(p.re, p.name)
	}
	for i := range ents {
		ents[i].product = true
	}
	addAll(moneyRE, "")
	addAll(unitRE, "")
	addAll(dateRE, "")
	ents = append(ents, names(text, toks, claimed)...)
	slices.SortStableFunc(ents, func(a, b entity) int { return a.start - b.start })
	return ents
}

// names finds runs of capitalised words ("Fidelity", "Bank of America").
// Leading stopwords, greetings and interjections ("The", "My", "Hey",
// "Wow") are dropped from a run; a run that starts the sentence counts only
// with two words or more before they are dropped ("Hey Sarah" gives
// "Sarah").
func names(text string, toks []token, claimed func(int, int) bool) []entity {
	var out []entity
	for i := 0; i < len(toks); {
		if !nameWord(toks[i]) || claimed(toks[i].start, toks[i].end) {
			i++
			continue
		}
		j := i + 1
		for j < len(toks) {
			if claimed(toks[j].start, toks[j].end) || !onlySpaceBetween(text, toks[j-1], toks[j]) {
				break
			}
			if nameWord(toks[j]) {
				j++
				continue
			}
			if joinName[toks[j].norm] && j+1 < len(toks) && nameWord(toks[j+1]) && onlySpaceBetween(text, toks[j], toks[j+1]) {
				j += 2
				continue
			}
			break
		}
		run := toks[i:j]
		atStart := i == 0
		for len(run) > 0 && (lexis.IsStopword(run[0].norm) || isSocial(run[0].norm) || isInterjection(run[0].norm)) {
			run, atStart = run[1:], false
		}
		if len(run) > 0 && !(atStart && len(run) < 2) {
			out = append(out, entity{text: text[run[0].start:run[len(run)-1].end], start: run[0].start, end: run[len(run)-1].end})
		}
		i = j
	}
	return out
}

// nameWord reports a capitalised word that may be part of a name.
func nameWord(tk token) bool {
	r, _ := utf8.DecodeRuneInString(tk.surface)
	if !unicode.IsUpper(r) {
		return false
	}
	switch tk.norm {
	case "i", "im", "ive", "id", "ill", "ok", "okay":
		return false
	}
	return true
}
