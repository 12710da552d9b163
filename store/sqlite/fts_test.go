package sqlite

import (
	"database/sql"
	"strings"
	"testing"
	"unicode"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestSanitise(t *testing.T) {
	cases := map[string]string{
		"":                              "",
		"   ":                           "",
		`!!! "" () * ^ :`:               "",
		"bonds":                         `"bonds"`,
		"Bonds and bonds, BONDS":        `"Bonds" OR "and"`,
		`content: NEAR(a b) OR c*`:      `"content" OR "NEAR" OR "a" OR "b" OR "OR" OR "c"`,
		`"unbalanced quote`:             `"unbalanced" OR "quote"`,
		"-excluded +required ^first":    `"excluded" OR "required" OR "first"`,
		"naïve café 東京 ٣":               `"naïve" OR "café" OR "東京" OR "٣"`,
		"nul\x00byte\xffinvalid":        `"nul" OR "byte" OR "invalid"`,
		"x AND y NOT z":                 `"x" OR "AND" OR "y" OR "NOT" OR "z"`,
		"col1:term {col1 col2}: a + b":  `"col1" OR "term" OR "col2" OR "a" OR "b"`,
		"e\u0301t\u00e9 (decomposed é)": "\"e\u0301t\u00e9\" OR \"decomposed\" OR \"é\"",
	}
	for in, want := range cases {
		assert.Equal(t, want, sanitise(in), "%q", in)
	}
}

func TestSanitiseCapsTokens(t *testing.T) {
	var words []string
	for i := range 3 * maxQueryTokens {
		words = append(words, strings.Repeat("w", i+1))
	}
	q := sanitise(strings.Join(words, " "))
	assert.Equal(t, maxQueryTokens, strings.Count(q, " OR ")+1)
	assert.True(t, strings.HasPrefix(q, `"w" OR "ww" OR`))
}

// ftsDB returns an in-memory database with an FTS5 table tokenised like the
// store's, holding a few documents.
func ftsDB(tb testing.TB) *sql.DB {
	tb.Helper()
	db, err := sql.Open("sqlite", "file::memory:")
	require.NoError(tb, err)
	db.SetMaxOpenConns(1) // one connection: one in-memory database
	tb.Cleanup(func() { db.Close() })
	_, err = db.Exec(`CREATE VIRTUAL TABLE f USING fts5 (a, b, content = '', contentless_delete = 1, tokenize = 'porter unicode61')`)
	require.NoError(tb, err)
	for i, d := range [][2]string{{"running bonds and stocks", "beta"}, {"NEAR the OR gate", ""}, {"東京 café naïve", ""}, {"content column text", ""}} {
		_, err := db.Exec(`INSERT INTO f (rowid, a, b) VALUES (?, ?, ?)`, i+1, d[0], d[1])
		require.NoError(tb, err)
	}
	return db
}

func matches(tb testing.TB, db *sql.DB, q string) (int, error) {
	var n int
	err := db.QueryRow(`SELECT count(*) FROM f WHERE f MATCH ?`, q).Scan(&n)
	return n, err
}

func TestSanitiseMatchesLiterally(t *testing.T) {
	db := ftsDB(t)
	// Unsanitised, these are FTS5 syntax errors or operators.
	for _, raw := range []string{`"unbalanced`, `a:`, `NEAR(`, `x AND`, `*`, `(`} {
		_, err := matches(t, db, raw)
		assert.Error(t, err, "raw %q should not be valid FTS5", raw)
	}
	// Unsanitised, this is a column filter: "beta" in column a only.
	n, err := matches(t, db, `a : beta`)
	require.NoError(t, err)
	require.Zero(t, n)
	cases := map[string]int{
		`"unbalanced`:           0,
		`a: running`:            1, // the column filter is a word
		`NEAR(the gate)`:        1,
		`NOT bonds`:             1, // NOT is a word, not an operator
		`run`:                   1, // porter: running → run
		`stock*`:                1, // no prefix query: stock matches stocks by stemming only
		`content:`:              1,
		`cafe`:                  1, // unicode61 removes diacritics
		`東京`:                    1,
		`walrus OR gate`:        1,
		`a : beta`:              1, // no column filter: beta anywhere
		`^running`:              1,
		`bonds -stocks`:         1,
		`"the OR gate" bonds`:   2,
		`{a b}: running NEAR/2`: 2, // running, and the word NEAR
	}
	for in, want := range cases {
		q := sanitise(in)
		n, err := matches(t, db, q)
		require.NoError(t, err, "%q → %q", in, q)
		assert.Equal(t, want, n, "%q → %q", in, q)
	}
}

// FuzzSanitise checks that for any input the sanitised query is empty only
// when the input has no word, and is otherwise accepted by a real FTS5
// MATCH without error.
func FuzzSanitise(f *testing.F) {
	for _, s := range []string{"", "bonds", `"`, `a:b`, "NEAR(a b, 2)", "x AND NOT y", "c*", "^a", "{a b}:c", "\x00", "\xff\xfe", "e\u0301"} {
		f.Add(s)
	}
	db := ftsDB(f)
	f.Fuzz(func(t *testing.T, in string) {
		q := sanitise(in)
		if q == "" {
			for _, r := range in {
				if unicode.IsLetter(r) || unicode.IsDigit(r) {
					t.Fatalf("%q has a word but sanitised to nothing", in)
				}
			}
			return
		}
		if n := strings.Count(q, `"`); n%2 != 0 || n/2 > maxQueryTokens {
			t.Fatalf("%q → %q: %d quotes", in, q, n)
		}
		if _, err := matches(t, db, q); err != nil {
			t.Fatalf("%q → %q: %v", in, q, err)
		}
	})
}
