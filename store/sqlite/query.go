package sqlite

import (
	"fmt"
	"strings"
	"time"

	"github.com/agentmemory/agentmemory/store"
)

// where collects SQL conditions, each a constant fragment with ? for its
// arguments: user data only ever travels as arguments.
type where struct {
	conds []string
	args  []any
}

func (w *where) add(cond string, args ...any) {
	w.conds = append(w.conds, cond)
	w.args = append(w.args, args...)
}

// timeRange adds Since <= col < Until for the non-zero bounds.
func (w *where) timeRange(col string, since, until time.Time) {
	if !since.IsZero() {
		w.add(col+" >= ?", timeKey(since))
	}
	if !until.IsZero() {
		w.add(col+" < ?", timeKey(until))
	}
}

func (w *where) String() string { return strings.Join(w.conds, " AND ") }

// placeholders returns "?, ?, …" with n marks.
func placeholders(n int) string {
	return strings.TrimSuffix(strings.Repeat("?, ", n), ", ")
}

func checkLimit(what string, limit int) error {
	if limit < 0 {
		return fmt.Errorf("%w: %s: negative limit %d", store.ErrInvalid, what, limit)
	}
	return nil
}

// limitClause returns " LIMIT n" or "" for no limit; n is an int, not
// user text.
func limitClause(limit int) string {
	if limit <= 0 {
		return ""
	}
	return fmt.Sprintf(" LIMIT %d", limit)
}
