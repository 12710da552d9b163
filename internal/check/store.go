package check

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/agentmemory/agentmemory/store"
	"github.com/agentmemory/agentmemory/store/cosmos"
)

// dimensioner is a store that can tell the vector lengths it holds
// (store/sqlite, store/cosmos).
type dimensioner interface {
	VectorDimensions(ctx context.Context) ([]int, error)
}

// probeText is the probe document's content.
const probeText = "agentmemory check: a probe document, deleted when the check ends."

// store checks the store. probe is a vector of the embedder's, or nil when
// the embedder failed.
func (c *checker) store(ctx context.Context, st store.Store, name string, dims int, probe []float32) Section {
	sec := Section{Name: "store", Target: name}
	user := probeUser()
	var lat []time.Duration
	for i := range c.cfg.Calls {
		d, err := c.call(ctx, func(ctx context.Context) error {
			_, err := st.ListSessions(ctx, user, store.SessionFilter{})
			return err
		})
		if err != nil {
			if i == 0 {
				sec.Items = append(sec.Items, unreachable(err, "the store", "latency", "dimensions", "round trip")...)
				return sec
			}
			break
		}
		lat = append(lat, d)
	}
	sec.Items = append(sec.Items, Item{Name: "reachable", Status: OK, Detail: fmt.Sprintf("read in %s", fmtDuration(lat[0]))})
	sec.Items = append(sec.Items, c.latency(&sec, lat, "reads"))
	sec.Items = append(sec.Items, c.storeDimensions(ctx, st, dims))
	sec.Items = append(sec.Items, c.prerequisites(ctx, st)...)
	sec.Items = append(sec.Items, c.roundTrip(ctx, st, user, probe))
	return sec
}

// prerequisiter is a store that can tell which of the account's
// capabilities its containers show (store/cosmos).
type prerequisiter interface {
	Prerequisites(ctx context.Context) ([]cosmos.Prerequisite, error)
}

// prerequisites reports each capability the store relies on: OK when met,
// a warning (the store works, at a cost the detail names) when not.
func (c *checker) prerequisites(ctx context.Context, st store.Store) []Item {
	p, ok := st.(prerequisiter)
	if !ok {
		return nil
	}
	var got []cosmos.Prerequisite
	if _, err := c.call(ctx, func(ctx context.Context) error {
		var err error
		got, err = p.Prerequisites(ctx)
		return err
	}); err != nil {
		return []Item{{Name: "capabilities", Status: Fail, Detail: errText(err)}}
	}
	items := make([]Item, 0, len(got))
	for _, pr := range got {
		it := Item{Name: pr.Name, Status: OK, Detail: pr.Detail}
		if !pr.Met {
			it.Status = Warn
		}
		items = append(items, it)
	}
	return items
}

// openFailure is the store section of a store that could not be opened:
// an account that lacks a prerequisite is named with its fix; any other
// error fails "reachable".
func openFailure(name string, err error) Section {
	sec := Section{Name: "store", Target: name}
	var pe *cosmos.PrerequisiteError
	if !errors.As(err, &pe) {
		sec.Items = []Item{{Name: "reachable", Status: Fail, Detail: "cannot open: " + errText(err)}}
		return sec
	}
	reach := Item{Name: "reachable", Status: Skip, Detail: "not tried: no account accepts this configuration"}
	if pe.Container != "" {
		reach = Item{Name: "reachable", Status: OK, Detail: fmt.Sprintf("the account answered, refusing to create container %q", pe.Container)}
	}
	// The fix in full, without the service's response body.
	sec.Items = []Item{reach, {Name: pe.Prerequisite, Status: Fail, Detail: pe.Err.Error() + ": " + pe.Fix}}
	return sec
}

func (c *checker) storeDimensions(ctx context.Context, st store.Store, dims int) Item {
	const name = "dimensions"
	d, ok := st.(dimensioner)
	if !ok {
		return Item{Name: name, Status: Skip, Detail: "this store cannot tell the length of the vectors it holds"}
	}
	var got []int
	if _, err := c.call(ctx, func(ctx context.Context) error {
		var err error
		got, err = d.VectorDimensions(ctx)
		return err
	}); err != nil {
		return Item{Name: name, Status: Fail, Detail: errText(err)}
	}
	switch {
	case len(got) == 0:
		return Item{Name: name, Status: OK, Detail: fmt.Sprintf("no vectors stored yet; new ones will have the embedder's %d dimensions", dims)}
	case len(got) == 1 && got[0] == dims:
		return Item{Name: name, Status: OK, Detail: fmt.Sprintf("holds vectors of %d dimensions, the embedder's", dims)}
	}
	others := slices.DeleteFunc(slices.Clone(got), func(n int) bool { return n == dims })
	return Item{Name: name, Status: Fail, Detail: fmt.Sprintf(
		"holds vectors of %v dimensions, the embedder gives %d: they were written with another embedding model and cannot be compared with its vectors; use a new file, database or embedding model that matches",
		others, dims)}
}

// roundTrip writes a probe interaction under user, finds it by vector and
// deletes the user.
func (c *checker) roundTrip(ctx context.Context, st store.Store, user string, vec []float32) Item {
	const name = "round trip"
	if vec == nil {
		return Item{Name: name, Status: Skip, Detail: "no vector from the embedder"}
	}
	doc := &store.Interaction{ID: "probe", SessionID: "probe", Timestamp: time.Now().UTC(), FirstTurn: 1, LastTurn: 1,
		Content: probeText, ContentVector: vec, SummaryVector: vec}
	var hits []store.Hit[*store.Interaction]
	d, err := c.call(ctx, func(ctx context.Context) error {
		if err := st.PutInteraction(ctx, user, doc); err != nil {
			return fmt.Errorf("write: %w", err)
		}
		var err error
		hits, err = st.SearchInteractions(ctx, user, store.SearchRequest{Vector: vec, TopK: 1, MinSimilarity: -1})
		if err != nil {
			return fmt.Errorf("vector search: %w", err)
		}
		return nil
	})
	// The probe user goes whatever happened, on a context of its own.
	delCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), c.cfg.Timeout)
	defer cancel()
	delErr := st.DeleteUser(delCtx, user)
	switch {
	case err != nil:
		return Item{Name: name, Status: Fail, Detail: errText(err)}
	case len(hits) != 1 || hits[0].Doc.ID != doc.ID:
		return Item{Name: name, Status: Fail, Detail: fmt.Sprintf("a vector search did not find the document just written (%d hits)", len(hits))}
	case delErr != nil:
		return Item{Name: name, Status: Fail, Detail: fmt.Sprintf("wrote and found a probe document, but could not delete its user %s: %s", user, errText(delErr))}
	}
	return Item{Name: name, Status: OK, Detail: fmt.Sprintf("wrote a probe document, found it by vector (similarity %.3f) and deleted it, in %s", hits[0].Similarity, fmtDuration(d))}
}

// probeUser is a throwaway user id no real user has.
func probeUser() string {
	b := make([]byte, 8)
	_, _ = rand.Read(b)
	return "agentmemory-check-" + hex.EncodeToString(b)
}
