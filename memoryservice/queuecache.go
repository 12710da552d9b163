package memoryservice

import "github.com/agentmemory/agentmemory/store"

// queuedState is what the queue cache (Service.queues) keeps of a scope
// this replica accepted an update of: its queue record q, written with
// ETag qtag, and the record of the update it names, as written (with its
// ETag). The next accept of the scope here writes under those ETags
// without reading either again; a write another replica made since (an
// accept of the scope, a claim of the update, a deletion's mark) changed
// an ETag, so its batch fails and enqueue reads them. Written one by one,
// the queue record's write would succeed and the new update's be made
// before the stale update was found out: the cache is used only where the
// batch is written whole.
type queuedState struct {
	q    scopeQueue
	qtag string
	upd  store.Record
}
