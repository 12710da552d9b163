package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"slices"
	"strconv"
	"time"

	"github.com/agentmemory/agentmemory/retrieval"
	"github.com/agentmemory/agentmemory/tokens"
)

// categoryNames are LoCoMo's question categories 1–4.
var categoryNames = map[int]string{1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop"}

// depths are the k at which recall is always reported.
var depths = []int{5, 10}

// recall is a pair of recall figures at one k.
type recall struct {
	All float64 `json:"recall_all"`
	Any float64 `json:"recall_any"`
}

// figures are the recall figures of a set of questions.
type figures struct {
	Name      string `json:"name,omitempty"`
	Questions int    `json:"questions"`
	// RecallAll and RecallAny are at the -k given.
	RecallAll float64 `json:"recall_all"`
	RecallAny float64 `json:"recall_any"`
	// At holds recall at k = 5, 10 and the -k given, keyed by k.
	At map[string]recall `json:"at"`

	hitsAll, hitsAny map[int]int
}

// miss is a question whose evidence the -k documents do not hold in full.
type miss struct {
	Conversation string   `json:"conversation"`
	Category     int      `json:"category"`
	Question     string   `json:"question"`
	Evidence     []string `json:"evidence"`
	// Found are the TurnIDs of the -k documents, best document first.
	Found []string `json:"found"`
}

// report is what the command prints and writes with -json.
type report struct {
	Model string `json:"model"`
	Turns int    `json:"turns"`
	K     int    `json:"k"`
	// Questions is the number scored: categories 1–4 with evidence.
	Questions int `json:"questions"`
	// SkippedNoEvidence counts category 1–4 questions without evidence.
	SkippedNoEvidence int `json:"skipped_no_evidence"`
	// UnknownEvidence counts the evidence ids of category 1–4 questions
	// that name no turn of their conversation, left out of the scoring.
	UnknownEvidence int                 `json:"unknown_evidence_ids"`
	RecallAll       float64             `json:"recall_all"`
	RecallAny       float64             `json:"recall_any"`
	At              map[string]recall   `json:"at"`
	ByCategory      map[string]*figures `json:"by_category"`
	SearchP50ms     float64             `json:"search_p50_ms"`
	SearchP95ms     float64             `json:"search_p95_ms"`
	// ContextTokens are the tokens of the -k documents' text per question.
	ContextTokensP50  int     `json:"context_tokens_p50"`
	ContextTokensP95  int     `json:"context_tokens_p95"`
	ContextTokensMean float64 `json:"context_tokens_mean"`
	// DocumentsMean is the mean number of documents returned at -k.
	DocumentsMean float64 `json:"documents_mean"`
	// Misses are the questions whose evidence the -k documents do not
	// hold in full, in the order asked: what ranking work reads.
	Misses []miss `json:"misses"`

	all *figures
}

func newFigures(name string) *figures {
	return &figures{Name: name, hitsAll: map[int]int{}, hitsAny: map[int]int{}}
}

func (f *figures) add(k int, all, any bool) {
	if all {
		f.hitsAll[k]++
	}
	if any {
		f.hitsAny[k]++
	}
}

func (f *figures) finish(k int, ks []int) {
	f.At = map[string]recall{}
	for _, d := range ks {
		f.At[strconv.Itoa(d)] = recall{All: ratio(f.hitsAll[d], f.Questions), Any: ratio(f.hitsAny[d], f.Questions)}
	}
	f.RecallAll, f.RecallAny = ratio(f.hitsAll[k], f.Questions), ratio(f.hitsAny[k], f.Questions)
}

func ratio(n, d int) float64 {
	if d == 0 {
		return 0
	}
	return float64(n) / float64(d)
}

// evaluate asks every scored question of convs and measures recall.
func evaluate(ctx context.Context, m *memory, convs []*conversation, k int) (*report, error) {
	ks := slices.Clone(depths)
	if !slices.Contains(ks, k) {
		ks = append(ks, k)
		slices.Sort(ks)
	}
	counter := &tokens.BPE{}
	if err := counter.Load(); err != nil {
		return nil, err
	}
	rep := &report{K: k, ByCategory: map[string]*figures{}, all: newFigures("")}
	for c, name := range categoryNames {
		rep.ByCategory[strconv.Itoa(c)] = newFigures(name)
	}
	var lat []time.Duration
	var toks []int
	docs := 0
	for _, c := range convs {
		user := userOf(c)
		for _, q := range c.qa {
			cat := rep.ByCategory[strconv.Itoa(q.Category)]
			if cat == nil {
				continue // category 5 (adversarial) or unknown
			}
			rep.UnknownEvidence += len(q.unknown)
			if len(q.Evidence) == 0 {
				rep.SkippedNoEvidence++
				continue
			}
			rep.all.Questions++
			cat.Questions++
			for _, d := range ks {
				start := time.Now()
				mems, err := m.ret.Search(ctx, user, q.Question, retrieval.SearchOptions{TopK: d})
				if err != nil {
					return nil, fmt.Errorf("%s: search %q: %w", c.name, q.Question, err)
				}
				if d == k {
					lat = append(lat, time.Since(start))
					n := 0
					for _, mm := range mems {
						n += counter.Count(mm.Text)
					}
					toks = append(toks, n)
					docs += len(mems)
				}
				all, any := covers(mems, q.Evidence)
				if d == k && !all {
					m := miss{Conversation: c.name, Category: q.Category, Question: q.Question, Evidence: q.Evidence, Found: []string{}}
					for _, mm := range mems {
						m.Found = append(m.Found, mm.TurnIDs...)
					}
					rep.Misses = append(rep.Misses, m)
				}
				rep.all.add(d, all, any)
				cat.add(d, all, any)
			}
		}
	}
	rep.all.finish(k, ks)
	for _, f := range rep.ByCategory {
		f.finish(k, ks)
	}
	rep.Questions = rep.all.Questions
	rep.RecallAll, rep.RecallAny, rep.At = rep.all.RecallAll, rep.all.RecallAny, rep.all.At
	slices.Sort(lat)
	slices.Sort(toks)
	rep.SearchP50ms = ms(percentile(lat, 50))
	rep.SearchP95ms = ms(percentile(lat, 95))
	rep.ContextTokensP50 = percentile(toks, 50)
	rep.ContextTokensP95 = percentile(toks, 95)
	sum := 0
	for _, t := range toks {
		sum += t
	}
	rep.ContextTokensMean = round(ratio(sum, len(toks)), 1)
	rep.DocumentsMean = round(ratio(docs, len(toks)), 2)
	return rep, nil
}

// covers reports whether the TurnIDs of mems hold every id of evidence, and
// whether they hold at least one.
func covers(mems []retrieval.Memory, evidence []string) (all, any bool) {
	got := map[string]bool{}
	for _, m := range mems {
		for _, id := range m.TurnIDs {
			got[id] = true
		}
	}
	all = true
	for _, e := range evidence {
		if got[e] {
			any = true
		} else {
			all = false
		}
	}
	return all, any
}

// percentile returns the nearest-rank p-th percentile of sorted xs.
func percentile[T any](xs []T, p int) T {
	var zero T
	if len(xs) == 0 {
		return zero
	}
	i := int(math.Ceil(float64(p)/100*float64(len(xs)))) - 1
	return xs[max(0, min(i, len(xs)-1))]
}

func ms(d time.Duration) float64 { return round(float64(d)/float64(time.Millisecond), 3) }

func round(x float64, digits int) float64 {
	p := math.Pow(10, float64(digits))
	return math.Round(x*p) / p
}

func (r *report) writeMarkdown(w io.Writer) {
	ks := make([]int, 0, len(r.At))
	for s := range r.At {
		n, _ := strconv.Atoi(s)
		ks = append(ks, n)
	}
	slices.Sort(ks)
	fmt.Fprint(w, "| questions | n |")
	for _, k := range ks {
		fmt.Fprintf(w, " recall_all@%d | recall_any@%d |", k, k)
	}
	fmt.Fprint(w, "\n|---|---|")
	for range ks {
		fmt.Fprint(w, "---|---|")
	}
	fmt.Fprintln(w)
	row := func(label string, f *figures) {
		fmt.Fprintf(w, "| %s | %d |", label, f.Questions)
		for _, k := range ks {
			rc := f.At[strconv.Itoa(k)]
			fmt.Fprintf(w, " %.3f | %.3f |", rc.All, rc.Any)
		}
		fmt.Fprintln(w)
	}
	row("all", r.all)
	for c := 1; c <= 4; c++ {
		f := r.ByCategory[strconv.Itoa(c)]
		row(fmt.Sprintf("%d %s", c, f.Name), f)
	}
	fmt.Fprintf(w, "\nsearch latency at k=%d: p50 %.2f ms, p95 %.2f ms\n", r.K, r.SearchP50ms, r.SearchP95ms)
	fmt.Fprintf(w, "memory context at k=%d: p50 %d tokens, p95 %d, mean %.0f (%.1f documents)\n", r.K, r.ContextTokensP50, r.ContextTokensP95, r.ContextTokensMean, r.DocumentsMean)
	if r.SkippedNoEvidence > 0 {
		fmt.Fprintf(w, "%d category 1–4 questions without evidence left out\n", r.SkippedNoEvidence)
	}
	if r.UnknownEvidence > 0 {
		fmt.Fprintf(w, "%d evidence ids naming no turn of their conversation left out\n", r.UnknownEvidence)
	}
}

func (r *report) writeJSON(path string) error { return writeJSON(path, r) }

// writeJSON writes v as indented JSON to path.
func writeJSON(path string, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(b, '\n'), 0o644)
}
