package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"sync"
)

// tokenize must be the tokenizer of the FTS5 tables in the schema
// (TestTokenizerMatchesSchema checks it).
const tokenize = "porter unicode61"

// tokSetup creates the connection's temporary tokenizer table and its
// instance view, if not already there. Temporary objects are per
// connection and never touch the database file.
var tokSetup = []string{
	`CREATE VIRTUAL TABLE IF NOT EXISTS temp.am_tok USING fts5 (c0, c1, c2, c3, content = '', tokenize = '` + tokenize + `')`,
	`CREATE VIRTUAL TABLE IF NOT EXISTS temp.am_tok_inst USING fts5vocab (temp, am_tok, 'instance')`,
}

// Statements on the tokenizer table.
const (
	tokClear     = `INSERT INTO temp.am_tok (am_tok) VALUES ('delete-all')`
	tokInstances = `SELECT term, doc, offset FROM temp.am_tok_inst`
)

// withTokenizer runs fn with the connection's temporary tokenizer table
// ready and empty, and empties it afterwards.
func withTokenizer(ctx context.Context, tx txn, fn func() error) (err error) {
	for _, q := range tokSetup {
		if _, err := tx.ExecContext(ctx, q); err != nil {
			return fmt.Errorf("tokenizer table: %w", err)
		}
	}
	defer func() {
		if _, derr := tx.ExecContext(context.WithoutCancel(ctx), tokClear); derr != nil {
			err = errors.Join(err, fmt.Errorf("tokenizer table: %w", derr))
		}
	}()
	return fn()
}

// readInstances calls fn for every token instance in the tokenizer table,
// in (token, row, column, offset) order. The token bytes are valid only
// during the call.
func readInstances(ctx context.Context, tx txn, fn func(term []byte, row int64, off int)) error {
	rows, err := tx.QueryContext(ctx, tokInstances)
	if err != nil {
		return fmt.Errorf("read tokens: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var term sql.RawBytes
		var row int64
		var off int
		if err := rows.Scan(&term, &row, &off); err != nil {
			return err
		}
		fn(term, row, off)
	}
	return rows.Err()
}

// tokenCache remembers the tokens of query words (by exact text): the
// tokenizer is deterministic, so entries never go stale.
type tokenCache struct {
	mu sync.Mutex
	m  map[string][]string
}

const tokenCacheMax = 8192

func (c *tokenCache) get(w string) ([]string, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	t, ok := c.m[w]
	return t, ok
}

func (c *tokenCache) put(w string, toks []string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil || len(c.m) >= tokenCacheMax {
		c.m = make(map[string][]string)
	}
	c.m[w] = toks
}

// queryTokens returns the FTS5 tokens of each query word, in order.
func (s *Store) queryTokens(ctx context.Context, tx txn, words []string) ([][]string, error) {
	out := make([][]string, len(words))
	var missing []int
	for i, w := range words {
		if t, ok := s.toks.get(w); ok {
			out[i] = t
		} else {
			missing = append(missing, i)
		}
	}
	if len(missing) == 0 {
		return out, nil
	}
	type at struct {
		tok string
		off int
	}
	found := make(map[int64][]at)
	err := withTokenizer(ctx, tx, func() error {
		// One statement for all the words: a statement costs tens of
		// microseconds, a word's tokenizing far less.
		var q strings.Builder
		q.WriteString(`INSERT INTO temp.am_tok (rowid, c0) VALUES `)
		args := make([]any, 0, 2*len(missing))
		for j, i := range missing {
			if j > 0 {
				q.WriteString(", ")
			}
			q.WriteString("(?, ?)")
			args = append(args, i+1, words[i])
		}
		if _, err := tx.ExecContext(ctx, q.String(), args...); err != nil {
			return fmt.Errorf("tokenize query: %w", err)
		}
		return readInstances(ctx, tx, func(term []byte, row int64, off int) {
			found[row-1] = append(found[row-1], at{string(term), off})
		})
	})
	if err != nil {
		return nil, err
	}
	for _, i := range missing {
		ats := found[int64(i)]
		toks := make([]string, len(ats))
		for _, a := range ats {
			if a.off >= 0 && a.off < len(toks) {
				toks[a.off] = a.tok
			}
		}
		out[i] = toks
		s.toks.put(words[i], toks)
	}
	return out, nil
}
