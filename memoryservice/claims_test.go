package memoryservice

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agentmemory/agentmemory/store"
)

// An accept writes its update's marker, then its record: a poll of
// another replica in between finds a marker of no record. It leaves the
// marker, so that a poll after the acceptance claims the update (the
// accepting replica's timer may find no worker free); a marker whose
// record never came, its acceptance failed, is dropped once the
// acceptance is past acceptGrace.
func TestAPollDuringAnAcceptKeepsTheMarker(t *testing.T) {
	backends(t, func(t *testing.T, open opener) {
		ctx := context.Background()
		clk := &clock{}
		// The pollers poll when the test says.
		accepting := replica(t, open, "replica-a", nil, Config{Now: clk.Now, PollInterval: time.Hour})
		polling := replica(t, open, "replica-b", nil, Config{Now: clk.Now, PollInterval: time.Hour})
		accepting.createStore("support", nil)

		id := newUpdateID("support", "alice")
		require.NoError(t, accepting.svc.putRecord(ctx, activeKey(id), store.CreateOnly, clk.Now(), true, marker{At: clk.Now()}))
		require.NoError(t, polling.svc.poll(ctx))
		_, err := polling.svc.rec.GetRecord(ctx, activeUser, "update."+id)
		require.NoError(t, err, "the marker of an update being accepted is kept")

		clk.Add(acceptGrace + time.Second)
		require.NoError(t, polling.svc.poll(ctx))
		_, err = polling.svc.rec.GetRecord(ctx, activeUser, "update."+id)
		require.ErrorIs(t, err, store.ErrNotFound, "the marker of an acceptance that failed is dropped")
	})
}
