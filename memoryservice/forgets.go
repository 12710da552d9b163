package memoryservice

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/agentmemory/agentmemory/provider"
	"github.com/agentmemory/agentmemory/store"
)

// A forget call of the provider can delete and then fail to log the
// deletion (provider.ErrNotLogged) or to erase it from the store's files
// (provider.ErrNotErased). The service completes it at once with
// CompleteForget; when that fails too, the receipt is kept in the
// registry (forgetsUser), where every replica and the next start find it,
// and the request is answered with a retryable 503 (notErased): the
// retry, the sweep, or a later forget of the same scope completes it, on
// whichever replica. A receipt the registry cannot take is kept in this
// process's memory instead (logged).
//
// A kept receipt names the scope's user and the deleted documents' ids,
// so its record is deleted before each attempt to complete it, which
// scrubs the files, and written again if the attempt fails: a completed
// forget leaves no byte of its receipt behind.

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
	s.keepForget(ctx, name, rc)
	return notErased()
}

// forgetsUser is the registry partition of the forgets not yet complete.
const forgetsUser = RegistryUserID + ".forgets"

// keptForget is the registry record of a forget not yet complete.
type keptForget struct {
	Store   string            `json:"store"`
	Receipt *provider.Receipt `json:"receipt"`
}

// forgetKey names rc's record by its content, so that keeping the same
// receipt twice writes one record.
func forgetKey(rc *provider.Receipt) recKey {
	b, _ := json.Marshal(rc)
	h := sha256.Sum256(b)
	return recKey{forgetsUser, "forget." + hex.EncodeToString(h[:16])}
}

// keepForget keeps rc, a forget of memory store name not yet complete,
// in the registry; in this process's memory if the registry refuses it.
func (s *Service) keepForget(ctx context.Context, name string, rc *provider.Receipt) {
	err := s.putRecord(context.WithoutCancel(ctx), forgetKey(rc), "", s.cfg.Now(), true, keptForget{Store: name, Receipt: rc})
	if err == nil {
		return
	}
	s.log.ErrorContext(ctx, "memoryservice: a forget not yet complete is kept by this process only", "store", name, "err", err)
	s.mu.Lock()
	s.unfinished[rc] = name
	s.mu.Unlock()
}

// keptForgets returns the forgets not yet complete: the registry's, then
// those only this process keeps.
func (s *Service) keptForgets(ctx context.Context) ([]keptForget, error) {
	docs, err := s.listRecords(ctx, forgetsUser, store.RecordFilter{Prefix: "forget."})
	if err != nil {
		return nil, err
	}
	var out []keptForget
	for _, d := range docs {
		var k keptForget
		if _, err := decodeRecord(d, &k); err != nil || k.Receipt == nil {
			s.log.ErrorContext(ctx, "memoryservice: an unreadable record of a forget not yet complete is skipped", "id", d.ID, "err", err)
			continue
		}
		out = append(out, k)
	}
	s.mu.Lock()
	for rc, name := range s.unfinished {
		out = append(out, keptForget{Store: name, Receipt: rc})
	}
	s.mu.Unlock()
	return out, nil
}

// completeUnfinished completes the kept forgets for which match reports
// true, and reports how many it completed. A forget whose memory store
// is gone is dropped: the store was deleted, scopes and all.
func (s *Service) completeUnfinished(ctx context.Context, match func(*provider.Receipt) bool) (int, error) {
	kept, err := s.keptForgets(ctx)
	if err != nil {
		return 0, fmt.Errorf("read the forgets not yet complete: %w", err)
	}
	done := 0
	var errs []error
	for _, k := range kept {
		if !match(k.Receipt) {
			continue
		}
		def, _, err := s.loadStore(ctx, k.Store)
		var ae *apiError
		if errors.As(err, &ae) && ae.Status == 404 {
			s.dropForget(ctx, k.Receipt)
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
		// The record goes before the attempt, which scrubs the files.
		s.dropForget(ctx, k.Receipt)
		if err := p.CompleteForget(ctx, k.Receipt); err != nil {
			s.keepForget(ctx, k.Store, k.Receipt)
			errs = append(errs, fmt.Errorf("complete a forget of memory store %q: %w", k.Store, err))
			continue
		}
		done++
	}
	return done, errors.Join(errs...)
}

// dropForget forgets a kept forget: its registry record, and this
// process's copy. Two replicas completing the same forget at once are
// harmless: CompleteForget writes nothing twice.
func (s *Service) dropForget(ctx context.Context, rc *provider.Receipt) {
	if err := s.deleteRecord(context.WithoutCancel(ctx), forgetKey(rc)); err != nil {
		s.log.ErrorContext(ctx, "memoryservice: the record of a completed forget is not deleted", "err", err)
	}
	s.mu.Lock()
	for kept := range s.unfinished {
		if kept == rc || (kept.UserID == rc.UserID && kept.LogSeq == rc.LogSeq && kept.At.Equal(rc.At) && kept.Reason == rc.Reason) {
			delete(s.unfinished, kept)
		}
	}
	s.mu.Unlock()
}

// ofUser matches the kept forgets of one scope user.
func ofUser(userID string) func(*provider.Receipt) bool {
	return func(rc *provider.Receipt) bool { return rc.UserID == userID }
}
