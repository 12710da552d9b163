package lexical

import (
	"context"
	"errors"
	"math"
	"slices"
	"testing"

	"github.com/agentmemory/agentmemory/embed"
)

func newEmbedder(t testing.TB, cfg Config) *Embedder {
	t.Helper()
	e, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

func embedAll(t testing.TB, e *Embedder, texts ...string) [][]float32 {
	t.Helper()
	vs, err := e.Embed(context.Background(), texts)
	if err != nil {
		t.Fatal(err)
	}
	if len(vs) != len(texts) {
		t.Fatalf("got %d vectors for %d texts", len(vs), len(texts))
	}
	return vs
}

func TestConfig(t *testing.T) {
	e := newEmbedder(t, Config{})
	if e.Dimensions() != DefaultDimensions || e.Model() != "lexical-v1-384" {
		t.Errorf("zero Config: %d dims, model %q", e.Dimensions(), e.Model())
	}
	e = newEmbedder(t, Config{Dimensions: 64})
	if e.Dimensions() != 64 || e.Model() != "lexical-v1-64" {
		t.Errorf("64 dims: %d dims, model %q", e.Dimensions(), e.Model())
	}
	if v := embedAll(t, e, "hello there")[0]; len(v) != 64 {
		t.Errorf("vector length %d, want 64", len(v))
	}
	for _, d := range []int{-1, MaxDimensions + 1} {
		if _, err := New(Config{Dimensions: d}); err == nil {
			t.Errorf("New(%d dims) succeeded", d)
		}
	}
}

func TestDeterministicUnitNorm(t *testing.T) {
	e1 := newEmbedder(t, Config{})
	e2 := newEmbedder(t, Config{})
	texts := []string{"The user plans to retire at 60.", "Привет мир", "東京に住んでいます", "x", "what is it?"}
	a := embedAll(t, e1, texts...)
	b := embedAll(t, e2, texts...)
	again := embedAll(t, e1, texts[2], texts[0]) // order and batch do not matter
	for i := range texts {
		if !slices.Equal(a[i], b[i]) {
			t.Errorf("%q: two embedders disagree", texts[i])
		}
		if len(a[i]) != DefaultDimensions {
			t.Errorf("%q: length %d", texts[i], len(a[i]))
		}
		if n := embed.Norm(a[i]); math.Abs(float64(n)-1) > 1e-5 {
			t.Errorf("%q: norm %v, want 1", texts[i], n)
		}
	}
	if !slices.Equal(again[0], a[2]) || !slices.Equal(again[1], a[0]) {
		t.Error("vectors depend on the batch")
	}
}

// TestGolden pins a few coordinates so that an accidental change of the
// vectors (which would need a Version bump) fails loudly.
func TestGolden(t *testing.T) {
	e := newEmbedder(t, Config{Dimensions: 16})
	v := embedAll(t, e, "Retirement planning with a 401k")[0]
	got := make([]int, len(v))
	for i, x := range v {
		got[i] = int(math.Round(float64(x) * 1000))
	}
	want := []int{0, -250, 125, 417, 0, -125, 0, -375, -125, -250, -125, 542, 125, 0, -417, 125}
	if !slices.Equal(got, want) {
		t.Errorf("vector changed (bump Version if intended):\n got %v\nwant %v", got, want)
	}
}

func TestEmptyIsZero(t *testing.T) {
	e := newEmbedder(t, Config{})
	for _, text := range []string{"", "   ", "?!...", "\xff\xfe"} {
		v := embedAll(t, e, text)[0]
		if len(v) != DefaultDimensions || embed.Norm(v) != 0 {
			t.Errorf("%q: want a zero vector of %d, got norm %v len %d", text, DefaultDimensions, embed.Norm(v), len(v))
		}
	}
	if vs := embedAll(t, e); len(vs) != 0 {
		t.Errorf("no texts: %d vectors", len(vs))
	}
}

func TestSimilarity(t *testing.T) {
	e := newEmbedder(t, Config{})
	// Each case: a query, a text lexically related to it, and unrelated ones.
	cases := []struct {
		query, near string
		far         []string
	}{
		{
			"What did we decide about my 401k retirement plan?",
			"We decided to move the 401k into a target-date retirement fund.",
			[]string{"My daughter starts college next fall.", "The weather in Paris was lovely.", "I prefer email over phone calls."},
		},
		{
			"I am planning to buy a house next year",
			"She plans to buy a new house.",
			[]string{"The stock market fell sharply today.", "Remind me to call the dentist."},
		},
		{
			"Ich wohne in Berlin",
			"Sie wohnt in Berlin",
			[]string{"Je vis à Paris", "I live in London"},
		},
	}
	for _, c := range cases {
		vs := embedAll(t, e, append([]string{c.query, c.near}, c.far...)...)
		near := embed.Cosine(vs[0], vs[1])
		for i, f := range c.far {
			if far := embed.Cosine(vs[0], vs[2+i]); far >= near {
				t.Errorf("%q: unrelated %q scores %.3f >= related %q %.3f", c.query, f, far, c.near, near)
			}
		}
	}
	// Inflections share stems and trigrams; synonyms share nothing.
	vs := embedAll(t, e, "retire", "retirement", "retired", "car", "automobile")
	if c := embed.Cosine(vs[0], vs[2]); c < 0.9 {
		t.Errorf("retire/retired cosine %.3f, want > 0.9", c)
	}
	if a, b := embed.Cosine(vs[0], vs[1]), embed.Cosine(vs[3], vs[4]); a <= b || a < 0.2 {
		t.Errorf("retire/retirement %.3f should beat car/automobile %.3f", a, b)
	}
	if c := embed.Cosine(vs[3], vs[4]); math.Abs(float64(c)) > 0.3 {
		t.Errorf("car/automobile cosine %.3f: lexical embedder should see them as unrelated", c)
	}
}

func TestStopwordsOnly(t *testing.T) {
	e := newEmbedder(t, Config{})
	vs := embedAll(t, e, "what is it?", "What is it", "who are you")
	if embed.Norm(vs[0]) == 0 {
		t.Fatal("a stopword-only text embedded to zero")
	}
	if c := embed.Cosine(vs[0], vs[1]); c < 0.999 {
		t.Errorf("case and punctuation changed the vector: cosine %.4f", c)
	}
	if c := embed.Cosine(vs[0], vs[2]); c > 0.5 {
		t.Errorf("unrelated stopword texts: cosine %.3f", c)
	}
}

func TestUnicode(t *testing.T) {
	e := newEmbedder(t, Config{})
	vs := embedAll(t, e, "東京に住んでいます", "東京に住んでいました", "ロンドンが好き", "ÉCOLE", "école")
	if a, b := embed.Cosine(vs[0], vs[1]), embed.Cosine(vs[0], vs[2]); a <= b {
		t.Errorf("Japanese: related %.3f <= unrelated %.3f", a, b)
	}
	if c := embed.Cosine(vs[3], vs[4]); c < 0.999 {
		t.Errorf("ÉCOLE/école cosine %.4f, want 1", c)
	}
}

func TestCancel(t *testing.T) {
	e := newEmbedder(t, Config{})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := e.Embed(ctx, []string{"a"}); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled Embed: err = %v, want context.Canceled", err)
	}
}

func TestConcurrent(t *testing.T) {
	e := newEmbedder(t, Config{})
	want := embedAll(t, e, "concurrent use is safe")[0]
	done := make(chan []float32)
	for range 8 {
		go func() {
			v, err := embed.One(context.Background(), e, "concurrent use is safe")
			if err != nil {
				t.Error(err)
			}
			done <- v
		}()
	}
	for range 8 {
		if v := <-done; !slices.Equal(v, want) {
			t.Error("concurrent result differs")
		}
	}
}

var benchSentences = []string{
	"The user mentioned that they plan to retire at sixty and want to keep risk low.",
	"We discussed moving part of the 401k into a target-date fund last Tuesday.",
	"Their daughter starts college in the fall, so tuition is a near-term concern.",
	"I'd like to buy a house in the next two years; what should I save each month?",
	"Remind me what we decided about the emergency fund during our previous session.",
	"Les marchés ont baissé aujourd'hui, mais la stratégie à long terme reste la même.",
	"Short note.",
	"Interest rates rose again, which affects the mortgage refinancing options we reviewed.",
}

func BenchmarkEmbed(b *testing.B) {
	e := newEmbedder(b, Config{})
	ctx := context.Background()
	b.ReportAllocs()
	n := 0
	for b.Loop() {
		if _, err := e.Embed(ctx, benchSentences); err != nil {
			b.Fatal(err)
		}
		n += len(benchSentences)
	}
	b.ReportMetric(float64(n)/b.Elapsed().Seconds(), "sentences/s")
}

func FuzzEmbed(f *testing.F) {
	for _, s := range append([]string{"", "a", "\xff", "what is it", "東京"}, benchSentences...) {
		f.Add(s)
	}
	e := newEmbedder(f, Config{Dimensions: 32})
	f.Fuzz(func(t *testing.T, s string) {
		v, err := embed.One(context.Background(), e, s)
		if err != nil {
			t.Fatal(err)
		}
		if len(v) != 32 {
			t.Fatalf("length %d", len(v))
		}
		n := float64(embed.Norm(v))
		if n != 0 && math.Abs(n-1) > 1e-4 {
			t.Fatalf("norm %v", n)
		}
		for _, x := range v {
			if math.IsNaN(float64(x)) || math.IsInf(float64(x), 0) {
				t.Fatalf("non-finite component %v", x)
			}
		}
	})
}
