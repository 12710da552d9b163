package memoryservice

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/agentmemory/agentmemory/provider"
	"github.com/agentmemory/agentmemory/store"
)

// DefaultSweepInterval is how often the service removes expired memories
// when Config.SweepInterval is zero.
const DefaultSweepInterval = time.Minute

// maxTTLSeconds caps default_ttl_seconds (about 100 years).
const maxTTLSeconds = 100 * 365 * 24 * 3600

// ttl is the memory store's default_ttl_seconds; zero means memories never
// expire.
func (m *memoryStore) ttl() time.Duration {
	o := m.Definition.Options
	if o == nil || o.DefaultTTLSeconds == nil {
		return 0
	}
	return time.Duration(*o.DefaultTTLSeconds) * time.Second
}

// cutoff is the time before which a memory of the store has expired; zero
// when memories never expire.
func (s *Service) cutoff(m *memoryStore) time.Time {
	ttl := m.ttl()
	if ttl <= 0 {
		return time.Time{}
	}
	return s.cfg.Now().Add(-ttl)
}

// expired reports whether a memory last written at t has expired under
// cutoff.
func expired(t, cutoff time.Time) bool {
	return !cutoff.IsZero() && t.Before(cutoff)
}

// sweepLoop sweeps every interval until the service closes: this
// replica's forgets left incomplete, and, on the one replica that holds
// the sweep's lease, the store's expired memories, search records and
// finished updates.
func (s *Service) sweepLoop(interval time.Duration) {
	defer close(s.sweepDone)
	tick := time.NewTicker(interval)
	defer tick.Stop()
	for {
		select {
		case <-s.stopSweep:
			return
		case <-tick.C:
			s.dropStaleLocal()
			if err := s.sweep(s.runCtx); err != nil {
				s.log.Warn("memoryservice: removing expired memories", "err", err)
			}
		}
	}
}

// sweepUser is the user whose store.UserState holds the sweep's lease,
// in lease's format: one replica at a time sweeps the store.
const sweepUser = RegistryUserID + ".sweep"

// sweepTTL is how long the sweep's lease lasts: its holder takes it
// again at every sweep, so it keeps it while it lives, and another
// replica takes it within two sweep intervals of its death.
func (s *Service) sweepTTL() time.Duration {
	return 2*s.cfg.SweepInterval + s.cfg.LeaseTTL
}

// takeSweep takes (or extends) the sweep's lease for this replica unless
// another holds it unexpired, and reports whether this replica holds it:
// one read and at most one ETag-guarded write of the lease's document.
func (s *Service) takeSweep(ctx context.Context) (bool, error) {
	now := s.cfg.Now()
	ok, err := store.UpdateUserState(ctx, s.st, sweepUser, func(doc *store.UserState) (bool, error) {
		if doc.LeaseOwner != "" && doc.LeaseOwner != s.cfg.ReplicaID && now.Before(doc.LeaseUntil) {
			return false, nil
		}
		doc.LeaseOwner, doc.LeaseUntil, doc.UpdatedAt = s.cfg.ReplicaID, now.Add(s.sweepTTL()).UTC(), now.UTC()
		return true, nil
	})
	s.mu.Lock()
	s.sweeping = ok
	s.mu.Unlock()
	return ok, err
}

// releaseSweep gives up the sweep's lease if this replica holds it (not
// when dying: a killed process's lease expires).
func (s *Service) releaseSweep() {
	s.mu.Lock()
	held := s.sweeping && !s.dying
	s.sweeping = false
	s.mu.Unlock()
	if !held {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, err := store.UpdateUserState(ctx, s.st, sweepUser, func(doc *store.UserState) (bool, error) {
		if doc.LeaseOwner != s.cfg.ReplicaID {
			return false, nil
		}
		doc.LeaseOwner, doc.LeaseUntil = "", time.Time{}
		return true, nil
	})
	if err != nil {
		s.log.Warn("memoryservice: giving up the sweep's lease; it expires instead", "err", err)
	}
}

// sweep completes the forgets left incomplete, forgets, in every scope of
// every memory store with a default_ttl_seconds, the memories older than
// it (provider.MemoryProvider.ForgetBefore, logged as expired), and (every
// retireEvery) deletes the records of updates finished longer than
// Config.UpdateRetention ago.
func (s *Service) sweep(ctx context.Context) error {
	var errs []error
	if _, err := s.completeUnfinished(ctx, func(*provider.Receipt) bool { return true }); err != nil {
		errs = append(errs, err)
	}
	if mine, err := s.takeSweep(ctx); err != nil || !mine {
		return errors.Join(append(errs, err)...) // another replica sweeps the store
	}
	// Finished updates are retired every retireEvery, not every sweep:
	// that reads each scope's partition.
	now := s.cfg.Now()
	s.mu.Lock()
	retire := s.lastRetire.IsZero() || now.Sub(s.lastRetire) >= s.retireEvery()
	if retire {
		s.lastRetire = now
	}
	s.mu.Unlock()
	defs, err := s.listRecords(ctx, RegistryUserID, store.RecordFilter{Prefix: "store."})
	if err != nil {
		return errors.Join(append(errs, err)...)
	}
	for _, d := range defs {
		var m memoryStore
		if _, err := decodeRecord(d, &m); err != nil {
			// Its scopes cannot be found: say so rather than skip them.
			s.log.ErrorContext(ctx, "memoryservice: unreadable memory store record: its scopes are not swept", "id", d.ID, "err", err)
			errs = append(errs, err)
			continue
		}
		if err := s.sweepSearches(ctx, m.Name); err != nil {
			errs = append(errs, err)
		}
		if m.ttl() <= 0 && !retire {
			continue // nothing to do in its scopes this time
		}
		scopes, err := s.listRecords(ctx, scopesUser(m.Name), store.RecordFilter{Prefix: "scope."})
		if err != nil {
			errs = append(errs, err)
			continue
		}
		for _, sd := range scopes {
			var sc scopeRecord
			if _, err := decodeRecord(sd, &sc); err != nil || sc.Store != m.Name {
				err = errors.Join(err, fmt.Errorf("memoryservice: scope record %s is not of memory store %q", sd.ID, m.Name))
				s.log.ErrorContext(ctx, "memoryservice: unreadable scope record: the scope is not swept", "store", m.Name, "id", sd.ID, "err", err)
				errs = append(errs, err)
				continue
			}
			if m.ttl() > 0 {
				if err := s.expireScope(ctx, &m, sc.Scope); err != nil {
					errs = append(errs, err)
				}
			}
			if retire {
				if err := s.retireUpdates(ctx, &sc); err != nil {
					errs = append(errs, err)
				}
			}
		}
	}
	return errors.Join(errs...)
}

// expireScope forgets a scope's memories older than its store's TTL, not
// while an update of the scope runs.
func (s *Service) expireScope(ctx context.Context, m *memoryStore, scope string) error {
	return s.expire(ctx, m, scope, false)
}

// expire is expireScope for a caller that may hold the scope's run lock
// already (locked).
func (s *Service) expire(ctx context.Context, m *memoryStore, scope string, locked bool) error {
	cut := s.cutoff(m)
	if cut.IsZero() {
		return nil
	}
	userID := UserID(m.Name, scope)
	p, err := s.providerFor(m)
	if err != nil {
		return err
	}
	if !locked {
		unlock, err := s.lockRun(ctx, m.Name, scope)
		if err != nil {
			return err
		}
		defer unlock()
	}
	rc, err := p.ForgetBefore(ctx, userID, cut)
	if rc != nil && len(rc.Items) > 0 {
		s.log.InfoContext(ctx, "memoryservice: expired memories removed", "store", m.Name, "scope_user", userID, "items", len(rc.Items))
	}
	// Not logged or not erased: completed now, or kept for the next sweep.
	return s.settle(ctx, m.Name, p, rc, err)
}

// retireEvery is how often the sweep retires finished updates: hourly,
// or more often under a short Config.UpdateRetention, so a record is kept
// at most a quarter longer than it.
func (s *Service) retireEvery() time.Duration {
	return min(time.Hour, s.cfg.UpdateRetention/4)
}
