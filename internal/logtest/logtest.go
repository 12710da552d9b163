// Package logtest captures what the code under a test logs with log/slog,
// so that the test can assert on it.
//
// # Use
//
// A Logs is a sink that goroutines may write to at once; its Logger
// writes text records to it:
//
//	var logs logtest.Logs
//	cfg.Logger = logs.Logger(nil)
//	…
//	assert.Contains(t, logs.String(), "store down")
package logtest

import (
	"bytes"
	"log/slog"
	"sync"
)

// Logs collects log output. The zero value is empty and ready to use.
type Logs struct {
	mu sync.Mutex
	b  bytes.Buffer
}

// Write implements io.Writer.
func (l *Logs) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

// String returns everything written so far.
func (l *Logs) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// Logger returns a logger that writes text records to l, as opts says
// (nil: from level Info).
func (l *Logs) Logger(opts *slog.HandlerOptions) *slog.Logger {
	return slog.New(slog.NewTextHandler(l, opts))
}
