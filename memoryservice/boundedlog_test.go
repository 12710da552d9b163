package memoryservice

import (
	"bytes"
	"errors"
	"log/slog"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestBoundedLogCutsWhatAClientSent(t *testing.T) {
	var buf bytes.Buffer
	l := bounded(slog.New(slog.NewTextHandler(&buf, nil)))
	long := strings.Repeat("x", 20_000)
	l.With("body", long).Error("failed to read: "+long, "err", errors.New(long), slog.Group("g", "v", long), "n", 3)
	line := buf.String()
	assert.Less(t, len(line), 6*maxLogField, "each field cut to %d bytes", maxLogField)
	assert.Contains(t, line, "…(20016 bytes)", "the message, saying how long it was")
	assert.Equal(t, 3, strings.Count(line, "…(20000 bytes)"), "the With attribute, the error and the group's member: %s", line)
	assert.Contains(t, line, "n=3")
}
