package cosmos

import (
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/data/azcosmos"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentmemory/agentmemory/store"
)

// sdkHeader is the header azcosmos v1.5.0 writes for a one-string
// partition key (TestSDKPartitionKeyHeader checks this model).
func sdkHeader(s string) string { return "[" + strconv.QuoteToASCII(s) + "]" }

func TestPartitionKeyJSON(t *testing.T) {
	cases := []struct {
		name, in, want string
	}{
		{"ascii", `["alice"]`, `["alice"]`},
		{"bmp", sdkHeader("日本語"), `["\u65e5\u672c\u8a9e"]`},
		{"quote", sdkHeader(`a"b`), `["a\"b"]`},
		{"backslash", sdkHeader(`a\b`), `["a\\b"]`},
		{"escaped U is text", sdkHeader(`\U0001f642`), `["\\U0001f642"]`},
		{"emoji", sdkHeader("🙂"), `["\ud83d\ude42"]`},
		{"math letter", sdkHeader("𝔘ser"), `["\ud835\udd18ser"]`},
		{"last plane", sdkHeader("\U0010FFFD"), `["\udbff\udffd"]`},
		{"first beyond BMP", sdkHeader("\U00010000"), `["\ud800\udc00"]`},
		{"last of BMP", sdkHeader("\uFFFD\uFFFF"), `["\ufffd\uffff"]`},
		{"DEL", sdkHeader("a\x7fb"), `["a\u007fb"]`},
		{"bell and vtab", sdkHeader("\a\v"), `["\u0007\u000b"]`},
		{"json escapes", sdkHeader("\b\f\n\r\t"), `["\b\f\n\r\t"]`},
		{"NUL", sdkHeader("\x00"), `["\u0000"]`},
		{"hierarchical", "[" + strconv.QuoteToASCII("🙂") + "," + strconv.QuoteToASCII("x") + "]", `["\ud83d\ude42","x"]`},
		{"mixed values", `["\U0001f642",1.5,true,null]`, `["\ud83d\ude42",1.5,true,null]`},
		{"none", `[{}]`, `[{}]`},
		{"empty", `[]`, `[]`},
		{"empty string", `[""]`, `[""]`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := partitionKeyJSON(c.in)
			require.NoError(t, err)
			assert.Equal(t, c.want, got)
			assert.True(t, json.Valid([]byte(got)), "not JSON: %s", got)
			if json.Valid([]byte(c.in)) {
				assert.Equal(t, c.in, got, "a header that was JSON is sent unchanged")
			}
		})
	}
}

func TestPartitionKeyJSONRefusesMalformedHeaders(t *testing.T) {
	for name, in := range map[string]string{
		"unterminated":  `["abc`,
		"trailing \\":   `["abc\`,
		"bad escape":    `["a\qb"]`,
		"short \\U":     `["\U0001f6"]`,
		"invalid UTF-8": sdkHeader("a\xffb"),
		"raw newline":   "[\"a\nb\"]",
	} {
		_, err := partitionKeyJSON(in)
		assert.Error(t, err, name)
	}
}

// The decoded header is the key, for every user id the stores accept.
func TestPartitionKeyJSONRoundTrips(t *testing.T) {
	for _, s := range []string{"🙂", "𝔘ser", "日本語", `a"b`, "a'b", "e\u0301", "a\u2028b", "\U000E0041",
		strings.Repeat("🙂", store.MaxIDBytes/4), "mixed 日本 🙂 \U0001D518 end"} {
		require.NoError(t, store.CheckUserID(s))
		assertRoundTrip(t, s)
	}
}

func assertRoundTrip(t *testing.T, s string) {
	t.Helper()
	in := sdkHeader(s)
	got, err := partitionKeyJSON(in)
	require.NoError(t, err, "header %s", in)
	var keys []string
	require.NoError(t, json.Unmarshal([]byte(got), &keys), "header %s rewritten as %s", in, got)
	assert.Equal(t, []string{s}, keys, "header %s rewritten as %s", in, got)
	for i := 0; i < len(got); i++ {
		require.True(t, got[i] >= 0x20 && got[i] < 0x7f, "%q is not printable ASCII", got)
	}
	if json.Valid([]byte(in)) {
		assert.Equal(t, in, got, "a header that was JSON is sent unchanged")
	}
}

func FuzzPartitionKeyJSON(f *testing.F) {
	for _, s := range []string{"alice", "🙂", "𝔘ser", "日本語", `a"b`, `a\b`, "\x7f", "\a\b\v", "\U0010FFFF", "\\U0001f642", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if !utf8.ValidString(s) {
			_, err := partitionKeyJSON(sdkHeader(s))
			assert.Error(t, err, "a key that is not UTF-8 has no JSON spelling")
			return
		}
		assertRoundTrip(t, s)
	})
}

// TestSDKPartitionKeyHeader pins down what the workaround is for: azcosmos
// writes the header as sdkHeader does, which is not JSON beyond the BMP.
// If a new SDK version writes JSON, this fails and partitionKeyPolicy can
// go.
func TestSDKPartitionKeyHeader(t *testing.T) {
	f := newFake(t, nil)
	var seen []string
	capture := policyFunc(func(req *policy.Request) (*http.Response, error) {
		if h := req.Raw().Header.Get(partitionKeyHeader); h != "" {
			seen = append(seen, h)
		}
		return req.Next()
	})
	cred, err := azcosmos.NewKeyCredential(fakeKey)
	require.NoError(t, err)
	client, err := azcosmos.NewClientWithKey(f.srv.URL, cred, &azcosmos.ClientOptions{ClientOptions: azcore.ClientOptions{
		PerCallPolicies: []policy.Policy{capture},
	}})
	require.NoError(t, err)
	c, err := client.NewContainer("db", "c")
	require.NoError(t, err)
	for _, s := range []string{"alice", "日本語", "🙂"} {
		_, _ = c.ReadItem(t.Context(), azcosmos.NewPartitionKeyString(s), "x", nil)
	}
	require.Equal(t, []string{sdkHeader("alice"), sdkHeader("日本語"), sdkHeader("🙂")}, seen)
	assert.Equal(t, `["\U0001f642"]`, seen[2])
	assert.False(t, json.Valid([]byte(seen[2])))
}

type policyFunc func(*policy.Request) (*http.Response, error)

func (p policyFunc) Do(req *policy.Request) (*http.Response, error) { return p(req) }

// Every request a Store sends carries its partition key as JSON, and a
// caller's own per-call policies still run, their slice untouched.
func TestStoreSendsPartitionKeyAsJSON(t *testing.T) {
	f := newFake(t, nil)
	var callerRan int
	mine := policyFunc(func(req *policy.Request) (*http.Response, error) { callerRan++; return req.Next() })
	callerPolicies := make([]policy.Policy, 1, 4)
	callerPolicies[0] = mine
	s := f.open(t, func(c *Config) { c.ClientOptions.PerCallPolicies = callerPolicies })
	assert.Len(t, callerPolicies, 1)
	assert.Nil(t, callerPolicies[:2][1], "the caller's backing array is not written")

	const user = "🙂𝔘"
	ctx := t.Context()
	_, _ = s.GetSession(ctx, user, "s1")
	_, _ = s.ListInsights(ctx, user, store.InsightFilter{})
	_ = s.PutInteraction(ctx, user, &store.Interaction{ID: "i1", SessionID: "s1", LastTurn: 1})
	reqs := f.requests()
	require.NotEmpty(t, reqs)
	for _, r := range reqs {
		h := r.Header.Values(partitionKeyHeader)
		require.Len(t, h, 1, "%s %s", r.Method, r.Path)
		assert.Equal(t, `["\ud83d\ude42\ud835\udd18"]`, h[0], "%s %s", r.Method, r.Path)
	}
	assert.Positive(t, callerRan)
}
