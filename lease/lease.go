// Package lease gives a user's background work to one process at a time,
// across every process and replica on a store: the holder's name and an
// expiry in the user's store.UserState, taken and released with
// ETag-guarded writes, so that two processes racing for it cannot both
// win. A holder that dies leaves a lease that expires; one that outlives
// its lease may overlap with the next holder, so the TTL should exceed the
// longest piece of work.
package lease

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/agentmemory/agentmemory/store"
)

// Defaults for zero Config fields.
const (
	DefaultTTL  = 5 * time.Minute
	DefaultPoll = 200 * time.Millisecond
)

// ErrHeld reports a lease another owner held until the caller's context
// ended.
var ErrHeld = errors.New("lease: held by another owner")

// Store is what a lease needs of a store.
type Store = store.UserStates

// Config tunes Acquire. The zero value uses the defaults.
type Config struct {
	// TTL is how long a lease lasts; zero means DefaultTTL.
	TTL time.Duration
	// Poll is the wait between tries while another owner holds the lease;
	// zero means DefaultPoll.
	Poll time.Duration
	// Now is the clock; nil means time.Now.
	Now func() time.Time
}

// Acquire takes the lease on userID's background work for owner, waiting
// while another owner holds an unexpired one, until ctx ends (ErrHeld, with
// ctx's error). The returned release gives it up; it is safe to call once
// the caller's context has ended, and it never takes a lease another owner
// has since taken. A store failure is returned as is.
func Acquire(ctx context.Context, st Store, userID, owner string, cfg Config) (release func(), err error) {
	cfg = cfg.withDefaults()
	var holder *store.UserState // the other owner seen last, if any
	held := func() error {
		return fmt.Errorf("%w (%s, until %s): %w", ErrHeld, holder.LeaseOwner, holder.LeaseUntil.Format(time.RFC3339), ctx.Err())
	}
	for {
		var other *store.UserState
		var now time.Time
		taken, err := store.UpdateUserState(ctx, st, userID, func(doc *store.UserState) (bool, error) {
			now, other = cfg.Now(), nil
			if doc.LeaseOwner != "" && doc.LeaseOwner != owner && now.Before(doc.LeaseUntil) {
				other = doc
				return false, nil
			}
			doc.LeaseOwner, doc.LeaseUntil, doc.UpdatedAt = owner, now.Add(cfg.TTL).UTC(), now.UTC()
			return true, nil
		})
		switch {
		case taken:
			return func() { releaseLease(st, userID, owner) }, nil
		case errors.Is(err, store.ErrConflict):
			continue // other processes kept writing first: look again
		case err != nil && holder != nil && ctx.Err() != nil:
			return nil, held() // the wait ended in the middle of a look
		case err != nil:
			return nil, fmt.Errorf("lease: user state: %w", err)
		}
		holder = other
		wait := min(cfg.Poll, other.LeaseUntil.Sub(now))
		select {
		case <-ctx.Done():
			return nil, held()
		case <-time.After(wait):
		}
	}
}

// withDefaults returns c with every zero (or negative) field that has a
// default set to it.
func (c Config) withDefaults() Config {
	if c.TTL <= 0 {
		c.TTL = DefaultTTL
	}
	if c.Poll <= 0 {
		c.Poll = DefaultPoll
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	return c
}

// releaseLease clears owner's lease, detached from any caller's context
// and bounded; on failure the lease simply expires.
func releaseLease(st Store, userID, owner string) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, _ = store.UpdateUserState(ctx, st, userID, func(doc *store.UserState) (bool, error) {
		if doc.LeaseOwner != owner {
			return false, nil
		}
		doc.LeaseOwner, doc.LeaseUntil = "", time.Time{}
		return true, nil
	})
}
