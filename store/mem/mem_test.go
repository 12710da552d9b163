package mem_test

import (
	"testing"

	"github.com/agentmemory/agentmemory/store"
	"github.com/agentmemory/agentmemory/store/mem"
	"github.com/agentmemory/agentmemory/store/storetest"
)

func TestConformance(t *testing.T) {
	storetest.RunConformance(t, func(*testing.T) store.Store {
		return mem.New(mem.Config{Dimensions: storetest.Dimensions})
	})
}
