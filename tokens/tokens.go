// Package tokens counts tokens, for prompt budgets.
//
// Counter is the small interface the rest of the module budgets with, so a
// model's own tokenizer can replace the default. BPE, the default, runs
// OpenAI's tiktoken encodings (o200k_base, cl100k_base) offline with
// github.com/tiktoken-go/tokenizer: exact for OpenAI models, a good estimate
// for others. Approx is a dependency-free bytes/4 estimate.
package tokens

import (
	"fmt"
	"strings"
	"sync"

	"github.com/tiktoken-go/tokenizer"
)

// Counter counts the tokens of a text. Implementations must be safe for
// concurrent use.
type Counter interface {
	Count(text string) int
}

// Encoding names a tiktoken BPE encoding.
type Encoding string

// The encodings BPE supports.
const (
	// O200kBase is the encoding of GPT-4o, GPT-4.1, GPT-5 and the o-series.
	O200kBase Encoding = "o200k_base"
	// Cl100kBase is the encoding of GPT-4, GPT-3.5 Turbo and
	// text-embedding-ada-002 / -3.
	Cl100kBase Encoding = "cl100k_base"
)

// DefaultEncoding is the encoding of a zero BPE.
const DefaultEncoding = O200kBase

// EncodingForModel returns the encoding of an OpenAI model name (a prefix
// match, so dated and fine-tuned variants work): Cl100kBase for gpt-4 (but
// not gpt-4o or gpt-4.1), gpt-3.5 and text-embedding-*, O200kBase for
// everything else, including models it does not know.
func EncodingForModel(model string) Encoding {
	m := strings.ToLower(strings.TrimPrefix(model, "ft:"))
	switch {
	case strings.HasPrefix(m, "gpt-4o"), strings.HasPrefix(m, "gpt-4.1"):
		return O200kBase
	case strings.HasPrefix(m, "gpt-4"), strings.HasPrefix(m, "gpt-3.5"), strings.HasPrefix(m, "gpt-35"),
		strings.HasPrefix(m, "text-embedding-"):
		return Cl100kBase
	}
	return O200kBase
}

// BPE counts tokens with a tiktoken encoding. The encoding is loaded on
// first use, once per BPE; BPE is safe for concurrent use. The zero value
// counts with DefaultEncoding. A BPE must not be copied after first use.
type BPE struct {
	enc   Encoding
	once  sync.Once
	codec tokenizer.Codec
	err   error
}

var _ Counter = (*BPE)(nil)

// NewBPE returns a counter for enc; "" means DefaultEncoding. It fails for
// an encoding other than O200kBase or Cl100kBase. The encoding's tables are
// loaded lazily, on the first Count or Load.
func NewBPE(enc Encoding) (*BPE, error) {
	switch enc {
	case "":
		enc = DefaultEncoding
	case O200kBase, Cl100kBase:
	default:
		return nil, fmt.Errorf("tokens: unsupported encoding %q (want %q or %q)", enc, O200kBase, Cl100kBase)
	}
	return &BPE{enc: enc}, nil
}

// Encoding returns the encoding b counts with.
func (b *BPE) Encoding() Encoding {
	if b.enc == "" {
		return DefaultEncoding
	}
	return b.enc
}

// Load loads the encoding now, rather than on the first Count, and reports
// a failure to do so. The first load of an encoding in a process builds its
// vocabulary (tens of milliseconds, a few MiB), which the library then shares
// with every later BPE of that encoding.
func (b *BPE) Load() error {
	b.once.Do(func() {
		c, err := tokenizer.Get(tokenizer.Encoding(b.Encoding()))
		if err != nil {
			b.err = fmt.Errorf("tokens: load %s: %w", b.Encoding(), err)
			return
		}
		b.codec = c
	})
	return b.err
}

// Count returns the number of tokens of text. Invalid UTF-8 is counted as
// is, byte by byte. Special tokens such as "<|endoftext|>" are counted as
// ordinary text. Should the encoding fail to load or to tokenize, Count
// falls back to Approx rather than report zero.
func (b *BPE) Count(text string) int {
	if text == "" {
		return 0
	}
	if b.Load() != nil {
		return Approx{}.Count(text)
	}
	n, err := b.codec.Count(text)
	if err != nil {
		return Approx{}.Count(text)
	}
	return n
}

// Approx estimates tokens as one per four bytes, rounded up: close for
// English prose with BPE encodings, an undercount for code and for scripts
// outside Latin. It needs no tables.
type Approx struct{}

var _ Counter = Approx{}

// Count returns ceil(len(text)/4).
func (Approx) Count(text string) int { return (len(text) + 3) / 4 }
