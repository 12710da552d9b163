package sqlite

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
)

// Each searchable document's full-text tokens are kept in the kind's terms
// table (spec.terms, schema version 4): one row per document, keyed by the
// document's rid, holding every distinct token of its indexed text with
// its number of occurrences — what FTS5 indexed for the row, without
// positions. Loading a user's text index reads these rows instead of
// running every document through the tokenizer again (which, with the
// token instances read back one SQL row each, took seconds at 10,000
// documents). The FTS5 triggers' own conditions delete a row whenever its
// document goes or its indexed text may change (the triggers of schema
// version 4), and every write stores the rows its documents lack
// (writeTerms), so a row, where there is one, is its document's current
// tokens. A document without one (a file migrated from version 3, a write
// whose tokenizing failed) is tokenized when loaded, and a shared load
// then stores what it tokenized (Store.saveTerms).

// termsFormat is the first byte of an encoded terms row.
const termsFormat = 1

// errTerms reports a terms row that does not decode.
var errTerms = errors.New("malformed terms row")

// encodeTerms encodes a document's tokens: termsFormat, the number of
// tokens, then each token (ascending, distinct) as its length, its bytes
// and its count, numbers as unsigned varints.
func encodeTerms(d *docTerms) []byte {
	ts := slices.Clone(d.terms)
	slices.SortFunc(ts, func(a, b termFreq) int { return strings.Compare(a.term, b.term) })
	n := 1 + binary.MaxVarintLen64
	for _, t := range ts {
		n += len(t.term) + 2*binary.MaxVarintLen32
	}
	b := make([]byte, 0, n)
	b = append(b, termsFormat)
	b = binary.AppendUvarint(b, uint64(len(ts)))
	for _, t := range ts {
		b = binary.AppendUvarint(b, uint64(len(t.term)))
		b = append(b, t.term...)
		b = binary.AppendUvarint(b, uint64(t.tf))
	}
	return b
}

// decodeTerms calls fn with each token of an encoded terms row, in order;
// term is valid only during the call. It fails on anything encodeTerms
// does not write, possibly after calling fn for the tokens before the
// fault.
func decodeTerms(b []byte, fn func(term []byte, tf uint32)) error {
	if len(b) == 0 || b[0] != termsFormat {
		return fmt.Errorf("%w: unknown format", errTerms)
	}
	b = b[1:]
	n, k := binary.Uvarint(b)
	if k <= 0 || n > uint64(len(b)) {
		return fmt.Errorf("%w: bad token count", errTerms)
	}
	b = b[k:]
	var prev []byte
	for i := range n {
		l, k := binary.Uvarint(b)
		if k <= 0 || l == 0 || l > uint64(len(b)-k) {
			return fmt.Errorf("%w: token %d: bad length", errTerms, i)
		}
		term := b[k : k+int(l)]
		b = b[k+int(l):]
		tf, k := binary.Uvarint(b)
		if k <= 0 || tf == 0 || tf > math.MaxUint32 {
			return fmt.Errorf("%w: token %d: bad count", errTerms, i)
		}
		b = b[k:]
		if i > 0 && bytes.Compare(prev, term) >= 0 {
			return fmt.Errorf("%w: token %d out of order", errTerms, i)
		}
		prev = term
		fn(term, uint32(tf))
	}
	if len(b) != 0 {
		return fmt.Errorf("%w: %d bytes after the last token", errTerms, len(b))
	}
	return nil
}

// termsChunk bounds the rids or ids bound to one statement.
const termsChunk = 500

// tokenizeRows runs the indexed text of the user's documents rids of one
// kind through the tokenizer, as the kind's FTS5 triggers index it, and
// returns each document's tokens (a document without text has none; rids
// not the user's are left out).
func tokenizeRows(ctx context.Context, tx txn, userID string, sp spec, rids []int64) (map[int64]*docTerms, error) {
	return tokenizeWith(ctx, tx, rids, func(part []int64) (string, []any) {
		return tokenizeSQL(sp, len(part)), append([]any{userID}, ridArgs(part)...)
	}, func(rid int64) bool { return userRow(ctx, tx, userID, sp, rid) })
}

// tokenizeDocs is tokenizeRows for documents of any user: the documents
// of a batch of writes.
func tokenizeDocs(ctx context.Context, tx txn, sp spec, rids []int64) (map[int64]*docTerms, error) {
	return tokenizeWith(ctx, tx, rids, func(part []int64) (string, []any) {
		return tokenizeDocsSQL(sp, len(part)), ridArgs(part)
	}, func(rid int64) bool {
		var one int
		return tx.QueryRowContext(ctx, docRowSQL(sp), rid).Scan(&one) == nil
	})
}

// ridArgs returns rids as statement arguments.
func ridArgs(rids []int64) []any {
	args := make([]any, len(rids))
	for i, rid := range rids {
		args[i] = rid
	}
	return args
}

// tokenizeWith runs documents through the tokenizer: insert returns the
// statement that puts a part of rids in the tokenizer table, and exists
// tells whether a document without tokens is there at all (the others
// are left out).
func tokenizeWith(ctx context.Context, tx txn, rids []int64, insert func(part []int64) (string, []any), exists func(rid int64) bool) (map[int64]*docTerms, error) {
	out := make(map[int64]*docTerms, len(rids))
	intern := make(map[string]string)
	err := withTokenizer(ctx, tx, func() error {
		for lo := 0; lo < len(rids); lo += termsChunk {
			part := rids[lo:min(lo+termsChunk, len(rids))]
			q, args := insert(part)
			if _, err := tx.ExecContext(ctx, q, args...); err != nil {
				return fmt.Errorf("tokenize: %w", err)
			}
			for _, rid := range part {
				out[rid] = &docTerms{}
			}
		}
		// Instances come in (token, row, column, offset) order: a row's
		// occurrences of one token are consecutive.
		return readInstances(ctx, tx, func(term []byte, row int64, _ int) {
			d := out[row]
			if d == nil {
				return
			}
			d.length++
			if n := len(d.terms); n > 0 && d.terms[n-1].term == string(term) {
				d.terms[n-1].tf++
				return
			}
			s, ok := intern[string(term)]
			if !ok {
				s = string(term)
				intern[s] = s
			}
			d.terms = append(d.terms, termFreq{s, 1})
		})
	})
	if err != nil {
		return nil, err
	}
	// Documents that are not there (not the user's) were not inserted.
	for rid, d := range out {
		if d.length == 0 && !exists(rid) {
			delete(out, rid)
		}
	}
	return out, nil
}

// userRow reports whether rid is one of the user's documents of the kind.
func userRow(ctx context.Context, tx txn, userID string, sp spec, rid int64) bool {
	var one int
	err := tx.QueryRowContext(ctx, userRowSQL(sp), userID, rid).Scan(&one)
	return err == nil
}

// insertTerms stores the tokens of the user's documents (by rid),
// replacing any row they have.
func insertTerms(ctx context.Context, tx txn, userID string, sp spec, terms map[int64]*docTerms) error {
	if len(terms) == 0 {
		return nil
	}
	q := insertTermsSQL(sp)
	rids := make([]int64, 0, len(terms))
	for rid := range terms {
		rids = append(rids, rid)
	}
	slices.Sort(rids)
	for _, rid := range rids {
		if _, err := tx.ExecContext(ctx, q, encodeTerms(terms[rid]), userID, rid); err != nil {
			return fmt.Errorf("store terms: %w", err)
		}
	}
	return nil
}

// termsOf is what readTerms found of one written document: its rid, and
// its tokens when it has a terms row (and they were asked for).
type termsOf struct {
	rid   int64
	terms *docTerms
	// missing: the document has no terms row (or a malformed one).
	missing bool
}

// readTerms reads the rids and terms rows of the user's documents ids of
// one kind as written in tx, with want decoding the rows there are;
// ids[i]'s is at i, the zero termsOf for an id not found.
func readTerms(ctx context.Context, tx txn, userID string, sp spec, ids []string, want bool) ([]termsOf, error) {
	type doc struct {
		rid  int64
		blob []byte
	}
	byID := make(map[string]doc, len(ids))
	for lo := 0; lo < len(ids); lo += termsChunk {
		part := ids[lo:min(lo+termsChunk, len(ids))]
		args := make([]any, 0, len(part)+1)
		args = append(args, userID)
		for _, id := range part {
			args = append(args, id)
		}
		err := func() error {
			rows, err := tx.QueryContext(ctx, readTermsSQL(sp, len(part)), args...)
			if err != nil {
				return err
			}
			defer rows.Close()
			for rows.Next() {
				var id string
				var d doc
				if err := rows.Scan(&id, &d.rid, &d.blob); err != nil {
					return err
				}
				byID[id] = d
			}
			return rows.Err()
		}()
		if err != nil {
			return nil, fmt.Errorf("read terms: %w", err)
		}
	}
	out := make([]termsOf, len(ids))
	for i, id := range ids {
		d, ok := byID[id]
		if !ok {
			continue
		}
		out[i] = termsOf{rid: d.rid, missing: d.blob == nil}
		if d.blob == nil || !want {
			continue
		}
		dt, err := decodeDocTerms(d.blob)
		if err != nil {
			out[i].missing = true // rewritten with the missing ones
			continue
		}
		out[i].terms = dt
	}
	return out, nil
}

// insertDocTerms stores the tokens of documents of any user (by rid),
// replacing any row they have.
func insertDocTerms(ctx context.Context, tx txn, sp spec, terms map[int64]*docTerms) error {
	rids := make([]int64, 0, len(terms))
	for rid := range terms {
		rids = append(rids, rid)
	}
	slices.Sort(rids)
	q := insertDocTermsSQL(sp)
	for _, rid := range rids {
		if _, err := tx.ExecContext(ctx, q, encodeTerms(terms[rid]), rid); err != nil {
			return fmt.Errorf("store terms: %w", err)
		}
	}
	return nil
}

// tokenizeSQL runs n of the user's documents of sp's kind (by rid)
// through the tokenizer table, as the kind's FTS5 triggers index them.
func tokenizeSQL(sp spec, n int) string {
	return `INSERT INTO temp.am_tok (rowid, c0, c1, c2, c3) SELECT t.rid, ` + ftsColumns(sp.kind) + ` FROM ` + sp.table +
		` AS t WHERE t.user_id = ? AND t.rid IN (` + placeholders(n) + `)`
}

// readTermsSQL reads the rid and terms row of n of the user's documents
// of sp's kind (by id).
func readTermsSQL(sp spec, n int) string {
	return `SELECT t.id, t.rid, x.terms FROM ` + sp.table + ` AS t
LEFT JOIN ` + sp.terms + ` AS x ON x.rid = t.rid WHERE t.user_id = ? AND t.id IN (` + placeholders(n) + `)`
}

// insertTermsSQL stores the terms row of one of the user's documents.
func insertTermsSQL(sp spec) string {
	return `INSERT OR REPLACE INTO ` + sp.terms + ` (rid, terms)
SELECT rid, ? FROM ` + sp.table + ` WHERE user_id = ? AND rid = ?`
}

// userRowSQL selects 1 for one of the user's documents (by rid).
func userRowSQL(sp spec) string {
	return `SELECT 1 FROM ` + sp.table + ` WHERE user_id = ? AND rid = ?`
}

// tokenizeDocsSQL is tokenizeSQL for n documents of any user.
func tokenizeDocsSQL(sp spec, n int) string {
	return `INSERT INTO temp.am_tok (rowid, c0, c1, c2, c3) SELECT t.rid, ` + ftsColumns(sp.kind) + ` FROM ` + sp.table +
		` AS t WHERE t.rid IN (` + placeholders(n) + `)`
}

// insertDocTermsSQL stores the terms row of a document of any user.
func insertDocTermsSQL(sp spec) string {
	return `INSERT OR REPLACE INTO ` + sp.terms + ` (rid, terms) SELECT rid, ? FROM ` + sp.table + ` WHERE rid = ?`
}

// docRowSQL selects 1 for a document (by rid).
func docRowSQL(sp spec) string {
	return `SELECT 1 FROM ` + sp.table + ` WHERE rid = ?`
}

// decodeDocTerms decodes a terms row into a docTerms.
func decodeDocTerms(b []byte) (*docTerms, error) {
	d := &docTerms{}
	err := decodeTerms(b, func(term []byte, tf uint32) {
		d.terms = append(d.terms, termFreq{string(term), tf})
		d.length += int(tf)
	})
	if err != nil {
		return nil, err
	}
	return d, nil
}
