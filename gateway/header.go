package gateway

import (
	"fmt"
	"strings"
)

// Header is the response header that says what memory did for a request.
// Its value is a state, then "; "-separated details:
//
//	used; retrieved=3        memory injected, with 3 retrieved memories
//	used; retrieval=skipped  memory injected; the pre-filter skipped the search
//	used; retrieval=off      memory injected; retrieval_limit 0 asked for no search
//	skipped; reason=no-user  no user: forwarded without memory
//	skipped; reason=disabled memory_config.enabled was false
//	degraded; reason=store   memory failed: forwarded without it (logged)
//	degraded; reason=retrieval  the session's memory injected, the search failed
//
// A request whose turn is not recorded (memory_config.auto_store false, or
// Config.AutoStoreOff) adds "; store=off".
const Header = "X-Memory"

// Request headers a client may send instead of memory_context and
// metadata.session_id.
const (
	UserHeader    = "X-Memory-User"
	SessionHeader = "X-Memory-Session"
)

// memoryState is what memory did for a request, rendered as Header.
type memoryState struct {
	state   string // used, skipped, degraded
	reason  string // skipped and degraded
	details []string
}

func skipped(reason string) memoryState  { return memoryState{state: "skipped", reason: reason} }
func degraded(reason string) memoryState { return memoryState{state: "degraded", reason: reason} }

func (m *memoryState) add(format string, args ...any) {
	m.details = append(m.details, fmt.Sprintf(format, args...))
}

func (m memoryState) String() string {
	parts := []string{m.state}
	if m.reason != "" {
		parts = append(parts, "reason="+m.reason)
	}
	return strings.Join(append(parts, m.details...), "; ")
}
