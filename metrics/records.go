package metrics

import (
	"context"

	"github.com/agentmemory/agentmemory/store"
)

// Records hands on the records of the store counted (store.RecordsOf
// finds them here): its own, or those kept as its session documents,
// with their calls counted as record calls (records kept as session
// documents are not counted again as session calls), and batches where
// the store counted writes them.
func (c *countedStore) Records() store.Records { return c.rec }

// countedRecords counts the calls of a store's records.
type countedRecords struct {
	c *countedStore
	r store.Records
}

// countRecords returns the records of st, counted by c.
func countRecords(c *countedStore, st store.Store) store.Records {
	r := store.RecordsOf(st)
	cr := countedRecords{c, r}
	if b, ok := r.(store.RecordBatch); ok {
		return countedBatch{cr, b}
	}
	return cr
}

func (r countedRecords) PutRecord(ctx context.Context, userID string, rec *store.Record) error {
	return observeErr(r.c, "put_record", func() error { return r.r.PutRecord(ctx, userID, rec) })
}

func (r countedRecords) GetRecord(ctx context.Context, userID, id string) (*store.Record, error) {
	return observe(r.c, "get_record", func() (*store.Record, error) { return r.r.GetRecord(ctx, userID, id) })
}

func (r countedRecords) ListRecords(ctx context.Context, userID string, f store.RecordFilter) ([]*store.Record, error) {
	return observe(r.c, "list_records", func() ([]*store.Record, error) { return r.r.ListRecords(ctx, userID, f) })
}

func (r countedRecords) DeleteRecord(ctx context.Context, userID, id string) error {
	return observeErr(r.c, "delete_record", func() error { return r.r.DeleteRecord(ctx, userID, id) })
}

// countedBatch is countedRecords of a store that writes batches.
type countedBatch struct {
	countedRecords
	b store.RecordBatch
}

func (r countedBatch) WriteRecords(ctx context.Context, ws []store.RecordWrite) error {
	return observeErr(r.c, "write_records", func() error { return r.b.WriteRecords(ctx, ws) })
}
