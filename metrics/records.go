package metrics

import (
	"context"

	"github.com/agentmemory/agentmemory/store"
)

// A counted store always has store.Records and store.RecordBatch: the
// store's own records, or records kept as its session documents
// (store.RecordsOf), written in batches as store.WriteRecords does, which
// is what a caller of the store counted would do either way. Their calls
// are counted as record calls; records kept as session documents are not
// counted again as session calls.

func (c *countedStore) PutRecord(ctx context.Context, userID string, r *store.Record) error {
	return observeErr(c, "put_record", func() error { return c.rec.PutRecord(ctx, userID, r) })
}

func (c *countedStore) GetRecord(ctx context.Context, userID, id string) (*store.Record, error) {
	return observe(c, "get_record", func() (*store.Record, error) { return c.rec.GetRecord(ctx, userID, id) })
}

func (c *countedStore) ListRecords(ctx context.Context, userID string, f store.RecordFilter) ([]*store.Record, error) {
	return observe(c, "list_records", func() ([]*store.Record, error) { return c.rec.ListRecords(ctx, userID, f) })
}

func (c *countedStore) DeleteRecord(ctx context.Context, userID, id string) error {
	return observeErr(c, "delete_record", func() error { return c.rec.DeleteRecord(ctx, userID, id) })
}

func (c *countedStore) WriteRecords(ctx context.Context, ws []store.RecordWrite) error {
	return observeErr(c, "write_records", func() error { return store.WriteRecords(ctx, c.rec, ws) })
}
