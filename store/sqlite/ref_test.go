package sqlite

import (
	"context"
	"fmt"

	"github.com/agentmemory/agentmemory/store"
	"github.com/agentmemory/agentmemory/store/driver"
)

// refFTS is the name of the temporary FTS5 table refCorpus fills.
const refFTS = "am_ref_fts"

// refCorpus fills a temporary FTS5 table, tokenized like the store's,
// with the user's searchable documents of sp's kind (every one but
// superseded insights), their text as the kind's triggers index it, under
// their rowids; it returns the spec of that table and a function dropping
// it. bm25() over it uses the user's own corpus statistics.
func refCorpus(ctx context.Context, tx txn, userID string, sp spec) (spec, func() error, error) {
	if _, err := tx.ExecContext(ctx, `CREATE VIRTUAL TABLE temp.`+refFTS+` USING fts5 (c0, c1, c2, c3, tokenize = '`+tokenize+`')`); err != nil {
		return spec{}, nil, err
	}
	drop := func() error {
		_, err := tx.ExecContext(context.WithoutCancel(ctx), `DROP TABLE temp.`+refFTS)
		return err
	}
	where := "t.user_id = ?"
	if sp.kind == store.KindInsight {
		where += " AND t.superseded = 0"
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO temp.`+refFTS+` (rowid, c0, c1, c2, c3) SELECT t.rid, `+
		ftsColumns(sp.kind)+` FROM `+sp.table+` AS t WHERE `+where, userID); err != nil {
		return spec{}, nil, fmt.Errorf("%w (drop: %v)", err, drop())
	}
	ref := sp
	ref.fts = refFTS
	return ref, drop, nil
}

// refTextLeg is the text leg's reference: FTS5's own bm25() ranking of the
// user's documents for a sanitised MATCH expression, over the FTS5 table
// sp.fts, joined to the base table. Over refCorpus's table it is what the
// text leg must return.
func refTextLeg(ctx context.Context, tx txn, userID string, sp spec, f *filter, match string, k int) ([]driver.Scored, error) {
	var w where
	w.add(sp.fts+" MATCH ?", match)
	w.add("t.user_id = ?", userID)
	switch sp.kind {
	case store.KindInteraction:
		if f.session != "" {
			w.add("t.session_id = ?", f.session)
		}
	case store.KindInsight:
		w.add("t.superseded = 0")
		if f.session != "" {
			w.add(`EXISTS (SELECT 1 FROM insight_sessions AS s
	WHERE s.user_id = t.user_id AND s.session_id = ? AND s.insight_rid = t.rid)`, f.session)
		}
		if f.insightType != "" {
			w.add("t.insight_type = ?", string(f.insightType))
		}
		if f.category != "" {
			w.add("t.category = ?", f.category)
		}
	case store.KindSessionSummary:
		if f.session != "" {
			w.add("t.id = ?", f.session)
		}
	}
	if f.since != "" {
		w.add("t."+sp.timeCol+" >= ?", f.since)
	}
	if f.until != "" {
		w.add("t."+sp.timeCol+" < ?", f.until)
	}
	query := `SELECT t.id, bm25(` + sp.fts + `) AS score FROM ` + sp.fts + ` CROSS JOIN ` + sp.table +
		` AS t ON t.rid = ` + sp.fts + `.rowid WHERE ` + w.String() + ` ORDER BY score, t.id` + limitClause(k)
	rows, err := tx.QueryContext(ctx, query, w.args...)
	if err != nil {
		return nil, fmt.Errorf("full-text query: %w", err)
	}
	defer rows.Close()
	var out []driver.Scored
	for rows.Next() {
		var sc driver.Scored
		if err := rows.Scan(&sc.ID, &sc.Score); err != nil {
			return nil, err
		}
		sc.Score = -sc.Score // bm25() is lower-is-better
		out = append(out, sc)
	}
	return out, rows.Err()
}
