package agent

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

type weatherArgs struct {
	City  string `json:"city" jsonschema:"the city to look up"`
	Units string `json:"units,omitempty" jsonschema:"celsius or fahrenheit"`
	Days  int    `json:"days,omitempty"`
}

func weatherTool(t testing.TB) *FuncTool[weatherArgs] {
	t.Helper()
	tool, err := NewFuncTool("get_weather", "Look up the weather.", func(_ context.Context, in weatherArgs) (string, error) {
		return in.City + "/" + in.Units, nil
	})
	require.NoError(t, err)
	return tool
}

func TestFuncToolSchemaFromStruct(t *testing.T) {
	b, err := json.Marshal(weatherTool(t).Schema())
	require.NoError(t, err)
	var got map[string]any
	require.NoError(t, json.Unmarshal(b, &got))
	assert.Equal(t, "object", got["type"])
	assert.Equal(t, []any{"city"}, got["required"])
	props := got["properties"].(map[string]any)
	assert.Equal(t, map[string]any{"type": "string", "description": "the city to look up"}, props["city"])
	assert.Equal(t, "integer", props["days"].(map[string]any)["type"])
	assert.Equal(t, false, got["additionalProperties"])
}

func TestFuncToolCall(t *testing.T) {
	tool := weatherTool(t)
	out, err := tool.Call(context.Background(), json.RawMessage(`{"city":"Oslo","units":"celsius"}`))
	require.NoError(t, err)
	assert.Equal(t, "Oslo/celsius", out)

	for name, args := range map[string]string{
		"not json":        `{"city":`,
		"not an object":   `["Oslo"]`,
		"missing city":    `{"units":"celsius"}`,
		"wrong type":      `{"city":42}`,
		"unknown field":   `{"city":"Oslo","country":"NO"}`,
		"null":            `null`,
		"fractional days": `{"city":"Oslo","days":1.5}`,
	} {
		_, err := tool.Call(context.Background(), json.RawMessage(args))
		assert.ErrorIs(t, err, ErrBadArguments, name)
		assert.ErrorContains(t, err, "get_weather", name)
	}
	// Empty arguments read as {}: the required city is then missing.
	_, err = tool.Call(context.Background(), nil)
	assert.ErrorIs(t, err, ErrBadArguments)
}

func TestNewFuncToolRejects(t *testing.T) {
	fn := func(context.Context, weatherArgs) (string, error) { return "", nil }
	_, err := NewFuncTool("bad name!", "", fn)
	assert.ErrorContains(t, err, "bad name!")
	_, err = NewFuncTool[weatherArgs]("ok", "", nil)
	assert.ErrorContains(t, err, "nil function")
	_, err = NewFuncTool("strings", "", func(context.Context, string) (string, error) { return "", nil })
	assert.ErrorContains(t, err, "must be a struct")
	assert.Panics(t, func() { MustFuncTool("", "", fn) })
}

// FuzzToolArguments feeds arbitrary bytes to a typed tool: it must either
// call the function with a valid In or return ErrBadArguments, never panic.
func FuzzToolArguments(f *testing.F) {
	for _, s := range []string{`{"city":"Oslo"}`, `{"city":"x","days":3,"units":"f"}`, `{}`, `[]`, `null`, `{"city":"\u0000"}`, `{"city":"a","city":"b"}`, "\xff"} {
		f.Add([]byte(s))
	}
	tool := weatherTool(f)
	f.Fuzz(func(t *testing.T, args []byte) {
		in, err := tool.Decode(args)
		if err != nil {
			if !assert.ErrorIs(t, err, ErrBadArguments) {
				t.FailNow()
			}
			return
		}
		if in.City == "" && !json.Valid(args) {
			t.Fatalf("decoded invalid JSON %q", args)
		}
	})
}
