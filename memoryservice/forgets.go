package memoryservice

import (
	"context"
	"errors"
	"fmt"

	"github.com/agentmemory/agentmemory/provider"
)

// A forget call of the provider can delete and then fail to log the
// deletion (provider.ErrNotLogged) or to erase it from the store's files
// (provider.ErrNotErased). The service completes it at once with
// CompleteForget; when that fails too, the receipt is kept (in memory)
// and the request is answered with a retryable 503 (notErased): the
// retry, the sweep, or a later forget of the same scope completes it.

// retryForgetAfter is the Retry-After, in seconds, of a forget not yet
// complete (a reader holding SQLite's WAL is usually gone by then).
const retryForgetAfter = 2

// notErased is the answer to a forget whose deletions were made but not
// yet logged or erased from the store's files.
func notErased() *apiError {
	return &apiError{Status: 503, Code: "forget_incomplete", Type: "server_error", RetryAfter: retryForgetAfter,
		Message: "deleted, but not yet erased from the server's files; repeat the request to complete it"}
}

// incomplete reports the errors CompleteForget completes.
func incomplete(err error) bool {
	return errors.Is(err, provider.ErrNotLogged) || errors.Is(err, provider.ErrNotErased)
}

// settle completes a forget call of memory store name that returned rc
// and err. It returns nil when the call succeeded or was completed now,
// notErased when it could not be completed (rc is kept for a retry), and
// err itself for any other failure.
func (s *Service) settle(ctx context.Context, name string, p *provider.MemoryProvider, rc *provider.Receipt, err error) error {
	if err == nil {
		return nil
	}
	if rc == nil || !incomplete(err) {
		return err
	}
	return s.complete(ctx, name, p, rc)
}

// complete completes a forget call of memory store name that returned rc
// (again, if it succeeded: it writes nothing twice, and scrubs), keeping
// rc for a retry and answering notErased when it cannot.
func (s *Service) complete(ctx context.Context, name string, p *provider.MemoryProvider, rc *provider.Receipt) error {
	cerr := p.CompleteForget(ctx, rc)
	if cerr == nil {
		return nil
	}
	s.log.ErrorContext(ctx, "memoryservice: a forget not yet complete; it is retried", "store", name, "reason", rc.Reason, "err", cerr)
	s.mu.Lock()
	s.unfinished[rc] = name
	s.mu.Unlock()
	return notErased()
}

// completeUnfinished completes the kept forgets for which match reports
// true, and reports how many it completed. A forget whose memory store
// is gone is dropped: the store was deleted, scopes and all.
func (s *Service) completeUnfinished(ctx context.Context, match func(*provider.Receipt) bool) (int, error) {
	s.mu.Lock()
	todo := map[*provider.Receipt]string{}
	for rc, name := range s.unfinished {
		if match(rc) {
			todo[rc] = name
		}
	}
	s.mu.Unlock()
	done := 0
	var errs []error
	for rc, name := range todo {
		def, _, err := s.loadStore(ctx, name)
		var ae *apiError
		if errors.As(err, &ae) && ae.Status == 404 {
			s.dropUnfinished(rc)
			continue
		}
		if err != nil {
			errs = append(errs, err)
			continue
		}
		p, err := s.providerFor(def)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if err := p.CompleteForget(ctx, rc); err != nil {
			errs = append(errs, fmt.Errorf("complete a forget of memory store %q: %w", name, err))
			continue
		}
		s.dropUnfinished(rc)
		done++
	}
	return done, errors.Join(errs...)
}

func (s *Service) dropUnfinished(rc *provider.Receipt) {
	s.mu.Lock()
	delete(s.unfinished, rc)
	s.mu.Unlock()
}

// ofUser matches the kept forgets of one scope user.
func ofUser(userID string) func(*provider.Receipt) bool {
	return func(rc *provider.Receipt) bool { return rc.UserID == userID }
}
