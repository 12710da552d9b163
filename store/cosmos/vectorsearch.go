package cosmos

import (
	"fmt"
	"strconv"
	"strings"
)

// VectorSearchMode selects how a vector leg ranks a user's documents.
type VectorSearchMode string

// Vector search modes.
const (
	// VectorSearchExact (the default) makes every VectorDistance a
	// brute-force scan of the user's exact vectors (its third argument,
	// true): similarities and ranks are exactly the store contract's,
	// whatever the index type and however many vectors the user has, at a
	// request charge that grows with the user's vectors.
	VectorSearchExact VectorSearchMode = "exact"
	// VectorSearchIndex lets VectorDistance use the container's vector
	// index: quantizedFlat ranks by compressed vectors, diskANN searches
	// a graph (approximate nearest neighbours), so a true top-k document
	// may be missed, and with diskANN a filtered search may return fewer
	// than k. The options below trade charge for recall.
	VectorSearchIndex VectorSearchMode = "index"
)

// Documented bounds of VectorDistance's options.
const (
	minListMultiplier = 1
	maxListMultiplier = 100
)

// validateVectorSearch reports the first vector search setting of c (with
// its defaults) that is unknown or out of range.
func (c Config) validateVectorSearch() error {
	switch c.VectorSearch {
	case VectorSearchExact, VectorSearchIndex:
	default:
		return fmt.Errorf("cosmos: unknown Config.VectorSearch %q (want %q or %q)", c.VectorSearch, VectorSearchExact, VectorSearchIndex)
	}
	for _, m := range []struct {
		name string
		v    int
	}{{"SearchListSizeMultiplier", c.SearchListSizeMultiplier}, {"QuantizedVectorListMultiplier", c.QuantizedVectorListMultiplier}} {
		if m.v != 0 && (m.v < minListMultiplier || m.v > maxListMultiplier) {
			return fmt.Errorf("cosmos: Config.%s is %d: want %d to %d, or 0 for the service's default", m.name, m.v, minListMultiplier, maxListMultiplier)
		}
		if m.v != 0 && c.VectorSearch != VectorSearchIndex {
			return fmt.Errorf("cosmos: Config.%s applies to VectorSearchIndex only (Config.VectorSearch is %q)", m.name, c.VectorSearch)
		}
	}
	if p := c.FilterPriority; p != nil {
		if !(*p >= 0 && *p <= 1) {
			return fmt.Errorf("cosmos: Config.FilterPriority is %v: want 0 to 1, or nil for the service's default", *p)
		}
		if c.VectorSearch != VectorSearchIndex {
			return fmt.Errorf("cosmos: Config.FilterPriority applies to VectorSearchIndex only (Config.VectorSearch is %q)", c.VectorSearch)
		}
	}
	return nil
}

// vectorDistanceArgs returns what follows the two vectors in every
// VectorDistance of c: ", true" for an exact search; nothing, or
// ", false, {options}" with the options set, for an index search. The
// options are a JSON object literal made of this package's names and
// validated numbers, never user text.
func (c Config) vectorDistanceArgs() string {
	switch c.VectorSearch {
	case VectorSearchExact:
		return ", true"
	case VectorSearchIndex:
	default:
		panic("cosmos: vectorDistanceArgs on a Config without its defaults")
	}
	var opts []string
	if c.SearchListSizeMultiplier != 0 {
		opts = append(opts, `"searchListSizeMultiplier": `+strconv.Itoa(c.SearchListSizeMultiplier))
	}
	if c.QuantizedVectorListMultiplier != 0 {
		opts = append(opts, `"quantizedVectorListMultiplier": `+strconv.Itoa(c.QuantizedVectorListMultiplier))
	}
	if c.FilterPriority != nil {
		opts = append(opts, `"filterPriority": `+strconv.FormatFloat(*c.FilterPriority, 'g', -1, 64))
	}
	if len(opts) == 0 {
		return ""
	}
	return ", false, {" + strings.Join(opts, ", ") + "}"
}
