package memoryservice

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/agentmemory/agentmemory/store"
)

// recordsMoved is the record saying that the records an earlier version
// kept as session documents are where the store keeps records now
// (migrateRecords has run to its end). It has a partition of its own, so
// no listing of the registry's records reads it.
var recordsMoved = recKey{RegistryUserID + ".records", "moved"}

// migrateRecords moves the service's records from session documents,
// where every version before store.Records kept them, into the store's
// own Records, partition by partition: each scope's updates, each memory
// store's scopes and searches, the markers, the forgets, and the
// registry last, so that a migration cut short finds every partition it
// has still to move from the registry's documents when it runs again. A
// record is copied create-only (a copy made already is kept) before its
// document is deleted. On a store that keeps records as session
// documents (the registry's first document is its own record) nothing
// moves. Either way a record of its own (recordsMoved) then says so, and later starts read
// that one record. Every replica on the store must run this version
// before any accepts: the records an older one writes are not seen.
func (s *Service) migrateRecords(ctx context.Context) error {
	_, err := s.rec.GetRecord(ctx, recordsMoved.user, recordsMoved.id)
	if err == nil {
		return nil
	}
	if !errors.Is(err, store.ErrNotFound) {
		return fmt.Errorf("memoryservice: read the records' migration: %w", err)
	}
	old := store.SessionRecords(s.st)
	registry, err := old.ListRecords(ctx, RegistryUserID, store.RecordFilter{})
	if err != nil {
		return fmt.Errorf("memoryservice: list the registry's session documents: %w", err)
	}
	if len(registry) > 0 && !s.keptAsSessions(ctx, registry[0]) {
		parts, err := s.recordPartitions(ctx, old, registry)
		if err != nil {
			return err
		}
		moved := 0
		for _, part := range parts {
			n, err := s.moveRecords(ctx, old, part)
			moved += n
			if err != nil {
				return err
			}
		}
		s.log.InfoContext(ctx, "memoryservice: records moved from session documents to the store's records", "records", moved, "partitions", len(parts))
	}
	if err := s.putRecord(ctx, recordsMoved, "", s.cfg.Now(), false, struct{}{}); err != nil {
		return fmt.Errorf("memoryservice: record the records' migration: %w", err)
	}
	return nil
}

// keptAsSessions reports whether the service's records are the session
// documents themselves: d, read as a session document, is the record
// of its id, with the same ETag.
func (s *Service) keptAsSessions(ctx context.Context, d *store.Record) bool {
	r, err := s.rec.GetRecord(ctx, RegistryUserID, d.ID)
	return err == nil && r.ETag == d.ETag
}

// recordPartitions lists the partitions that may hold records as session
// documents, the registry's last: from the registry's documents, the
// memory stores and their scopes, and the markers of the updates not
// finished, whose ids name their partitions (so that an unreadable scope
// record, logged, strands none of them).
func (s *Service) recordPartitions(ctx context.Context, old store.Records, registry []*store.Record) ([]string, error) {
	var updates, rest []string
	seen := map[string]bool{}
	update := func(part string) {
		if !seen[part] {
			seen[part] = true
			updates = append(updates, part)
		}
	}
	scope := func(d *store.Record) {
		var sc scopeRecord
		if _, err := decodeRecord(d, &sc); err != nil || sc.Store == "" {
			s.log.ErrorContext(ctx, "memoryservice: unreadable scope record: its scope's finished updates are not moved to records", "id", d.ID, "err", err)
			return
		}
		update(updatesUser(scopeHash(sc.Store, sc.Scope)))
	}
	for _, d := range registry {
		switch {
		case strings.HasPrefix(d.ID, "scope."): // kept in the registry by older versions still
			scope(d)
		case strings.HasPrefix(d.ID, "store."):
			name := strings.TrimPrefix(d.ID, "store.")
			scopes, err := old.ListRecords(ctx, scopesUser(name), store.RecordFilter{Prefix: "scope."})
			if err != nil {
				return nil, fmt.Errorf("memoryservice: list the scopes of memory store %q to move their records: %w", name, err)
			}
			for _, sd := range scopes {
				scope(sd)
			}
			rest = append(rest, scopesUser(name), searchesUser(name))
		}
	}
	markers, err := old.ListRecords(ctx, activeUser, store.RecordFilter{Prefix: "update."})
	if err != nil {
		return nil, fmt.Errorf("memoryservice: list the updates' markers to move their records: %w", err)
	}
	for _, m := range markers {
		if part := updateHome(strings.TrimPrefix(m.ID, "update.")); part != RegistryUserID {
			update(part)
		}
	}
	return append(append(updates, rest...), activeUser, forgetsUser, RegistryUserID), nil
}

// moveRecords moves partition part's session documents to records and
// returns how many it moved. A document the store refuses as a record
// (store.ErrInvalid: a body that is not JSON) is logged and left where it
// is, as it was: the service no longer reads it, and the others move.
func (s *Service) moveRecords(ctx context.Context, old store.Records, part string) (int, error) {
	docs, err := old.ListRecords(ctx, part, store.RecordFilter{})
	if err != nil {
		return 0, fmt.Errorf("memoryservice: list records to move in %s: %w", part, err)
	}
	moved := 0
	for _, d := range docs {
		c := *d
		c.ETag = store.CreateOnly
		err := s.rec.PutRecord(ctx, part, &c)
		switch {
		case errors.Is(err, store.ErrInvalid):
			s.log.ErrorContext(ctx, "memoryservice: a record that cannot be moved is left as a session document", "partition", part, "id", d.ID, "err", err)
			continue
		case err != nil && !errors.Is(err, store.ErrConflict):
			return moved, fmt.Errorf("memoryservice: move record %s of %s: %w", d.ID, part, err)
		}
		if err := old.DeleteRecord(ctx, part, d.ID); err != nil && !errors.Is(err, store.ErrNotFound) {
			return moved, fmt.Errorf("memoryservice: delete record %s of %s, moved: %w", d.ID, part, err)
		}
		moved++
	}
	return moved, nil
}
