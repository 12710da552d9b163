package cosmos

import (
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
)

// partitionKeyHeader carries a request's partition key as a JSON array.
const partitionKeyHeader = "x-ms-documentdb-partitionkey"

// azcosmos (v1.5.0) writes the string values of partitionKeyHeader with
// strconv.QuoteToASCII, which is JSON for characters of the Basic
// Multilingual Plane (\u65e5) but not beyond it: a user id "🙂" goes out
// as ["\U0001f642"], which the service cannot parse. partitionKeyJSON
// re-encodes the header as JSON that escapes every non-ASCII character,
// those beyond the BMP as UTF-16 surrogate pairs (["\ud83d\ude42"]), as
// the .NET SDK does. For a header that was already JSON the result is the
// same bytes, so partition keys that worked before are sent unchanged (the
// service hashes the decoded value, not the header's bytes, so any JSON
// spelling of a key addresses the same partition).

// partitionKeyPolicy applies partitionKeyJSON to every request. It must
// run after azcosmos has set the header: a per-call policy of the client
// options does (the SDK's own per-call policies run first).
type partitionKeyPolicy struct{}

func (partitionKeyPolicy) Do(req *policy.Request) (*http.Response, error) {
	h := req.Raw().Header
	if vals := h.Values(partitionKeyHeader); len(vals) > 0 {
		fixed := make([]string, len(vals))
		for i, v := range vals {
			f, err := partitionKeyJSON(v)
			if err != nil {
				return nil, fmt.Errorf("cosmos: %s header: %w", partitionKeyHeader, err)
			}
			fixed[i] = f
		}
		h[http.CanonicalHeaderKey(partitionKeyHeader)] = fixed
	}
	return req.Next()
}

// withPartitionKeyPolicy returns policies with partitionKeyPolicy
// appended, never writing into the caller's backing array.
func withPartitionKeyPolicy(policies []policy.Policy) []policy.Policy {
	return append(slices.Clip(policies), partitionKeyPolicy{})
}

var errUnterminated = errors.New("unterminated string")

// partitionKeyJSON rewrites a partition key header written by azcosmos
// into JSON: each string literal (Go-quoted, which is a superset of the
// JSON the SDK writes for other values) is decoded and written again with
// jsonQuoteASCII; everything between literals is copied as it is.
func partitionKeyJSON(header string) (string, error) {
	if !strings.Contains(header, `"`) {
		return header, nil
	}
	var b strings.Builder
	b.Grow(len(header) + 16)
	for rest := header; rest != ""; {
		i := strings.IndexByte(rest, '"')
		if i < 0 {
			b.WriteString(rest)
			break
		}
		b.WriteString(rest[:i])
		rest = rest[i:]
		end := literalEnd(rest)
		if end < 0 {
			return "", fmt.Errorf("%w in %q", errUnterminated, header)
		}
		s, err := strconv.Unquote(rest[:end])
		if err != nil {
			return "", fmt.Errorf("string %s in %q: %w", rest[:end], header, err)
		}
		if !utf8.ValidString(s) {
			return "", fmt.Errorf("string %s in %q is not valid UTF-8", rest[:end], header)
		}
		b.WriteString(jsonQuoteASCII(s))
		rest = rest[end:]
	}
	return b.String(), nil
}

// literalEnd returns the length of the double-quoted literal at the start
// of s, closing quote included, or -1 if it is not closed.
func literalEnd(s string) int {
	for i := 1; i < len(s); i++ {
		switch s[i] {
		case '\\':
			i++
		case '"':
			return i + 1
		}
	}
	return -1
}

// jsonQuoteASCII returns s as a JSON string of printable ASCII: '"' and
// '\\' escaped, control characters as JSON escapes, every other non-ASCII
// rune as \uXXXX (lower-case hex, as strconv.QuoteToASCII writes), and
// runes beyond U+FFFF as a UTF-16 surrogate pair. s must be valid UTF-8.
func jsonQuoteASCII(s string) string {
	const hex = "0123456789abcdef"
	b := make([]byte, 0, len(s)+2)
	u := func(r rune) {
		b = append(b, '\\', 'u', hex[r>>12&0xf], hex[r>>8&0xf], hex[r>>4&0xf], hex[r&0xf])
	}
	b = append(b, '"')
	for _, r := range s {
		switch {
		case r == '"' || r == '\\':
			b = append(b, '\\', byte(r))
		case r >= 0x20 && r < 0x7f:
			b = append(b, byte(r))
		case r == '\b':
			b = append(b, '\\', 'b')
		case r == '\f':
			b = append(b, '\\', 'f')
		case r == '\n':
			b = append(b, '\\', 'n')
		case r == '\r':
			b = append(b, '\\', 'r')
		case r == '\t':
			b = append(b, '\\', 't')
		case r > 0xffff:
			hi, lo := utf16.EncodeRune(r)
			u(hi)
			u(lo)
		default:
			u(r)
		}
	}
	return string(append(b, '"'))
}
