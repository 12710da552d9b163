package memoryservice

import (
	"cmp"
	"net/http"
	"slices"
	"strconv"
)

// listPage is the API's paged list.
type listPage[T any] struct {
	Object  string `json:"object"`
	Data    []T    `json:"data"`
	FirstID string `json:"first_id,omitempty"`
	LastID  string `json:"last_id,omitempty"`
	HasMore bool   `json:"has_more"`
}

// pageQuery is limit, order, after and before of a list request.
type pageQuery struct {
	limit         int
	desc          bool
	after, before string
}

// parsePage reads a list request's page query: at most 100 items (20
// unless it says), newest first unless order is asc.
func parsePage(r *http.Request) (pageQuery, error) {
	q := r.URL.Query()
	p := pageQuery{limit: 20, desc: true, after: q.Get("after"), before: q.Get("before")}
	if v := q.Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > 100 {
			return p, badRequest("limit", "%q: a whole number from 1 to 100", v)
		}
		p.limit = n
	}
	switch q.Get("order") {
	case "", "desc":
	case "asc":
		p.desc = false
	default:
		return p, badRequest("order", "%q: \"asc\" or \"desc\"", q.Get("order"))
	}
	return p, nil
}

// listOrder orders the items of a list: by at (a time), then by tie; id is
// an item's cursor.
type listOrder[T any] struct {
	id  func(T) string
	at  func(T) int64
	tie func(T) string
}

// paginate sorts items in the order p asks and returns the page after or
// before the item whose id is the cursor.
func paginate[T any](items []T, o listOrder[T], p pageQuery) (listPage[T], error) {
	slices.SortFunc(items, func(a, b T) int {
		c := cmp.Or(cmp.Compare(o.at(a), o.at(b)), cmp.Compare(o.tie(a), o.tie(b)))
		if p.desc {
			return -c
		}
		return c
	})
	start, end := 0, len(items)
	find := func(param, cursor string) (int, error) {
		for i, it := range items {
			if o.id(it) == cursor {
				return i, nil
			}
		}
		return 0, badRequest(param, "%q is not an id of this list", cursor)
	}
	if p.after != "" {
		i, err := find("after", p.after)
		if err != nil {
			return listPage[T]{}, err
		}
		start = i + 1
	}
	if p.before != "" {
		i, err := find("before", p.before)
		if err != nil {
			return listPage[T]{}, err
		}
		end = i
	}
	page := listPage[T]{Object: "list", Data: []T{}}
	if start >= end {
		return page, nil
	}
	sel := items[start:end]
	if p.before != "" && p.after == "" && len(sel) > p.limit {
		// before alone: the page just before the cursor
		sel = sel[len(sel)-p.limit:]
		page.HasMore = true
	} else if len(sel) > p.limit {
		sel = sel[:p.limit]
		page.HasMore = true
	}
	page.Data = sel
	page.FirstID, page.LastID = o.id(sel[0]), o.id(sel[len(sel)-1])
	return page, nil
}
