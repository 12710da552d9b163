package tokens

import (
	"encoding/json"
	"strings"
	"sync"
	"testing"

	"github.com/agentmemory/agentmemory/agent"
)

// Known counts, checked against tiktoken-go/tokenizer v0.10.0.
func TestBPECount(t *testing.T) {
	tests := []struct {
		text         string
		o200k, cl100 int
	}{
		{"", 0, 0},
		{"hello world", 2, 2},
		{"Hello, world!", 4, 4},
		{"What did we decide about my 401k?", 10, 10},
		{"東京に住んでいます", 6, 9},
		{"supercalifragilistic", 6, 7},
		{"<|endoftext|>", 7, 7}, // special tokens are plain text here
	}
	var zero BPE
	o200k, err := NewBPE(O200kBase)
	if err != nil {
		t.Fatal(err)
	}
	cl100k, err := NewBPE(Cl100kBase)
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range tests {
		if got := zero.Count(tt.text); got != tt.o200k {
			t.Errorf("zero BPE Count(%q) = %d, want %d", tt.text, got, tt.o200k)
		}
		if got := o200k.Count(tt.text); got != tt.o200k {
			t.Errorf("o200k Count(%q) = %d, want %d", tt.text, got, tt.o200k)
		}
		if got := cl100k.Count(tt.text); got != tt.cl100 {
			t.Errorf("cl100k Count(%q) = %d, want %d", tt.text, got, tt.cl100)
		}
	}
	if zero.Encoding() != O200kBase || cl100k.Encoding() != Cl100kBase {
		t.Errorf("encodings: %q, %q", zero.Encoding(), cl100k.Encoding())
	}
}

func TestNewBPE(t *testing.T) {
	b, err := NewBPE("")
	if err != nil || b.Encoding() != DefaultEncoding {
		t.Fatalf("NewBPE(\"\") = %v, %v", b, err)
	}
	if err := b.Load(); err != nil {
		t.Fatal(err)
	}
	for _, enc := range []Encoding{"p50k_base", "o200k", "bogus"} {
		if _, err := NewBPE(enc); err == nil || !strings.Contains(err.Error(), string(enc)) {
			t.Errorf("NewBPE(%q) error = %v", enc, err)
		}
	}
}

func TestInvalidUTF8(t *testing.T) {
	var b BPE
	if n := b.Count("ok \xff\xfe"); n <= 1 {
		t.Errorf("invalid UTF-8 counted as %d tokens", n)
	}
}

func TestConcurrentFirstUse(t *testing.T) {
	var b BPE
	var wg sync.WaitGroup
	counts := make([]int, 8)
	for i := range counts {
		wg.Go(func() { counts[i] = b.Count("concurrent first use of one counter") })
	}
	wg.Wait()
	for i, n := range counts {
		if n != counts[0] || n == 0 {
			t.Fatalf("goroutine %d counted %d, goroutine 0 %d", i, n, counts[0])
		}
	}
}

func TestApprox(t *testing.T) {
	for text, want := range map[string]int{"": 0, "a": 1, "abcd": 1, "abcde": 2, "hello world!": 3} {
		if got := (Approx{}).Count(text); got != want {
			t.Errorf("Approx(%q) = %d, want %d", text, got, want)
		}
	}
}

func TestEncodingForModel(t *testing.T) {
	for model, want := range map[string]Encoding{
		"gpt-4o-mini": O200kBase, "gpt-4.1": O200kBase, "gpt-5": O200kBase, "o3-mini": O200kBase,
		"gpt-4": Cl100kBase, "gpt-4-turbo": Cl100kBase, "gpt-35-turbo": Cl100kBase, "GPT-3.5-turbo-0125": Cl100kBase,
		"ft:gpt-4-0613:org": Cl100kBase, "text-embedding-3-small": Cl100kBase, "llama3": O200kBase, "": O200kBase,
	} {
		if got := EncodingForModel(model); got != want {
			t.Errorf("EncodingForModel(%q) = %q, want %q", model, got, want)
		}
	}
}

// wordCounter counts space-separated fields, to make the arithmetic of
// CountMessages visible.
type wordCounter struct{}

func (wordCounter) Count(s string) int { return len(strings.Fields(s)) }

func TestCountMessages(t *testing.T) {
	msgs := []agent.Message{
		agent.SystemText("be brief"),                          // 3 + 1 + 2
		{Role: agent.RoleUser, Name: "ann", Text: "hi there"}, // 3 + 1 + 2 + 1 + 1
		{Role: agent.RoleAssistant, ToolCalls: []agent.ToolCall{{ID: "c1", Name: "search", Arguments: json.RawMessage(`{"q": "x"}`)}}}, // 3 + 1 + 0 + (3 + 1 + 2)
		agent.ToolResult("c1", "found it"), // 3 + 1 + 2 + 1
	}
	want := 3 + (3 + 1 + 2) + (3 + 1 + 2 + 1 + 1) + (3 + 1 + 3 + 1 + 2) + (3 + 1 + 2 + 1)
	if got := CountMessages(wordCounter{}, msgs); got != want {
		t.Errorf("CountMessages = %d, want %d", got, want)
	}
	if got := CountMessages(wordCounter{}, nil); got != 0 {
		t.Errorf("no messages: %d", got)
	}
	// OpenAI's cookbook: a user message "hello world" with o200k is
	// 3 + 1 + 2, plus 3 priming = 9 prompt tokens.
	var b BPE
	if got := CountMessages(&b, []agent.Message{agent.UserText("hello world")}); got != 9 {
		t.Errorf("CountMessages(BPE, hello world) = %d, want 9", got)
	}
	if got := CountMessages(nil, []agent.Message{agent.UserText("abcdefgh")}); got != 3+1+2+3 {
		t.Errorf("CountMessages(nil) = %d, want Approx arithmetic %d", got, 3+1+2+3)
	}
}

var benchText = strings.Repeat("We discussed moving part of the 401k into a target-date fund last Tuesday; "+
	"their daughter starts college in the fall, so tuition is a near-term concern. ", 8)

func BenchmarkBPECount(b *testing.B) {
	var c BPE
	if err := c.Load(); err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(benchText)))
	b.ReportAllocs()
	for b.Loop() {
		c.Count(benchText)
	}
}

func BenchmarkCountMessages(b *testing.B) {
	var c BPE
	msgs := []agent.Message{agent.SystemText("You are a financial advisor."), agent.UserText(benchText), agent.AssistantText(benchText)}
	c.Count("warm up")
	b.ReportAllocs()
	for b.Loop() {
		CountMessages(&c, msgs)
	}
}
