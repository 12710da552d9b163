package memoryservice

import (
	"context"
	"slices"

	"github.com/agentmemory/agentmemory/provider"
	"github.com/agentmemory/agentmemory/reflection"
	"github.com/agentmemory/agentmemory/usage"
)

// providerFor returns the memory store's provider, made on first use on
// the store's models, with its user_profile_details as the reflection
// guidance.
func (s *Service) providerFor(def *memoryStore) (*provider.MemoryProvider, error) {
	s.mu.Lock()
	p, ok := s.providers[def.Name]
	closed := s.closed
	s.mu.Unlock()
	if closed {
		return nil, unavailable("the server is shutting down")
	}
	if ok {
		return p, nil
	}
	// Outside the lock: Models may ask the endpoint.
	chat, mini, emb, err := s.storeModels(s.runCtx, def)
	if err != nil {
		return nil, err
	}
	// The clients count each call into the usage.Meter of its context:
	// the update or search it was made for.
	cfg := provider.Config{Chat: usage.Chat(chat), Mini: usage.Chat(mini), Embedder: usage.Embedder(emb), Logger: s.log, Now: s.cfg.Now,
		DeletionLogKey: s.cfg.DeletionLogKey}
	// A replica that dies reflecting leaves the user's reflection lease
	// to expire as soon as its claim does (the scope's lease serialises
	// the runs anyway), not after lease.DefaultTTL.
	cfg.ReflectionConfig.LeaseTTL = s.cfg.LeaseTTL
	if o := def.Definition.Options; o != nil && o.UserProfileDetails != "" {
		cfg.ReflectionConfig.Guidance = o.UserProfileDetails
	}
	if def.proceduralEnabled() {
		cfg.ReflectionConfig.Categories = append(slices.Clone(reflection.DefaultCategories), ProceduralCategory)
	}
	p, err = provider.New(s.st, cfg)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	cur, raced := s.providers[def.Name]
	closed = s.closed
	if !raced && !closed {
		s.providers[def.Name] = p
	}
	s.mu.Unlock()
	if raced || closed { // made meanwhile, or closing: this one is not needed
		if cerr := p.Close(context.WithoutCancel(s.runCtx)); cerr != nil {
			s.log.Warn("memoryservice: closing a provider not needed", "store", def.Name, "err", cerr)
		}
		if closed {
			return nil, unavailable("the server is shutting down")
		}
		return cur, nil
	}
	return p, nil
}

// dropProvider closes and forgets a deleted memory store's provider.
func (s *Service) dropProvider(ctx context.Context, name string) {
	s.mu.Lock()
	p := s.providers[name]
	delete(s.providers, name)
	s.mu.Unlock()
	if p != nil {
		if err := p.Close(ctx); err != nil {
			s.log.WarnContext(ctx, "memoryservice: closing a deleted store's provider", "store", name, "err", err)
		}
	}
}
