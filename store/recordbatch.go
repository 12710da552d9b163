package store

import (
	"context"
	"errors"
	"fmt"
)

// RecordWrite is one write of a batch (WriteRecords), in partition
// UserID: Put writes a record under its ETag's rules (see PutRecord);
// Append, when Put is nil, appends a turn to its session as AppendTurn
// does; and when both are nil, Delete removes the record of that id if
// there is one (a record already gone is no error).
type RecordWrite struct {
	UserID string
	Put    *Record
	Append *Turn
	Delete string
}

// RecordBatch is implemented by a backend that writes several records,
// and turns, of any partitions, at once: all of them or none, in one
// transaction.
type RecordBatch interface {
	// WriteRecords applies ws in order, atomically. When one fails
	// (an ETag conflict, an invalid record or turn), nothing is written
	// and the error is a *RecordWriteError naming it, with Applied 0. On
	// success every Put's ETag holds its new ETag, and every Append's
	// Seq its turn's number.
	WriteRecords(ctx context.Context, ws []RecordWrite) error
}

// RecordWriteError is the failure of one write of a batch: the write at
// Index failed with Err, after Applied writes of the batch were made (0
// for a batch written atomically; Index where the writes are made one by
// one).
type RecordWriteError struct {
	Index, Applied int
	Err            error
}

func (e *RecordWriteError) Error() string {
	return fmt.Sprintf("record write %d of the batch (%d written): %v", e.Index, e.Applied, e.Err)
}

func (e *RecordWriteError) Unwrap() error { return e.Err }

// WriteRecords writes ws with r: atomically where r is a RecordBatch,
// and otherwise one by one, in order, stopping at the first that fails
// (the writes before it stay written, as its RecordWriteError's Applied
// says). Written one by one, an Append needs r to keep Turns too; where
// it does not, the Append fails with ErrInvalid.
func WriteRecords(ctx context.Context, r Records, ws []RecordWrite) error {
	if b, ok := r.(RecordBatch); ok {
		return b.WriteRecords(ctx, ws)
	}
	for i, w := range ws {
		var err error
		switch {
		case w.Put != nil:
			err = r.PutRecord(ctx, w.UserID, w.Put)
		case w.Append != nil:
			if ts, ok := r.(Turns); ok {
				err = ts.AppendTurn(ctx, w.UserID, w.Append)
			} else {
				err = fmt.Errorf("%w: %T appends no turns", ErrInvalid, r)
			}
		default:
			if err = r.DeleteRecord(ctx, w.UserID, w.Delete); errors.Is(err, ErrNotFound) {
				err = nil
			}
		}
		if err != nil {
			return &RecordWriteError{Index: i, Applied: i, Err: err}
		}
	}
	return nil
}
