package memoryservice

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/agentmemory/agentmemory/prompts"
	"github.com/agentmemory/agentmemory/store"
)

// Defaults of the search records that previous_search_id continues.
const (
	DefaultSearchTTL   = time.Hour
	DefaultMaxSearches = 4096
)

// Bounds on what one search record keeps of its conversation: its newest
// messages, up to maxSearchTurns of them and maxSearchBytes of text.
const (
	maxSearchTurns = 20
	maxSearchBytes = 8 << 10
)

// searchRecord is what a search leaves for a later one to continue: whose
// it was and the conversation it was given, earlier searches' included.
// It is kept in the store (searchKey), so that a search continues on any
// replica; the sweep deletes it after Config.SearchTTL, and the oldest
// of a memory store's beyond Config.MaxSearches.
type searchRecord struct {
	Scope string       `json:"scope"`
	Turns []searchTurn `json:"turns"`
	At    time.Time    `json:"at"`
}

type searchTurn struct {
	Role string `json:"role"`
	Text string `json:"text"`
}

// searchesUser is the partition of memory store name's search records.
func searchesUser(name string) string { return RegistryUserID + ".searches." + name }

func searchKey(name, id string) recKey { return recKey{searchesUser(name), "search." + id} }

// putSearch keeps search id of memory store name, its conversation
// bounded (boundTurns).
func (s *Service) putSearch(ctx context.Context, name, id, scope string, turns []prompts.Turn, at time.Time) error {
	r := searchRecord{Scope: scope, At: at}
	for _, t := range boundTurns(turns) {
		r.Turns = append(r.Turns, searchTurn{Role: t.Role, Text: t.Text})
	}
	if err := s.putRecord(ctx, searchKey(name, id), store.CreateOnly, at, false, r); err != nil {
		return fmt.Errorf("memoryservice: keep the search: %w", err)
	}
	return nil
}

// getSearch returns search id of memory store name if it is kept and
// younger than Config.SearchTTL at now; ok is false otherwise.
func (s *Service) getSearch(ctx context.Context, name, id string, now time.Time) (r *searchRecord, ok bool, err error) {
	if store.CheckID("previous_search_id", "search."+id) != nil {
		return nil, false, nil
	}
	r = &searchRecord{}
	_, err = s.getRecord(ctx, searchKey(name, id), r)
	if errors.Is(err, store.ErrNotFound) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	if now.Sub(r.At) >= s.cfg.SearchTTL {
		return nil, false, nil
	}
	return r, true, nil
}

func (r *searchRecord) turns() []prompts.Turn {
	out := make([]prompts.Turn, len(r.Turns))
	for i, t := range r.Turns {
		out[i] = prompts.Turn{Role: t.Role, Text: t.Text}
	}
	return out
}

// dropSearches deletes the search records of a scope of memory store
// name, or of every scope when scope is "".
func (s *Service) dropSearches(ctx context.Context, name, scope string) error {
	docs, err := s.listRecords(ctx, searchesUser(name), store.RecordFilter{Prefix: "search."})
	if err != nil {
		return fmt.Errorf("memoryservice: the searches to forget: %w", err)
	}
	for _, d := range docs {
		var r searchRecord
		if _, err := decodeRecord(d, &r); err == nil && scope != "" && r.Scope != scope {
			continue
		}
		if err := s.deleteRecord(ctx, recKey{searchesUser(name), d.ID}); err != nil {
			return fmt.Errorf("memoryservice: forget a search: %w", err)
		}
	}
	return nil
}

// sweepSearches deletes memory store name's search records older than
// Config.SearchTTL, and the oldest beyond Config.MaxSearches: one query
// of the store's search records.
func (s *Service) sweepSearches(ctx context.Context, name string) error {
	docs, err := s.listRecords(ctx, searchesUser(name), store.RecordFilter{Prefix: "search."})
	if err != nil {
		return err
	}
	cut := s.cfg.Now().Add(-s.cfg.SearchTTL)
	var errs []error
	for i, d := range docs { // newest first
		if i < s.cfg.MaxSearches && !d.Time.Before(cut) {
			continue
		}
		if err := s.deleteRecord(ctx, recKey{searchesUser(name), d.ID}); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// boundTurns keeps the newest turns within maxSearchTurns and
// maxSearchBytes; a newest turn longer than that keeps its end.
func boundTurns(turns []prompts.Turn) []prompts.Turn {
	if len(turns) > maxSearchTurns {
		turns = turns[len(turns)-maxSearchTurns:]
	}
	size, i := 0, len(turns)
	for i > 0 && size+len(turns[i-1].Text) <= maxSearchBytes {
		size += len(turns[i-1].Text)
		i--
	}
	if i == len(turns) && i > 0 { // the newest alone is too long
		t := turns[i-1]
		cut := len(t.Text) - maxSearchBytes
		for cut < len(t.Text) && !utf8.RuneStart(t.Text[cut]) {
			cut++
		}
		t.Text = strings.TrimSpace(t.Text[cut:])
		return []prompts.Turn{t}
	}
	return append([]prompts.Turn(nil), turns[i:]...)
}
