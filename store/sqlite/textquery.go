package sqlite

import (
	"cmp"
	"context"
	"fmt"
	"slices"

	"github.com/agentmemory/agentmemory/store/driver"
)

// textLegIndex ranks the user's documents in the index x for the query
// words (one FTS5 phrase each, as sanitise makes them), by BM25 over the
// user's corpus: the text leg.
func (s *Store) textLegIndex(ctx context.Context, tx txn, userID string, x *textIndex, sp spec, f *filter, words []string, k int) ([]driver.Scored, error) {
	ph, err := s.queryPhrases(ctx, tx, userID, x, sp, words)
	if err != nil {
		return nil, err
	}
	sc, _ := s.scratch.Get().(*scores)
	if sc == nil {
		sc = new(scores)
	}
	defer s.scratch.Put(sc)
	out, _ := x.rank(sc, f, ph, k)
	return out, nil
}

// queryPhrases returns the phrases of the query words over x, in order.
func (s *Store) queryPhrases(ctx context.Context, tx txn, userID string, x *textIndex, sp spec, words []string) ([]phrase, error) {
	toks, err := s.queryTokens(ctx, tx, words)
	if err != nil {
		return nil, err
	}
	ph := make([]phrase, len(toks))
	for i, t := range toks {
		switch len(t) {
		case 0:
			// No token: matches nothing.
		case 1:
			if ti, ok := x.terms[t[0]]; ok {
				ph[i] = phrase{post: x.postings[ti], df: int(x.df[ti])}
			}
		default:
			if ph[i], err = phraseOf(ctx, tx, userID, x, sp, t); err != nil {
				return nil, err
			}
		}
	}
	return ph, nil
}

// phraseOf finds the live documents of the user's index x holding the
// phrase toks (two tokens or more, consecutive in one column, as FTS5
// matches a phrase) and counts its occurrences in each, by tokenizing with
// positions the documents that hold every one of its tokens.
func phraseOf(ctx context.Context, tx txn, userID string, x *textIndex, sp spec, toks []string) (phrase, error) {
	// The documents holding every token: the intersection of the
	// postings, from the rarest token's.
	lists := make([]phrase, len(toks))
	for i, t := range toks {
		ti, ok := x.terms[t]
		if !ok {
			return phrase{}, nil
		}
		lists[i] = phrase{post: x.postings[ti]}
	}
	slices.SortFunc(lists, func(a, b phrase) int { return cmp.Compare(len(a.post), len(b.post)) })
	var cand []uint32
	for _, p := range lists[0].post {
		if x.lens[p.slot] < 0 {
			continue
		}
		in := true
		for j := 1; j < len(lists) && in; j++ {
			in = lists[j].tfIn(p.slot) > 0
		}
		if in {
			cand = append(cand, p.slot)
		}
	}
	if len(cand) == 0 {
		return phrase{}, nil
	}
	type place struct {
		row    int64
		col    string
		offset int
	}
	at := make(map[place]string)
	var starts []place
	err := withTokenizer(ctx, tx, func() error {
		// A temporary row per candidate, numbered by its place in cand.
		for i, slot := range cand {
			if _, err := tx.ExecContext(ctx, `INSERT INTO temp.am_tok (rowid, c0, c1, c2, c3) SELECT ?, `+
				ftsColumns(sp.kind)+` FROM `+sp.table+` AS t WHERE t.user_id = ? AND t.id = ?`, i+1, userID, x.docs[slot].row.id); err != nil {
				return fmt.Errorf("tokenize: %w", err)
			}
		}
		args := make([]any, len(toks))
		for i, t := range toks {
			args[i] = t
		}
		rows, err := tx.QueryContext(ctx, `SELECT term, doc, col, offset FROM temp.am_tok_inst WHERE term IN (`+placeholders(len(toks))+`)`, args...)
		if err != nil {
			return fmt.Errorf("read tokens: %w", err)
		}
		defer rows.Close()
		for rows.Next() {
			var term string
			var p place
			if err := rows.Scan(&term, &p.row, &p.col, &p.offset); err != nil {
				return err
			}
			at[p] = term
			if term == toks[0] {
				starts = append(starts, p)
			}
		}
		return rows.Err()
	})
	if err != nil {
		return phrase{}, err
	}
	var out phrase
	for _, p := range starts {
		match := true
		for j := 1; j < len(toks) && match; j++ {
			match = at[place{p.row, p.col, p.offset + j}] == toks[j]
		}
		if !match {
			continue
		}
		slot := cand[p.row-1]
		if n := len(out.post); n > 0 && out.post[n-1].slot == slot {
			out.post[n-1].tf++
			continue
		}
		out.post = append(out.post, posting{slot, 1})
	}
	// starts came in (token, row, column, offset) order: rows ascend with
	// slots, since cand does.
	out.df = len(out.post)
	return out, nil
}
