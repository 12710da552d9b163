package memoryservice

import (
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestPaginate: a list is ordered by time, then by its tie-break (newest
// first unless asc), and paged after or before a cursor.
func TestPaginate(t *testing.T) {
	type row struct {
		id   string
		at   int64
		name string
	}
	order := listOrder[row]{
		id:  func(r row) string { return r.id },
		at:  func(r row) int64 { return r.at },
		tie: func(r row) string { return r.name },
	}
	// Times tie for b and c, told apart by name (not by id).
	rows := func() []row {
		return []row{{"c", 2, "a-first"}, {"a", 1, "z"}, {"e", 3, "m"}, {"b", 2, "b-second"}, {"d", 3, "n"}}
	}
	ids := func(p listPage[row]) []string {
		out := []string{}
		for _, r := range p.Data {
			out = append(out, r.id)
		}
		return out
	}
	page := func(query string) listPage[row] {
		t.Helper()
		q, err := parsePage(httptest.NewRequest("GET", "/x?"+query, nil))
		require.NoError(t, err)
		p, err := paginate(rows(), order, q)
		require.NoError(t, err)
		assert.Equal(t, "list", p.Object)
		return p
	}

	p := page("")
	assert.Equal(t, []string{"d", "e", "b", "c", "a"}, ids(p), "newest first")
	assert.False(t, p.HasMore)
	assert.Equal(t, "d", p.FirstID)
	assert.Equal(t, "a", p.LastID)
	assert.Equal(t, []string{"a", "c", "b", "e", "d"}, ids(page("order=asc")))

	p = page("order=asc&limit=2")
	assert.Equal(t, []string{"a", "c"}, ids(p))
	assert.True(t, p.HasMore)
	p = page("order=asc&limit=2&after=c")
	assert.Equal(t, []string{"b", "e"}, ids(p))
	assert.True(t, p.HasMore)
	p = page("order=asc&limit=2&after=e")
	assert.Equal(t, []string{"d"}, ids(p))
	assert.False(t, p.HasMore)

	p = page("limit=2&before=a")
	assert.Equal(t, []string{"b", "c"}, ids(p), "before alone: the page just before the cursor")
	assert.True(t, p.HasMore)
	p = page("after=e&before=a")
	assert.Equal(t, []string{"b", "c"}, ids(p))
	p = page("after=a")
	assert.Equal(t, []string{}, ids(p))
	assert.Empty(t, p.FirstID)
	assert.NotNil(t, p.Data, "an empty page lists [], not null")

	q, err := parsePage(httptest.NewRequest("GET", "/x?before=nope", nil))
	require.NoError(t, err)
	_, err = paginate(rows(), order, q)
	var ae *apiError
	require.ErrorAs(t, err, &ae)
	assert.Equal(t, "before", ae.Param)
	for query, param := range map[string]string{"limit=0": "limit", "limit=101": "limit", "limit=x": "limit", "order=up": "order"} {
		_, err := parsePage(httptest.NewRequest("GET", "/x?"+query, nil))
		require.ErrorAs(t, err, &ae, query)
		assert.Equal(t, param, ae.Param, query)
	}
}
