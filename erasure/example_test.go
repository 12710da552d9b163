package erasure_test

import (
	"context"
	"fmt"

	"github.com/agentmemory/agentmemory/erasure"
	"github.com/agentmemory/agentmemory/store"
	"github.com/agentmemory/agentmemory/store/mem"
)

// A forget call's record, then the whole chain verified. The provider's
// forget calls append such records themselves; an operator verifies.
func Example() {
	ctx := context.Background()
	log := erasure.New(mem.New(mem.Config{}), erasure.Config{Key: []byte("the operator's secret")})
	rec, err := log.Append(ctx, "dana", "forget_session", []erasure.Item{
		{Kind: store.KindSessionSummary, ID: "tuesday", Action: erasure.Deleted},
		{Kind: store.KindTurn, ID: "tuesday", Action: erasure.Deleted, Count: 14},
		{Kind: store.KindInsight, ID: store.LongTermID("dana"), Action: erasure.Rewritten},
	}, true)
	if err != nil {
		panic(err)
	}
	fmt.Println("record", rec.Seq, rec.Reason, "by", rec.UserID, "with", len(rec.Items), "items")

	// Forgotten whole: the clear names go, the chain stays.
	if _, err := log.EraseNames(ctx, "dana"); err != nil {
		panic(err)
	}
	head, err := log.Verify(ctx)
	fmt.Println("verified through record", head.Seq, err)
	// Output:
	// record 1 forget_session by dana with 3 items
	// verified through record 1 <nil>
}
