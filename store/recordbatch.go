package store

import (
	"context"
	"errors"
	"fmt"
)

// RecordWrite is one write of a batch (WriteRecords), in partition
// UserID: Put writes a record under its ETag's rules (see PutRecord);
// Append, when Put is nil, appends a turn to its session as AppendTurn
// does; Check, when both are nil, writes nothing but fails with
// ErrConflict unless the record Check.ID is stored with ETag Check.ETag,
// so that a batch is written only while a record it was built from is as
// it was read; and when all three are nil, Delete removes the record of
// that id if there is one (a record already gone is no error).
type RecordWrite struct {
	UserID string
	Put    *Record
	Append *Turn
	Check  *RecordVersion
	Delete string
}

// RecordVersion names a record as it was read: its id and ETag.
type RecordVersion struct {
	ID, ETag string
}

// CheckVersion compares r, the record read under v.ID (nil when there is
// none), with v: a record gone or changed is ErrConflict.
func CheckVersion(v RecordVersion, r *Record) error {
	switch {
	case r == nil:
		return fmt.Errorf("%w: record %s no longer exists (ETag %s)", ErrConflict, v.ID, v.ETag)
	case r.ETag != v.ETag:
		return fmt.Errorf("%w: record %s changed: ETag %s, stored %s", ErrConflict, v.ID, v.ETag, r.ETag)
	}
	return nil
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
		case w.Check != nil:
			var cur *Record
			cur, err = r.GetRecord(ctx, w.UserID, w.Check.ID)
			if errors.Is(err, ErrNotFound) {
				cur, err = nil, nil
			}
			if err == nil {
				err = CheckVersion(*w.Check, cur)
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
