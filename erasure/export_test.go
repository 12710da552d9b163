package erasure

import (
	"encoding/hex"

	"github.com/agentmemory/agentmemory/store"
)

// PlainHash is the unkeyed hash of a record, as someone without the key
// can make it.
func PlainHash(rec *store.DeletionRecord) string { return recordHash(nil, rec) }

// LegacyKeyCheck is what the first record of a log started with key
// before records had keyed hashes kept.
func LegacyKeyCheck(key []byte) string {
	return legacyCheckPrefix + hex.EncodeToString(mac(key, legacyCheck))
}
