// Package lexical is the offline default embed.Embedder: a deterministic,
// hashed bag of words, word bigrams and character trigrams.
//
// It is lexical, not semantic. Two texts are close when they share words or
// pieces of words: "car" and "automobile" are unrelated to it, while
// "retire", "retired" and "retirement" are close. It needs no model, no
// network and no data files, which makes it the zero-setup default and a
// reproducible embedder for tests; configure a real embedding model (see
// llm/openai) for semantic recall.
//
// # Features
//
// A text is split into words with the rules of the internal lexis package:
// maximal runs of Unicode letters, digits and combining marks, lower-cased,
// apostrophes inside words dropped ("don't" → "dont"). Then:
//
//   - word unigrams: each content word (stopwords removed), lightly stemmed
//     (plural, -ing, -ed, final -e; English ASCII words only), weight 1;
//   - word bigrams: each pair of consecutive content words, stemmed, weight
//     0.6;
//   - character trigrams: of each content word unstemmed, with boundary marks
//     ("^car$" gives "^ca", "car", "ar$"), counted in runes, weight 0.3.
//
// A text made only of stopwords ("what is it?") uses its stopwords as
// content words, so that it does not embed to zero. Each feature's count c
// is damped to 1+ln(c) (sublinear TF) and multiplied by its weight.
//
// Features are hashed with FNV-1a 64 (with a distinct prefix byte per feature
// kind, then a 64-bit finaliser) into Config.Dimensions buckets with a
// sign taken from the hash (signed feature hashing), so collisions cancel
// out on average rather than pile up. The hash has no random seed: a text
// embeds to the same vector in every process, on every platform, in every
// version that keeps the same Model id (up to floating-point rounding, which
// the Go spec lets some architectures fuse). The vector is L2-normalised.
//
// A text without any word (empty, only punctuation or spaces) embeds to the
// zero vector, whose cosine with anything is 0 (embed.Cosine).
package lexical

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strconv"
	"sync"
	"unicode/utf8"

	"github.com/agentmemory/agentmemory/embed"
	"github.com/agentmemory/agentmemory/internal/lexis"
)

// Version is bumped whenever a change alters the vectors of some text; it is
// part of the Model id.
const Version = 1

// DefaultDimensions is the vector length when Config.Dimensions is zero.
const DefaultDimensions = 384

// MaxDimensions is the largest Config.Dimensions accepted.
const MaxDimensions = 1 << 16

// Feature weights, before sublinear TF.
const (
	weightWord    = 1.0
	weightBigram  = 0.6
	weightTrigram = 0.3
)

// Feature-kind prefixes mixed into the hash.
const (
	kindWord    = 'w'
	kindBigram  = 'b'
	kindTrigram = 't'
)

// Config configures an Embedder. The zero value is usable.
type Config struct {
	// Dimensions is the vector length; zero means DefaultDimensions. It must
	// be between 1 and MaxDimensions.
	Dimensions int
}

// Embedder is the lexical embedder. It is safe for concurrent use.
type Embedder struct {
	dim   int
	model string
	pool  sync.Pool // *scratch
}

var _ embed.Embedder = (*Embedder)(nil)

// New returns an embedder configured by cfg.
func New(cfg Config) (*Embedder, error) {
	d := cfg.Dimensions
	if d == 0 {
		d = DefaultDimensions
	}
	if d < 1 || d > MaxDimensions {
		return nil, fmt.Errorf("lexical: dimensions %d out of range [1, %d]", cfg.Dimensions, MaxDimensions)
	}
	return &Embedder{
		dim:   d,
		model: "lexical-v" + strconv.Itoa(Version) + "-" + strconv.Itoa(d),
	}, nil
}

// Model returns "lexical-v{Version}-{Dimensions}", e.g. "lexical-v1-384", so
// that vectors made with other settings or versions are never compared.
func (e *Embedder) Model() string { return e.model }

// Dimensions returns the vector length.
func (e *Embedder) Dimensions() int { return e.dim }

// Lexical reports true: the vectors encode only words and pieces of words
// (embed.Lexical), which full-text search matches already, so memory
// neither stores nor searches them.
func (e *Embedder) Lexical() bool { return true }

// Embed returns one unit (or zero) vector per text. It checks ctx before
// each text and fails with ctx's error, wrapped, once it is done.
func (e *Embedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, len(texts))
	if len(texts) == 0 {
		return out, nil
	}
	backing := make([]float32, len(texts)*e.dim)
	s, _ := e.pool.Get().(*scratch)
	if s == nil {
		s = new(scratch)
	}
	defer e.pool.Put(s)
	for i, t := range texts {
		if err := ctx.Err(); err != nil {
			return nil, fmt.Errorf("lexical: embed cancelled after %d of %d texts: %w", i, len(texts), err)
		}
		v := backing[i*e.dim : (i+1)*e.dim : (i+1)*e.dim]
		e.embedOne(s, t, v)
		out[i] = v
	}
	return out, nil
}

// word is one word of the text being embedded: its normalised form
// norm[ns:ne] and its stem stem[ss:se].
type word struct {
	ns, ne, ss, se int32
	stop           bool
}

// scratch holds the buffers one Embed call reuses from text to text.
type scratch struct {
	norm, stem, tri []byte
	words           []word
	runes           []int32
	hw, hb, ht      []uint64
}

// embedOne writes the normalised vector of text into v, which is zero.
func (e *Embedder) embedOne(s *scratch, text string, v []float32) {
	s.norm, s.stem, s.words = s.norm[:0], s.stem[:0], s.words[:0]
	content := 0
	for i := 0; ; {
		st, en := lexis.NextWord(text, i)
		if st == en {
			break
		}
		i = en
		ns := len(s.norm)
		s.norm = lexis.AppendNorm(s.norm, text[st:en])
		if len(s.norm) == ns {
			continue
		}
		w := word{ns: int32(ns), ne: int32(len(s.norm))}
		w.stop = lexis.IsStopwordBytes(s.norm[ns:])
		if !w.stop {
			content++
		}
		ss := len(s.stem)
		s.stem = append(s.stem, s.norm[ns:]...)
		s.stem = s.stem[:ss+len(lexis.Stem(s.stem[ss:]))] // Stem never lengthens
		w.ss, w.se = int32(ss), int32(len(s.stem))
		s.words = append(s.words, w)
	}
	useStop := content == 0 // a text of stopwords only keeps them

	s.hw, s.hb, s.ht = s.hw[:0], s.hb[:0], s.ht[:0]
	var prev []byte
	for _, w := range s.words {
		if w.stop && !useStop {
			continue
		}
		stem := s.stem[w.ss:w.se]
		s.hw = append(s.hw, hashBytes(hashKind(kindWord), stem))
		if prev != nil {
			h := hashBytes(hashKind(kindBigram), prev)
			h = hashByte(h, 0)
			s.hb = append(s.hb, hashBytes(h, stem))
		}
		prev = stem
		s.ht = s.appendTrigrams(s.ht, s.norm[w.ns:w.ne])
	}

	addFeatures(v, s.hw, weightWord)
	addFeatures(v, s.hb, weightBigram)
	addFeatures(v, s.ht, weightTrigram)
	embed.Normalize(v)
}

// appendTrigrams appends the hashes of the rune trigrams of "^w$" to hs.
func (s *scratch) appendTrigrams(hs []uint64, w []byte) []uint64 {
	s.tri = append(append(append(s.tri[:0], '^'), w...), '$')
	s.runes = s.runes[:0]
	for i := 0; i < len(s.tri); {
		s.runes = append(s.runes, int32(i))
		if c := s.tri[i]; c < utf8.RuneSelf {
			i++
		} else {
			_, n := utf8.DecodeRune(s.tri[i:])
			i += n
		}
	}
	s.runes = append(s.runes, int32(len(s.tri)))
	seed := hashKind(kindTrigram)
	for i := 0; i+3 < len(s.runes); i++ {
		hs = append(hs, hashBytes(seed, s.tri[s.runes[i]:s.runes[i+3]]))
	}
	return hs
}

// addFeatures adds each distinct hash of hs to v with weight w·(1+ln count),
// at bucket hash mod len(v) and with the sign of the hash's top bit.
func addFeatures(v []float32, hs []uint64, w float64) {
	if len(hs) == 0 {
		return
	}
	slices.Sort(hs)
	dim := uint64(len(v))
	for i := 0; i < len(hs); {
		j := i + 1
		for j < len(hs) && hs[j] == hs[i] {
			j++
		}
		h := mix(hs[i])
		x := w
		if n := j - i; n > 1 {
			x *= 1 + math.Log(float64(n))
		}
		if h>>63 != 0 {
			x = -x
		}
		v[h%dim] += float32(x)
		i = j
	}
}

// FNV-1a 64.
const (
	fnvOffset = 14695981039346656037
	fnvPrime  = 1099511628211
)

func hashKind(kind byte) uint64 { return hashByte(fnvOffset, kind) }

func hashByte(h uint64, c byte) uint64 { return (h ^ uint64(c)) * fnvPrime }

func hashBytes(h uint64, b []byte) uint64 {
	for _, c := range b {
		h = (h ^ uint64(c)) * fnvPrime
	}
	return h
}

// mix is the murmur3 64-bit finaliser: it spreads FNV's weak low bits, which
// pick the bucket, and high bit, which picks the sign.
func mix(h uint64) uint64 {
	h ^= h >> 33
	h *= 0xff51afd7ed558ccd
	h ^= h >> 33
	h *= 0xc4ceb9fe1a85ec53
	h ^= h >> 33
	return h
}
