package toolcalls_test

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentmemory/agentmemory/gateway/internal/toolcalls"
)

// frags reads a chunk's delta.tool_calls.
func frags(t *testing.T, s string) []toolcalls.Fragment {
	t.Helper()
	var f []toolcalls.Fragment
	require.NoError(t, json.Unmarshal([]byte(s), &f))
	return f
}

func TestFragmentsByIndex(t *testing.T) {
	var c toolcalls.Calls
	assert.Equal(t, []int{0}, c.Add(frags(t, `[{"index":0,"id":"c1","function":{"name":"a","arguments":"{\"x\""}}]`)))
	assert.Equal(t, []int{1}, c.Add(frags(t, `[{"index":1,"id":"c2","function":{"name":"b","arguments":""}}]`)))
	assert.Equal(t, []int{0, 1}, c.Add(frags(t, `[{"index":0,"function":{"arguments":":1}"}},{"index":1,"function":{"arguments":"{}"}}]`)))
	assert.Equal(t, []toolcalls.Call{{ID: "c1", Name: "a", Arguments: `{"x":1}`}, {ID: "c2", Name: "b", Arguments: "{}"}}, c.List())
}

func TestWholeCallsAtOneIndexAreTwoCalls(t *testing.T) {
	var c toolcalls.Calls
	first := frags(t, `[{"index":0,"id":"c1","function":{"name":"a","arguments":"{}"}}]`)
	assert.Equal(t, []bool{true}, c.Opens(first))
	c.Add(first)
	second := frags(t, `[{"index":0,"id":"c2","function":{"name":"b","arguments":"{\"n\":"}}]`)
	assert.Equal(t, []bool{true}, c.Opens(second))
	assert.Equal(t, []int{1}, c.Add(second))
	more := frags(t, `[{"index":0,"function":{"arguments":"2}"}}]`)
	assert.Equal(t, []bool{false}, c.Opens(more))
	assert.Equal(t, []int{1}, c.Add(more))
	assert.Equal(t, []toolcalls.Call{{ID: "c1", Name: "a", Arguments: "{}"}, {ID: "c2", Name: "b", Arguments: `{"n":2}`}}, c.List())
}

func TestCallsWithoutIndexTakeTheirPlaceInTheChunk(t *testing.T) {
	var c toolcalls.Calls
	assert.Equal(t, []int{0, 1}, c.Add(frags(t, `[{"id":"c1","function":{"name":"a","arguments":"{}"}},{"id":"c2","function":{"name":"b","arguments":"{}"}}]`)))
	assert.Equal(t, 2, c.Len())
	assert.Equal(t, "b", c.List()[1].Name)
}

func TestOpensSeesEarlierFragmentsOfTheSameChunk(t *testing.T) {
	var c toolcalls.Calls
	f := frags(t, `[{"index":0,"id":"c1","function":{"name":"a"}},{"index":0,"function":{"arguments":"{}"}},{"index":0,"id":"c2","function":{"name":"b"}}]`)
	assert.Equal(t, []bool{true, false, true}, c.Opens(f))
	assert.Equal(t, 0, c.Len(), "Opens changes nothing")
	assert.Equal(t, []int{0, 0, 1}, c.Add(f))
}

func TestANegativeIndexIsDropped(t *testing.T) {
	var c toolcalls.Calls
	assert.Equal(t, []int{-1}, c.Add(frags(t, `[{"index":-1,"id":"c1","function":{"name":"a"}}]`)))
	assert.Equal(t, 0, c.Len())
}
