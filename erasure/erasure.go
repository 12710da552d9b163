// Package erasure keeps the deletion log: a tamper-evident record of what
// every forget call removed, when and why, without the removed content, so
// that a deletion can be proved later without keeping what was deleted.
//
// # The chain
//
// Each record carries the hash of the one before it, so altering, removing
// or reordering a record breaks the chain at that point, and Verify names
// the first broken link. The chained part of a record names the user and
// the documents only by keyed hashes (HMAC-SHA-256); the clear user id and
// document ids kept beside them, for an operator's reading, are not
// chained, and Log.EraseNames blanks them when the user is forgotten
// whole. After that the log keeps only the keyed hash of the user id: it
// still proves that the deletion happened, and someone who holds the key
// and is given the user id can match it, but the log alone does not name
// the user.
//
// # Keys
//
// The log lives in the store (store.DeletionLog), beside the users' data.
// Its key is Config.Key when set (the keyed hashes are then as secret as
// that key); otherwise the log makes a random key and keeps it in its
// first record, which makes the hashes pseudonyms that anyone holding the
// store can test guesses against.
//
// # What a chain proves
//
// Without Config.Key a record's Hash is a plain SHA-256: the chain shows
// accidental damage and a careless edit, but whoever can write the store
// can rewrite a record and recompute every hash after it, and Verify then
// passes. With Config.Key each record's Hash is an HMAC-SHA-256 under a
// key derived from it (marked "hmac-sha256:"), and a record rewritten by
// anyone without the key is found at that record, however the rest of the
// chain is recomputed. The key must stay secret (kept outside the store)
// and stable: a log started with a key opens only with that key, and a
// log started without one cannot take one later.
//
// A log started with Config.Key by an earlier version has plain hashes up
// to its first keyed one. They keep verifying, and the keyed records that
// follow guard them too; but turning every keyed record back into a plain
// one goes unseen in such a log, while in a log started keyed every record
// must be keyed. In no case does a chain show records cut off its end:
// keep the head that Verify returns somewhere else (it names the scheme in
// its hash) to detect that, and that downgrade.
package erasure

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/agentmemory/agentmemory/store"
)

// ErrBroken reports a chain that does not verify; the error is a
// *BrokenError naming the first broken record.
var ErrBroken = errors.New("erasure: deletion log does not verify")

// ErrWrongKey reports a Config.Key other than the one the log was started
// with.
var ErrWrongKey = errors.New("erasure: the key is not the deletion log's key")

// BrokenError is the first broken link Verify found.
type BrokenError struct {
	// Seq is the record where the chain breaks (the one expected there,
	// when a record is missing).
	Seq int64
	// Why says what does not hold.
	Why string
}

func (e *BrokenError) Error() string {
	return fmt.Sprintf("erasure: deletion log broken at record %d: %s", e.Seq, e.Why)
}

// Is makes a *BrokenError match ErrBroken.
func (e *BrokenError) Is(target error) bool { return target == ErrBroken }

// Actions of an Item.
const (
	Deleted   = store.ActionDeleted
	Rewritten = store.ActionRewritten
)

// Item is one document (or one group of records, such as a session's
// turns) that a forget call removed or rewrote.
type Item struct {
	Kind store.Kind `json:"kind"`
	// ID is the document id, or the session id for KindTurn.
	ID string `json:"id"`
	// Action is Deleted or Rewritten.
	Action string `json:"action"`
	// Count is the number of records the item stands for (turns of a
	// session, or documents of a kind when ID is empty); zero means 1.
	Count int `json:"count"`
}

// Config configures a Log. The zero value works.
type Config struct {
	// Key makes the keyed hashes of ids and of the records themselves
	// (see the package doc). Nil means the log's own random key, kept in
	// its first record, and plain record hashes. A log started with a key
	// must be opened with the same key; keep it secret and stable.
	Key []byte
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// MaxAttempts bounds appends lost to concurrent appenders before
	// Append gives up with store.ErrConflict; zero means 16.
	MaxAttempts int
}

// Log appends to and verifies one store's deletion log. It is safe for
// concurrent use, within and across processes: appends serialise through
// the store's sequence check.
type Log struct {
	st  store.DeletionLog
	cfg Config

	mu   sync.Mutex
	kept []byte // the log's key once read from its first record (it never changes)
}

// New returns the log kept in st.
func New(st store.DeletionLog, cfg Config) *Log {
	return &Log{st: st, cfg: cfg.withDefaults()}
}

// withDefaults returns c with every zero (or negative) field that has a
// default set to it.
func (c Config) withDefaults() Config {
	if c.Now == nil {
		c.Now = time.Now
	}
	if c.MaxAttempts <= 0 {
		c.MaxAttempts = 16
	}
	return c
}

// A first record's Key holds the log's own key in hex, or a check of
// Config.Key behind one of two prefixes: keyedPrefix for a log whose every
// record has a keyed hash, legacyCheckPrefix for a log started before
// records had keyed hashes (its records are plain up to the first keyed
// one). The two checks are MACs of different messages, so one cannot be
// made from the other without the key.
const (
	keyedPrefix       = "keyed:"
	legacyCheckPrefix = "check:"
	keyedCheck        = "agentmemory deletion log keyed chain check"
	legacyCheck       = "agentmemory deletion log key check"
)

// keyedHashPrefix marks a record's Hash made with HMAC-SHA-256 under the
// chain key; a Hash without it is the plain SHA-256 in hex.
const keyedHashPrefix = "hmac-sha256:"

// Append records that the listed items of userID were removed or
// rewritten, for reason (a short word such as "forget_session"), and
// returns the record as stored. Items with an empty ID stand for Count
// documents of their kind (used when listing every id would not fit).
// With clearNames false the record keeps no clear names at all.
func (l *Log) Append(ctx context.Context, userID, reason string, items []Item, clearNames bool) (*store.DeletionRecord, error) {
	if userID == "" || reason == "" {
		return nil, fmt.Errorf("erasure: append: %w: empty user id or reason", store.ErrInvalid)
	}
	for attempt := 0; ; attempt++ {
		last, err := l.st.LastDeletion(ctx)
		switch {
		case errors.Is(err, store.ErrNotFound):
			last = nil
		case err != nil:
			return nil, fmt.Errorf("erasure: append: read the log's last record: %w", err)
		}
		rec := &store.DeletionRecord{Seq: 1, At: l.cfg.Now().UTC().Truncate(time.Millisecond), Reason: reason}
		var key []byte
		if last == nil {
			key, rec.Key, err = l.newKey()
		} else {
			rec.Seq, rec.Prev = last.Seq+1, last.Hash
			key, err = l.key(ctx)
		}
		if err != nil {
			return nil, err
		}
		var chainKey []byte // nil: a plain hash (the log keeps its own key)
		if l.cfg.Key != nil {
			chainKey = l.chainKey()
		}
		rec.Subject = subject(key, userID)
		if clearNames {
			rec.UserID = userID
		}
		for _, it := range items {
			n := it.Count
			if n <= 0 {
				n = 1
			}
			di := store.DeletedItem{Kind: it.Kind, Action: it.Action, Count: n, IDHash: itemHash(key, rec.Subject, it.Kind, it.ID)}
			if clearNames {
				di.ID = it.ID
			}
			rec.Items = append(rec.Items, di)
		}
		rec.Hash = recordHash(chainKey, rec)
		err = l.st.AppendDeletion(ctx, rec)
		if err == nil {
			if rec.Seq == 1 {
				l.mu.Lock()
				l.kept = key
				l.mu.Unlock()
			}
			return rec, nil
		}
		if !errors.Is(err, store.ErrConflict) || attempt+1 >= l.cfg.MaxAttempts {
			return nil, fmt.Errorf("erasure: append record %d: %w", rec.Seq, err)
		}
	}
}

// EraseNames blanks the clear user id and document ids of every record
// about userID, leaving their keyed hashes and the chain as they were; it
// returns how many records changed. Call it when the user is forgotten
// whole.
func (l *Log) EraseNames(ctx context.Context, userID string) (int, error) {
	key, err := l.key(ctx)
	if errors.Is(err, store.ErrNotFound) {
		return 0, nil // an empty log names nobody
	}
	if err != nil {
		return 0, err
	}
	n, err := l.st.EraseDeletionNames(ctx, subject(key, userID))
	if err != nil {
		return n, fmt.Errorf("erasure: erase names: %w", err)
	}
	return n, nil
}

// Subject returns the keyed hash by which the log names userID, or
// store.ErrNotFound for an empty log (which has no key yet).
func (l *Log) Subject(ctx context.Context, userID string) (string, error) {
	key, err := l.key(ctx)
	if err != nil {
		return "", err
	}
	return subject(key, userID), nil
}

// Head is the newest record of a verified log: keep it elsewhere to detect
// records cut off the end later.
type Head struct {
	Seq  int64
	Hash string
}

// Verify reads the whole log and checks every link: numbering from 1
// without gaps, each record's Prev equal to the hash of the one before,
// each Hash equal to its record's recomputed hash, the key the same as
// the first record's, and every clear name still present equal to what its
// keyed hash was made from. In a log started with Config.Key every hash
// must be keyed; in one started before hashes were keyed, every hash from
// the first keyed one on. It returns the head, a *BrokenError (which
// matches ErrBroken) for the first record where the chain breaks, or
// ErrWrongKey when Config.Key is not the log's.
func (l *Log) Verify(ctx context.Context) (Head, error) {
	var head Head
	var key []byte
	keyedFrom := int64(-1) // the first record that must have a keyed hash; -1: none may
	const page = 500
	for {
		recs, err := l.st.ListDeletions(ctx, head.Seq, page)
		if err != nil {
			return head, fmt.Errorf("erasure: verify: %w", err)
		}
		for _, rec := range recs {
			if rec.Seq != head.Seq+1 {
				return head, &BrokenError{Seq: head.Seq + 1, Why: fmt.Sprintf("record missing (next is %d)", rec.Seq)}
			}
			if rec.Prev != head.Hash {
				return head, &BrokenError{Seq: rec.Seq, Why: "does not carry the hash of the record before it"}
			}
			if rec.Seq == 1 {
				if key, err = l.checkKey(rec.Key); errors.Is(err, ErrWrongKey) {
					return head, err
				} else if err != nil {
					return head, &BrokenError{Seq: 1, Why: err.Error()}
				}
				switch {
				case strings.HasPrefix(rec.Key, keyedPrefix):
					keyedFrom = 1
				case strings.HasPrefix(rec.Key, legacyCheckPrefix):
					keyedFrom = 0 // from the first keyed record
				}
			} else if rec.Key != "" {
				return head, &BrokenError{Seq: rec.Seq, Why: "carries a key; only the first record does"}
			}
			keyed := strings.HasPrefix(rec.Hash, keyedHashPrefix)
			if keyed && keyedFrom == 0 {
				keyedFrom = rec.Seq
			}
			switch {
			case keyed && keyedFrom < 0:
				return head, &BrokenError{Seq: rec.Seq, Why: "has a keyed hash in a log that keeps its own key"}
			case !keyed && keyedFrom > 0:
				return head, &BrokenError{Seq: rec.Seq, Why: fmt.Sprintf("has a plain hash; every record from %d on has a keyed one", keyedFrom)}
			}
			var chainKey []byte
			if keyed {
				chainKey = l.chainKey()
			}
			if h := recordHash(chainKey, rec); !hmac.Equal([]byte(h), []byte(rec.Hash)) {
				return head, &BrokenError{Seq: rec.Seq, Why: "content does not match its hash"}
			}
			if rec.UserID != "" && subject(key, rec.UserID) != rec.Subject {
				return head, &BrokenError{Seq: rec.Seq, Why: "clear user id does not match its hash"}
			}
			for i, it := range rec.Items {
				if it.ID != "" && itemHash(key, rec.Subject, it.Kind, it.ID) != it.IDHash {
					return head, &BrokenError{Seq: rec.Seq, Why: fmt.Sprintf("item %d: clear id does not match its hash", i)}
				}
			}
			head = Head{Seq: rec.Seq, Hash: rec.Hash}
		}
		if len(recs) < page {
			return head, nil
		}
	}
}

// newKey returns the key for a new log and what its first record keeps:
// Config.Key's check, or a fresh random key itself.
func (l *Log) newKey() (key []byte, kept string, err error) {
	if l.cfg.Key != nil {
		return l.cfg.Key, keyedPrefix + hex.EncodeToString(mac(l.cfg.Key, keyedCheck)), nil
	}
	key = make([]byte, 32)
	if _, err := rand.Read(key); err != nil {
		return nil, "", fmt.Errorf("erasure: make a key: %w", err)
	}
	return key, hex.EncodeToString(key), nil
}

// key returns the log's key, read from its first record.
func (l *Log) key(ctx context.Context) ([]byte, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.kept != nil {
		return l.kept, nil
	}
	first, err := l.st.ListDeletions(ctx, 0, 1)
	if err != nil {
		return nil, fmt.Errorf("erasure: read the log's first record: %w", err)
	}
	if len(first) == 0 {
		return nil, fmt.Errorf("erasure: %w: the log is empty", store.ErrNotFound)
	}
	key, err := l.checkKey(first[0].Key)
	if err == nil {
		l.kept = key
	}
	return key, err
}

// checkKey returns the key a first record's Key field stands for.
func (l *Log) checkKey(kept string) ([]byte, error) {
	for _, c := range []struct{ prefix, msg string }{{keyedPrefix, keyedCheck}, {legacyCheckPrefix, legacyCheck}} {
		rest, ok := bytes.CutPrefix([]byte(kept), []byte(c.prefix))
		if !ok {
			continue
		}
		if l.cfg.Key == nil {
			return nil, fmt.Errorf("%w: the log was started with Config.Key; none is set", ErrWrongKey)
		}
		if !hmac.Equal(rest, []byte(hex.EncodeToString(mac(l.cfg.Key, c.msg)))) {
			return nil, ErrWrongKey
		}
		return l.cfg.Key, nil
	}
	key, err := hex.DecodeString(kept)
	if err != nil || len(key) == 0 {
		return nil, errors.New("the first record holds no key")
	}
	if l.cfg.Key != nil && !hmac.Equal(key, l.cfg.Key) {
		return nil, fmt.Errorf("%w: the log keeps a key of its own", ErrWrongKey)
	}
	return key, nil
}

// chainKey is the key of the records' keyed hashes, derived from
// Config.Key apart from the keyed hashes of ids.
func (l *Log) chainKey() []byte { return mac(l.cfg.Key, "chain") }

func mac(key []byte, parts ...string) []byte {
	h := hmac.New(sha256.New, key)
	for _, p := range parts {
		h.Write([]byte(p))
		h.Write([]byte{0})
	}
	return h.Sum(nil)
}

func subject(key []byte, userID string) string {
	return hex.EncodeToString(mac(key, "user", userID))
}

func itemHash(key []byte, subject string, kind store.Kind, id string) string {
	return hex.EncodeToString(mac(key, "item", subject, string(kind), id))
}

// chained is the part of a record its hash covers: everything but the
// clear names and the hash itself.
type chained struct {
	Seq     int64         `json:"seq"`
	At      string        `json:"at"`
	Reason  string        `json:"reason"`
	Subject string        `json:"subject"`
	Items   []chainedItem `json:"items"`
	Prev    string        `json:"prev"`
	Key     string        `json:"key"`
}

type chainedItem struct {
	Kind   store.Kind `json:"kind"`
	Action string     `json:"action"`
	Count  int        `json:"count"`
	IDHash string     `json:"id_hash"`
}

// recordHash is the hash of the record's chained part in a fixed JSON
// encoding (struct field order; the time in UTC, nanoseconds): with
// chainKey, its HMAC-SHA-256 behind keyedHashPrefix; without, its plain
// SHA-256.
func recordHash(chainKey []byte, rec *store.DeletionRecord) string {
	c := chained{Seq: rec.Seq, At: rec.At.UTC().Format(time.RFC3339Nano), Reason: rec.Reason, Subject: rec.Subject,
		Items: make([]chainedItem, len(rec.Items)), Prev: rec.Prev, Key: rec.Key}
	for i, it := range rec.Items {
		c.Items[i] = chainedItem{Kind: it.Kind, Action: it.Action, Count: it.Count, IDHash: it.IDHash}
	}
	b, err := json.Marshal(c)
	if err != nil {
		panic(err) // strings and numbers only: cannot fail
	}
	if chainKey != nil {
		h := hmac.New(sha256.New, chainKey)
		h.Write(b)
		return keyedHashPrefix + hex.EncodeToString(h.Sum(nil))
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}
