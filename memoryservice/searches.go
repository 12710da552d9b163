package memoryservice

import (
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/agentmemory/agentmemory/prompts"
)

// Defaults of the search records that previous_search_id continues.
const (
	DefaultSearchTTL   = time.Hour
	DefaultMaxSearches = 4096
)

// Bounds on what one search record keeps of its conversation: its newest
// messages, up to maxSearchTurns of them and maxSearchBytes of text.
const (
	maxSearchTurns = 20
	maxSearchBytes = 8 << 10
)

// searchRecord is what a search leaves for a later one to continue: whose
// it was and the conversation it was given, earlier searches' included.
type searchRecord struct {
	store, scope string
	turns        []prompts.Turn
	at           time.Time
}

// searchLog keeps the recent searches in memory, for previous_search_id:
// each for a TTL, at most max of them (the oldest go first). A restart
// forgets them. Forgetting a scope or a store drops its records, and a
// search still running when its scope is forgotten records nothing.
type searchLog struct {
	ttl time.Duration
	max int

	mu    sync.Mutex
	byID  map[string]*searchRecord
	order []string // ids, oldest first; may name records dropped since
	// seq counts the drops; dropped holds, for a scope ("store\x00scope")
	// or a store ("store\x00"), the seq of its last drop and its time.
	seq     uint64
	dropped map[string]dropMark
}

type dropMark struct {
	seq uint64
	at  time.Time
}

func newSearchLog(ttl time.Duration, max int) *searchLog {
	return &searchLog{ttl: ttl, max: max, byID: map[string]*searchRecord{}, dropped: map[string]dropMark{}}
}

// begin marks the start of a search, for put.
func (l *searchLog) begin() uint64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.seq
}

// get returns search id if it is kept (younger than the TTL at now).
func (l *searchLog) get(id string, now time.Time) (*searchRecord, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	r, ok := l.byID[id]
	if !ok || now.Sub(r.at) >= l.ttl {
		return nil, false
	}
	return r, true
}

// put keeps r under id unless r's scope or store was forgotten since
// began (begin's mark at the start of the search that made it).
func (l *searchLog) put(id string, r *searchRecord, began uint64) {
	r.turns = boundTurns(r.turns)
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, k := range []string{r.store + "\x00", r.store + "\x00" + r.scope} {
		if d, ok := l.dropped[k]; ok && d.seq > began {
			return
		}
	}
	// The oldest go first: expired ones, then any over the cap.
	n := 0
	for _, old := range l.order {
		rec, ok := l.byID[old]
		if !ok {
			n++
			continue
		}
		if r.at.Sub(rec.at) < l.ttl && len(l.byID) < l.max {
			break
		}
		delete(l.byID, old)
		n++
	}
	l.order = append(l.order[n:], id)
	l.byID[id] = r
	if len(l.order) > 2*l.max { // ids of dropped records pile up: compact
		live := l.order[:0]
		for _, k := range l.order {
			if _, ok := l.byID[k]; ok {
				live = append(live, k)
			}
		}
		l.order = live
	}
}

// drop forgets the searches of a scope of memory store name, or of
// every scope when all is set.
func (l *searchLog) drop(name, scope string, all bool, now time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	key := name + "\x00" + scope
	if all {
		key = name + "\x00"
	}
	for k, d := range l.dropped { // a search running longer than the TTL is not kept anyway
		if now.Sub(d.at) > l.ttl {
			delete(l.dropped, k)
		}
	}
	l.seq++
	l.dropped[key] = dropMark{seq: l.seq, at: now}
	for id, r := range l.byID {
		if r.store == name && (all || r.scope == scope) {
			delete(l.byID, id)
		}
	}
}

// boundTurns keeps the newest turns within maxSearchTurns and
// maxSearchBytes; a newest turn longer than that keeps its end.
func boundTurns(turns []prompts.Turn) []prompts.Turn {
	if len(turns) > maxSearchTurns {
		turns = turns[len(turns)-maxSearchTurns:]
	}
	size, i := 0, len(turns)
	for i > 0 && size+len(turns[i-1].Text) <= maxSearchBytes {
		size += len(turns[i-1].Text)
		i--
	}
	if i == len(turns) && i > 0 { // the newest alone is too long
		t := turns[i-1]
		cut := len(t.Text) - maxSearchBytes
		for cut < len(t.Text) && !utf8.RuneStart(t.Text[cut]) {
			cut++
		}
		t.Text = strings.TrimSpace(t.Text[cut:])
		return []prompts.Turn{t}
	}
	return append([]prompts.Turn(nil), turns[i:]...)
}
