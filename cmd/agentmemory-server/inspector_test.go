package main

import (
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// noRedirect is a client that reports redirects instead of following them.
var noRedirect = &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}

// The inspector is served at /inspector/ by default, behind the keys (a
// browser is sent to sign in), and -inspector=false turns it off.
func TestTheInspectorIsServedBehindTheKeys(t *testing.T) {
	base, logs, stop := serveOn(t, env(map[string]string{"AGENTMEMORY_SERVER_KEYS": "inspector-key-0123456789"}), "-offline")
	resp, err := noRedirect.Get(base + "/inspector/")
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusSeeOther, resp.StatusCode)
	assert.True(t, strings.HasPrefix(resp.Header.Get("Location"), "/inspector/sign-in"), resp.Header.Get("Location"))
	resp, err = noRedirect.Get(base + "/inspector/sign-in")
	require.NoError(t, err)
	page, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	require.NoError(t, err)
	assert.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Contains(t, string(page), `name="key"`)
	require.NoError(t, stop())
	assert.Contains(t, logs.String(), "serving the memory inspector at /inspector/")

	base, logs, stop = serveOn(t, env(map[string]string{"AGENTMEMORY_SERVER_KEYS": "inspector-key-0123456789"}), "-offline", "-inspector=false")
	req, err := http.NewRequest("GET", base+"/inspector/", nil)
	require.NoError(t, err)
	req.Header.Set("api-key", "inspector-key-0123456789")
	resp, err = noRedirect.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusNotFound, resp.StatusCode, "the API's answer to a path it does not have")
	require.NoError(t, stop())
	assert.NotContains(t, logs.String(), "memory inspector")
}
