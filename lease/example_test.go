package lease_test

import (
	"context"
	"fmt"

	"github.com/agentmemory/agentmemory/lease"
	"github.com/agentmemory/agentmemory/store/mem"
)

// One process takes the lease on a user's background work, does it and
// gives the lease back; meanwhile any other process asking for it waits.
func ExampleAcquire() {
	ctx := context.Background()
	st := mem.New(mem.Config{})
	release, err := lease.Acquire(ctx, st, "dana", "worker-1", lease.Config{})
	if err != nil {
		fmt.Println("no lease:", err)
		return
	}
	state, _ := st.GetUserState(ctx, "dana")
	fmt.Println("held by", state.LeaseOwner)
	release()
	state, _ = st.GetUserState(ctx, "dana")
	fmt.Printf("held by %q\n", state.LeaseOwner)
	// Output:
	// held by worker-1
	// held by ""
}
