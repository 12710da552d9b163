package provider

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"time"
)

// errQueueClosed reports work offered after Close.
var errQueueClosed = errors.New("provider: closed")

// job is one piece of background memory work. Jobs are idempotent: a job
// dropped or failed is redone by the next trigger.
type job struct {
	key  string // coalescing key: a job whose key is queued is not queued twice
	what string
	run  func(context.Context) error
	// vals is the context of the call that queued the job: the job runs
	// with its values (a usage.Meter, a trace) and the queue's
	// cancellation. Nil means none.
	vals context.Context
}

// valuesOf is a context with the cancellation of one context and the
// values of another.
type valuesOf struct {
	context.Context
	vals context.Context
}

func (c valuesOf) Value(key any) any { return c.vals.Value(key) }

// carrying returns the values of ctx for job.vals, without its
// cancellation: the job outlives the call that queued it.
func carrying(ctx context.Context) context.Context { return context.WithoutCancel(ctx) }

// queue runs jobs on a fixed set of workers, retrying failures with
// exponential backoff. It is bounded: a job offered to a full queue is
// dropped and logged, never blocking the caller.
type queue struct {
	log      *slog.Logger
	attempts int
	backoff  time.Duration

	ch      chan job
	ctx     context.Context // cancelled when Close gives up draining
	cancel  context.CancelFunc
	workers sync.WaitGroup

	mu      sync.Mutex
	closed  bool
	queued  map[string]bool
	pending int             // jobs queued or running
	idle    []chan struct{} // closed when pending reaches zero
}

func newQueue(size, workers, attempts int, backoff time.Duration, log *slog.Logger) *queue {
	ctx, cancel := context.WithCancel(context.Background())
	q := &queue{log: log, attempts: attempts, backoff: backoff, ch: make(chan job, size), ctx: ctx, cancel: cancel, queued: make(map[string]bool)}
	q.workers.Add(workers)
	for range workers {
		go q.work()
	}
	return q
}

// offer queues j unless an equal job is already queued, the queue is full
// or closed. It reports whether j was queued. A job coalesced into one
// already queued runs with the values of the first.
func (q *queue) offer(j job) bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.closed {
		q.log.Warn("memory: background work refused after Close", "job", j.what)
		return false
	}
	if q.queued[j.key] {
		return true
	}
	select {
	case q.ch <- j:
		q.queued[j.key] = true
		q.pending++
		return true
	default:
		q.log.Warn("memory: background queue full; work dropped until its next trigger", "job", j.what, "capacity", cap(q.ch))
		return false
	}
}

func (q *queue) work() {
	defer q.workers.Done()
	for j := range q.ch {
		q.mu.Lock()
		delete(q.queued, j.key) // a new trigger from now on queues a fresh run
		q.mu.Unlock()
		q.runWithRetry(j)
		q.done()
	}
}

func (q *queue) runWithRetry(j job) {
	wait := q.backoff
	ctx := q.ctx
	if j.vals != nil {
		ctx = valuesOf{Context: q.ctx, vals: j.vals}
	}
	for attempt := 1; ; attempt++ {
		err := j.run(ctx)
		if err == nil {
			return
		}
		if attempt >= q.attempts || q.ctx.Err() != nil {
			q.log.Error("memory: background work failed; it is retried at its next trigger", "job", j.what, "attempts", attempt, "err", err)
			return
		}
		q.log.Warn("memory: background work failed; retrying", "job", j.what, "attempt", attempt, "backoff", wait, "err", err)
		select {
		case <-time.After(wait):
			wait *= 2
		case <-q.ctx.Done():
			return
		}
	}
}

func (q *queue) done() {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.pending--
	if q.pending == 0 {
		for _, c := range q.idle {
			close(c)
		}
		q.idle = nil
	}
}

// flush waits until no job is queued or running.
func (q *queue) flush(ctx context.Context) error {
	q.mu.Lock()
	if q.pending == 0 {
		q.mu.Unlock()
		return nil
	}
	c := make(chan struct{})
	q.idle = append(q.idle, c)
	q.mu.Unlock()
	select {
	case <-c:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// close stops accepting jobs and drains the queue; when ctx ends first, the
// running jobs are cancelled and the rest abandoned.
func (q *queue) close(ctx context.Context) error {
	q.mu.Lock()
	if q.closed {
		q.mu.Unlock()
		return nil
	}
	q.closed = true
	close(q.ch)
	q.mu.Unlock()
	stopped := make(chan struct{})
	go func() { q.workers.Wait(); close(stopped) }()
	select {
	case <-stopped:
		q.cancel()
		return nil
	case <-ctx.Done():
		q.cancel()
		<-stopped
		return ctx.Err()
	}
}
