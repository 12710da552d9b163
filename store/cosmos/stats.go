package cosmos

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"

	"github.com/agentmemory/agentmemory/store"
)

// Op names a kind of request the store sends, for Stats.
type Op string

// Request kinds.
const (
	OpRead      Op = "read"      // point read
	OpCreate    Op = "create"    // insert of a new document
	OpUpsert    Op = "upsert"    // unconditional write
	OpReplace   Op = "replace"   // conditional write (If-Match)
	OpDelete    Op = "delete"    // point delete
	OpQuery     Op = "query"     // one page of a query
	opProvision Op = "provision" // database and container creation
)

// OpStats are the totals of one request kind.
type OpStats struct {
	// Requests counts the requests that got an answer (failed ones too).
	Requests int64
	// Errors counts the answers that were errors (404s and 412s included).
	Errors int64
	// RequestCharge is the sum of the x-ms-request-charge of the answers.
	RequestCharge float64
}

// Stats are a store's request totals per request kind since Open.
type Stats map[Op]OpStats

// Total sums every request kind.
func (st Stats) Total() OpStats {
	var t OpStats
	for _, o := range st {
		t.Requests += o.Requests
		t.Errors += o.Errors
		t.RequestCharge += o.RequestCharge
	}
	return t
}

// stats accumulates OpStats; the zero value is ready.
type stats struct {
	mu sync.Mutex
	m  map[Op]OpStats
}

func (s *stats) add(op Op, ru float64) { s.record(op, ru, false) }

func (s *stats) record(op Op, ru float64, failed bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.m == nil {
		s.m = make(map[Op]OpStats)
	}
	o := s.m[op]
	o.Requests++
	o.RequestCharge += ru
	if failed {
		o.Errors++
	}
	s.m[op] = o
}

// Stats returns a snapshot of the request totals per request kind: the
// number of requests and the request units (RU) they were charged.
func (s *Store) Stats() Stats {
	s.stats.mu.Lock()
	defer s.stats.mu.Unlock()
	out := make(Stats, len(s.stats.m))
	for k, v := range s.stats.m {
		out[k] = v
	}
	return out
}

// observe records one answered request (ru is its charge when it
// succeeded; a failed one's charge is read from the error's response) and
// logs it at Debug.
func (s *Store) observe(ctx context.Context, op Op, kind store.Kind, ru float32, start time.Time, err error) {
	charge := float64(ru)
	status := http.StatusOK
	if err != nil {
		var re *azcore.ResponseError
		if !errors.As(err, &re) {
			return // no answer: transport error or cancelled context
		}
		status = re.StatusCode
		if re.RawResponse != nil {
			if f, perr := strconv.ParseFloat(re.RawResponse.Header.Get("x-ms-request-charge"), 64); perr == nil {
				charge = f
			}
		}
	}
	s.stats.record(op, charge, err != nil)
	if s.log.Enabled(ctx, slog.LevelDebug) {
		s.log.DebugContext(ctx, "cosmos request", "op", string(op), "container", s.names[kind],
			"status", status, "request_charge", charge, "duration", time.Since(start))
	}
}

// mapErr wraps a service error with the store sentinel its status means:
// 404 is ErrNotFound, 409 and 412 are ErrConflict, 413 is ErrInvalid.
// what names the operation and document.
func mapErr(what string, err error) error {
	if err == nil {
		return nil
	}
	switch statusOf(err) {
	case http.StatusNotFound:
		return fmt.Errorf("%w: %s: %w", store.ErrNotFound, what, err)
	case http.StatusConflict, http.StatusPreconditionFailed:
		return fmt.Errorf("%w: %s: %w", store.ErrConflict, what, err)
	case http.StatusRequestEntityTooLarge:
		return fmt.Errorf("%w: %s: %w", store.ErrInvalid, what, err)
	}
	return fmt.Errorf("cosmos: %s: %w", what, err)
}
