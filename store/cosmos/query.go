package cosmos

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/data/azcosmos"

	"github.com/agentmemory/agentmemory/store"
)

// sqlQuery is a parameterised query under construction. Its text holds
// only constants of this package (field names, operators) and @names;
// every value, user data or not, travels as a parameter.
type sqlQuery struct {
	where  []string
	params []azcosmos.QueryParameter
}

// newQuery starts a query of the user's documents. The partition key
// header already scopes every query to the user's logical partition; the
// user_id predicate is defence in depth (an engine that ignored the header
// would still see only the user's documents).
func newQuery(userID string) *sqlQuery {
	q := &sqlQuery{}
	q.cond("c.user_id = " + q.param(userID))
	return q
}

// param adds a parameter and returns its name.
func (q *sqlQuery) param(v any) string {
	name := "@p" + strconv.Itoa(len(q.params))
	q.params = append(q.params, azcosmos.QueryParameter{Name: name, Value: v})
	return name
}

// cond adds a WHERE conjunct.
func (q *sqlQuery) cond(expr string) { q.where = append(q.where, expr) }

// timeRange adds since <= field < until for the non-zero bounds.
func (q *sqlQuery) timeRange(field string, since, until time.Time) {
	if !since.IsZero() {
		q.cond(field + " >= " + q.param(timeKey(since)))
	}
	if !until.IsZero() {
		q.cond(field + " < " + q.param(timeKey(until)))
	}
}

// active keeps insights that are not superseded (supersede_reason is
// omitted when empty).
func (q *sqlQuery) active() {
	q.cond(`(NOT IS_DEFINED(c.supersede_reason) OR c.supersede_reason = "")`)
}

// whereClause returns " WHERE a AND b ...".
func (q *sqlQuery) whereClause() string {
	if len(q.where) == 0 {
		return ""
	}
	return " WHERE " + strings.Join(q.where, " AND ")
}

// timeField is the ordered time field of a kind.
func timeField(kind store.Kind) string {
	switch kind {
	case store.KindInteraction:
		return "c.timestamp"
	case store.KindInsight:
		return "c.created_at"
	}
	return "c.start_time"
}

// searchFilters adds a SearchRequest's filters for kind.
func (q *sqlQuery) searchFilters(kind store.Kind, r store.SearchRequest) {
	switch kind {
	case store.KindInteraction:
		if r.SessionID != "" {
			q.cond("c.session_id = " + q.param(r.SessionID))
		}
	case store.KindInsight:
		q.active()
		if r.SessionID != "" {
			q.cond("ARRAY_CONTAINS(c.session_ids, " + q.param(r.SessionID) + ")")
		}
		if r.InsightType != "" {
			q.cond("c.insight_type = " + q.param(string(r.InsightType)))
		}
		if r.Category != "" {
			q.cond("c.category = " + q.param(r.Category))
		}
	case store.KindSessionSummary:
		q.sessionDocs()
		if r.SessionID != "" {
			q.cond("c.id = " + q.param(r.SessionID))
		}
	}
	q.timeRange(timeField(kind), r.Since, r.Until)
}

// query runs a query in the user's partition and returns every document,
// following continuations. Each page is one request in Stats.
func (s *Store) query(ctx context.Context, kind store.Kind, userID, sql string, params []azcosmos.QueryParameter) ([][]byte, error) {
	pager := s.container(kind).NewQueryItemsPager(sql, pk(userID), &azcosmos.QueryOptions{
		QueryParameters: params,
		PageSizeHint:    defaultQueryPageSizeHint,
	})
	var out [][]byte
	for pager.More() {
		start := time.Now()
		page, err := pager.NextPage(ctx)
		s.observe(ctx, OpQuery, kind, page.RequestCharge, start, err)
		if err != nil {
			return nil, err
		}
		out = append(out, page.Items...)
	}
	return out, nil
}

// queryDocs runs a query and decodes every result as a T.
func queryDocs[T any](ctx context.Context, s *Store, kind store.Kind, userID, what, sql string, params []azcosmos.QueryParameter) ([]*T, error) {
	items, err := s.query(ctx, kind, userID, sql, params)
	if err != nil {
		return nil, mapErr(what, err)
	}
	out := make([]*T, 0, len(items))
	for _, b := range items {
		d, err := decode[T](b)
		if err != nil {
			return nil, fmt.Errorf("cosmos: %s: %w", what, err)
		}
		out = append(out, d)
	}
	return out, nil
}
