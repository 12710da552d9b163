package gateway

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestAnswerAccumulatesStreamedFragments(t *testing.T) {
	a := &answer{}
	for _, chunk := range []string{
		`{"choices":[{"index":0,"delta":{"role":"assistant","content":""},"finish_reason":null}]}`,
		`{"choices":[{"index":0,"delta":{"content":"Checking "},"finish_reason":null}]}`,
		`{"choices":[{"index":1,"delta":{"content":"another choice"},"finish_reason":null}]}`,
		`{"choices":[{"index":0,"delta":{"content":"both."},"finish_reason":null}]}`,
		`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"c1","type":"function","function":{"name":"a","arguments":""}}]}}]}`,
		`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":1,"id":"c2","type":"function","function":{"name":"b","arguments":"{\"x\""}}]}}]}`,
		`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{}"}}]}}]}`,
		`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":1,"function":{"arguments":":1}"}}]}}]}`,
		`not json`,
		`{"choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}`,
		`{"choices":[],"usage":{"prompt_tokens":1}}`,
	} {
		a.add([]byte(chunk))
	}
	assert.Equal(t, "Checking both.", a.text.String(), "choice 0 only")
	require.Len(t, a.calls, 2)
	assert.Equal(t, "c1", a.calls[0].ID)
	assert.Equal(t, "a", a.calls[0].Function.Name)
	assert.Equal(t, "{}", a.calls[0].Function.Arguments)
	assert.Equal(t, "c2", a.calls[1].ID)
	assert.Equal(t, `{"x":1}`, a.calls[1].Function.Arguments)
	assert.Equal(t, "tool_calls", a.finish)
	assert.False(t, a.final(), "calls for the client: the turn goes on")
}
