// Package check tells a user whether the models and the store their
// environment configures will work for agentmemory, before memory depends
// on them: it is the logic of `agentmemory check`.
//
// # What is checked
//
// For the chat model and the mini model it checks that each is reachable,
// its latency (the p50 of a few calls), tool calling (a call, then the use
// of its result), JSON mode (json_object) and structured output
// (json_schema). A server that refuses response_format (the chat client
// then leaves it out, see llm/openai) gets a warning when the model still
// answers the JSON asked for, read leniently as memory reads it, and a
// failure when it does not. For the embedder: reachable, latency, that its vectors
// have the configured length, and its similarity on a built-in set of
// related and unrelated query–memory pairs (Pairs), with the calibration
// it implies: the mean cosine of related and of unrelated pairs, the gap
// between them, and the threshold that would separate them. For the store:
// reachable, latency, that the vectors it holds (or, on Azure Cosmos DB,
// its containers' vector policies) have the embedder's length, on Azure
// Cosmos DB the account's vector and full-text search as the containers
// show them (a store that could not open because the account lacks a
// prerequisite — the vector search capability, a database without shared
// throughput, an index type that holds the embedder's dimensions — fails
// that check, naming the fix), and a round trip — a probe document with the embedder's vector written under a
// throwaway user, found by vector search, and deleted with that user.
//
// Offline (no model configured) the models are the offline client, which
// is not an LLM: its checks are skipped and the report says so; the
// lexical embedder and the store are checked as usual.
//
// # Reports
//
// Run returns a Report; Report.Failed says whether any check failed, and
// WriteText and the JSON encoding of the Report present it.
package check

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/agentmemory/agentmemory/agent"
	"github.com/agentmemory/agentmemory/embed"
	"github.com/agentmemory/agentmemory/store"
)

// Defaults of Config.
const (
	DefaultCalls   = 3
	DefaultTimeout = 30 * time.Second
	// DefaultMinGap is the smallest gap between the mean cosine of related
	// and of unrelated pairs that passes: below it the embedder barely
	// tells a memory that answers a question from one that does not.
	DefaultMinGap = 0.05
	// DefaultMinSeparation is the smallest share of (related, unrelated)
	// pairs of pairs ordered rightly (related more similar) that passes.
	DefaultMinSeparation = 0.75
)

// Config tunes Run. The zero value is usable.
type Config struct {
	// Calls is the number of calls whose latency is measured per model and
	// for the store; zero means DefaultCalls.
	Calls int
	// Timeout bounds each call; zero means DefaultTimeout.
	Timeout time.Duration
	// Pairs are the similarity pairs; nil means Pairs().
	Pairs []Pair
	// MinGap and MinSeparation are the similarity check's pass marks; zero
	// means DefaultMinGap and DefaultMinSeparation.
	MinGap, MinSeparation float64
}

// Stack is what Run checks.
type Stack struct {
	// Chat and Mini are the chat models; ChatName and MiniName name them
	// in the report. A Mini with the same name as Chat is checked once.
	Chat, Mini         agent.ChatClient
	ChatName, MiniName string
	// Embedder is the embedding model.
	Embedder embed.Embedder
	// Store is the memory store; StoreName describes it. Run writes one
	// probe document under a throwaway user and deletes that user.
	Store     store.Store
	StoreName string
	// StoreErr, with a nil Store, is why the store could not be opened;
	// the report names it as the store's failure.
	StoreErr error
	// Offline reports that no model is configured: Chat and Mini are the
	// offline client, Embedder the lexical embedder.
	Offline bool
	// Description says which models run, without secrets.
	Description string
}

// Status is the outcome of one check.
type Status string

// Outcomes.
const (
	OK   Status = "ok"
	Warn Status = "warn" // works, with a caveat the detail names
	Fail Status = "fail"
	Skip Status = "skip" // not run; the detail says why
)

// Item is one check's outcome.
type Item struct {
	Name   string `json:"name"`
	Status Status `json:"status"`
	Detail string `json:"detail"`
}

// Section holds the checks of one model or the store.
type Section struct {
	// Name is "chat model", "mini model", "embedding model" or "store".
	Name string `json:"name"`
	// Target names what was checked: the model or the store.
	Target string `json:"target"`
	Items  []Item `json:"checks"`
	// LatencyP50ms is the median latency of the measured calls, in
	// milliseconds; zero when not measured.
	LatencyP50ms float64 `json:"latency_p50_ms,omitempty"`
}

// Report is the outcome of Run.
type Report struct {
	// Offline reports that no model is configured.
	Offline bool `json:"offline"`
	// Models and Store describe what was checked.
	Models   string    `json:"models"`
	Store    string    `json:"store"`
	Sections []Section `json:"sections"`
	// Calibration is the embedder's similarity on the pairs, when it
	// could be measured.
	Calibration *Calibration `json:"calibration,omitempty"`
	// OK is true when no check failed.
	OK bool `json:"ok"`
	// Failures name the failed checks, "section: check".
	Failures []string `json:"failures,omitempty"`
}

// Failed reports whether any check failed.
func (r *Report) Failed() bool { return !r.OK }

// Item returns the check named name of the section named section.
func (r *Report) Item(section, name string) (Item, bool) {
	for _, s := range r.Sections {
		if s.Name != section {
			continue
		}
		for _, it := range s.Items {
			if it.Name == name {
				return it, true
			}
		}
	}
	return Item{}, false
}

// Run checks s. It fails only for a Stack without a model, an embedder, or
// a store or the error opening it; every failing check is in the Report.
func Run(ctx context.Context, s Stack, cfg Config) (*Report, error) {
	switch {
	case s.Chat == nil || s.Mini == nil:
		return nil, errors.New("check: Stack needs Chat and Mini")
	case s.Embedder == nil:
		return nil, errors.New("check: Stack needs an Embedder")
	case s.Store == nil && s.StoreErr == nil:
		return nil, errors.New("check: Stack needs a Store or a StoreErr")
	}
	cfg = cfg.withDefaults()
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	r := &Report{Offline: s.Offline, Models: s.Description, Store: s.StoreName}
	c := &checker{cfg: cfg}
	if s.Offline {
		why := "no model configured: the offline client (deterministic rules, not an LLM) does memory's work; " +
			"set OPENAI_API_KEY, OPENAI_BASE_URL or AZURE_OPENAI_ENDPOINT to check a model"
		for _, name := range []string{"chat model", "mini model"} {
			r.Sections = append(r.Sections, Section{Name: name, Target: "offline client",
				Items: []Item{{Name: "model", Status: Skip, Detail: why}}})
		}
	} else {
		r.Sections = append(r.Sections, c.chat(ctx, "chat model", s.ChatName, s.Chat))
		if s.MiniName != "" && s.MiniName == s.ChatName {
			r.Sections = append(r.Sections, Section{Name: "mini model", Target: s.MiniName,
				Items: []Item{{Name: "model", Status: OK, Detail: "the same model as the chat model, checked above"}}})
		} else {
			r.Sections = append(r.Sections, c.chat(ctx, "mini model", s.MiniName, s.Mini))
		}
	}
	emb, vecs, cal := c.embedding(ctx, s.Embedder)
	r.Sections = append(r.Sections, emb)
	r.Calibration = cal
	var probe []float32
	if len(vecs) > 0 {
		probe = vecs[0]
	}
	if s.Store == nil {
		r.Sections = append(r.Sections, openFailure(s.StoreName, s.StoreErr))
	} else {
		r.Sections = append(r.Sections, c.store(ctx, s.Store, s.StoreName, s.Embedder.Dimensions(), probe))
	}
	r.OK = true
	for _, sec := range r.Sections {
		for _, it := range sec.Items {
			if it.Status == Fail {
				r.OK = false
				r.Failures = append(r.Failures, sec.Name+": "+it.Name)
			}
		}
	}
	return r, nil
}

// withDefaults returns c with every zero field that has a default set to
// it.
func (c Config) withDefaults() Config {
	c.Calls = cmp.Or(c.Calls, DefaultCalls)
	c.Timeout = cmp.Or(c.Timeout, DefaultTimeout)
	if c.Pairs == nil {
		c.Pairs = Pairs()
	}
	c.MinGap = cmp.Or(c.MinGap, DefaultMinGap)
	c.MinSeparation = cmp.Or(c.MinSeparation, DefaultMinSeparation)
	return c
}

// validate reports the first field of c (with its defaults) that is out
// of range.
func (c Config) validate() error {
	switch {
	case c.Calls < 0 || c.Timeout < 0:
		return fmt.Errorf("check: Calls %d and Timeout %v must not be negative", c.Calls, c.Timeout)
	case len(c.Pairs) < 2:
		return fmt.Errorf("check: %d similarity pairs: want at least 2", len(c.Pairs))
	}
	return nil
}

// checker runs the checks of one Run.
type checker struct {
	cfg Config
}

// call runs f under the per-call timeout and returns its latency.
func (c *checker) call(ctx context.Context, f func(ctx context.Context) error) (time.Duration, error) {
	ctx, cancel := context.WithTimeout(ctx, c.cfg.Timeout)
	defer cancel()
	start := time.Now()
	err := f(ctx)
	return time.Since(start), err
}

// unreachable is the items of a section whose first call failed with err:
// "reachable" fails, and the checks named then are skipped, as what (the
// model, the store) is not reachable.
func unreachable(err error, what string, then ...string) []Item {
	items := []Item{{Name: "reachable", Status: Fail, Detail: errText(err)}}
	for _, n := range then {
		items = append(items, Item{Name: n, Status: Skip, Detail: what + " is not reachable"})
	}
	return items
}

// latency is the "latency" item of the c.cfg.Calls calls of a section,
// those that succeeded having taken lat; calls names them ("reads"). When
// all succeeded, it sets sec.LatencyP50ms to their median.
func (c *checker) latency(sec *Section, lat []time.Duration, calls string) Item {
	if len(lat) < c.cfg.Calls {
		return Item{Name: "latency", Status: Warn, Detail: fmt.Sprintf("only %d of %d %s succeeded", len(lat), c.cfg.Calls, calls)}
	}
	p := p50(lat)
	sec.LatencyP50ms = ms(p)
	return Item{Name: "latency", Status: OK, Detail: fmt.Sprintf("p50 %s over %d %s", fmtDuration(p), len(lat), calls)}
}

// p50 returns the median of ds (the lower middle of an even count).
func p50(ds []time.Duration) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[(len(s)-1)/2]
}

func ms(d time.Duration) float64 {
	return math.Round(float64(d)/float64(time.Microsecond)) / 1000
}

// fmtDuration prints d to two or three significant figures.
func fmtDuration(d time.Duration) string {
	switch {
	case d < time.Millisecond:
		return fmt.Sprintf("%.2f ms", float64(d)/float64(time.Millisecond))
	case d < time.Second:
		return fmt.Sprintf("%.0f ms", float64(d)/float64(time.Millisecond))
	}
	return fmt.Sprintf("%.2f s", d.Seconds())
}

// errText is an error's text on one line, cut to a readable length.
func errText(err error) string {
	s := strings.Join(strings.Fields(err.Error()), " ")
	return clip(s, 300)
}

func clip(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n]) + "…"
}
