package main

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func noEnv(string) (string, bool) { return "", false }

func TestDemoRunsOffline(t *testing.T) {
	var out bytes.Buffer
	require.NoError(t, run(context.Background(), &out, slog.New(slog.NewTextHandler(io.Discard, nil)), false, noEnv))
	got := out.String()
	assert.Contains(t, got, "offline client (no LLM")
	assert.Equal(t, 2, strings.Count(got, "tool call: financial_glossary"))
	assert.Contains(t, got, "A Roth IRA is an individual retirement account")
	assert.Contains(t, got, "An emergency fund is cash set aside")
	assert.Contains(t, got, "holds 10 messages")
}

func TestDemoRejectsBrokenModelConfig(t *testing.T) {
	env := map[string]string{"AZURE_OPENAI_ENDPOINT": "https://example.openai.azure.com"}
	lookup := func(k string) (string, bool) { v, ok := env[k]; return v, ok }
	err := run(context.Background(), io.Discard, slog.New(slog.NewTextHandler(io.Discard, nil)), false, lookup)
	require.Error(t, err, "a half-configured model must be reported, not replaced by the offline client")
	assert.Contains(t, err.Error(), "AZURE_OPENAI")
}
