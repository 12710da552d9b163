package agent

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"

	"github.com/google/jsonschema-go/jsonschema"
)

// Tool is a function the model can call.
type Tool interface {
	// Name is the function name the model uses; unique among a request's tools.
	Name() string
	// Description tells the model what the tool does and when to use it.
	Description() string
	// Schema is the JSON schema of the arguments object.
	Schema() *jsonschema.Schema
	// Call runs the tool with the model's arguments, which are untrusted.
	// The returned text is sent back to the model. An error is reported to
	// the model as the tool's result; it does not fail the run.
	Call(ctx context.Context, args json.RawMessage) (string, error)
}

// ErrBadArguments reports tool arguments that are not valid JSON or do not
// match the tool's schema.
var ErrBadArguments = errors.New("agent: bad tool arguments")

var toolNameRE = regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`)

// FuncTool is a Tool backed by a typed Go function. Its JSON schema is
// inferred from In with github.com/google/jsonschema-go: field names follow
// the json tags, the jsonschema tag gives a property's description, and
// fields without omitempty/omitzero are required.
type FuncTool[In any] struct {
	name, description string
	schema            *jsonschema.Schema
	resolved          *jsonschema.Resolved
	fn                func(context.Context, In) (string, error)
}

// NewFuncTool returns a tool named name that decodes its arguments into an
// In, validates them against the schema inferred from In, and calls fn.
// In must be a struct type. Names may hold letters, digits, '_' and '-', up
// to 64 characters, as the OpenAI API requires.
func NewFuncTool[In any](name, description string, fn func(ctx context.Context, in In) (string, error)) (*FuncTool[In], error) {
	if !toolNameRE.MatchString(name) {
		return nil, fmt.Errorf("agent: tool name %q: want 1-64 letters, digits, '_' or '-'", name)
	}
	if fn == nil {
		return nil, fmt.Errorf("agent: tool %q: nil function", name)
	}
	schema, err := jsonschema.For[In](nil)
	if err != nil {
		return nil, fmt.Errorf("agent: tool %q: infer schema: %w", name, err)
	}
	if schema.Type != "object" {
		return nil, fmt.Errorf("agent: tool %q: arguments must be a struct, schema type is %q", name, schema.Type)
	}
	resolved, err := schema.Resolve(nil)
	if err != nil {
		return nil, fmt.Errorf("agent: tool %q: resolve schema: %w", name, err)
	}
	return &FuncTool[In]{name: name, description: description, schema: schema, resolved: resolved, fn: fn}, nil
}

// MustFuncTool is like NewFuncTool but panics on error. It is meant for
// package-level tool definitions whose name and type are constants.
func MustFuncTool[In any](name, description string, fn func(ctx context.Context, in In) (string, error)) *FuncTool[In] {
	t, err := NewFuncTool(name, description, fn)
	if err != nil {
		panic(err)
	}
	return t
}

// Name implements Tool.
func (t *FuncTool[In]) Name() string { return t.name }

// Description implements Tool.
func (t *FuncTool[In]) Description() string { return t.description }

// Schema implements Tool.
func (t *FuncTool[In]) Schema() *jsonschema.Schema { return t.schema }

// Call implements Tool. Arguments that are not a JSON object, fail schema
// validation or do not decode into In yield an error wrapping
// ErrBadArguments; fn is not called.
func (t *FuncTool[In]) Call(ctx context.Context, args json.RawMessage) (string, error) {
	in, err := t.Decode(args)
	if err != nil {
		return "", err
	}
	return t.fn(ctx, in)
}

// Decode validates args against the tool's schema and decodes them into an
// In. Empty arguments are read as an empty object.
func (t *FuncTool[In]) Decode(args json.RawMessage) (In, error) {
	var in In
	args = bytes.TrimSpace(args)
	if len(args) == 0 {
		args = json.RawMessage("{}")
	}
	var generic any
	if err := json.Unmarshal(args, &generic); err != nil {
		return in, fmt.Errorf("%w for %s: not valid JSON: %v", ErrBadArguments, t.name, err)
	}
	if _, ok := generic.(map[string]any); !ok {
		return in, fmt.Errorf("%w for %s: want a JSON object", ErrBadArguments, t.name)
	}
	if err := t.resolved.Validate(generic); err != nil {
		return in, fmt.Errorf("%w for %s: %v", ErrBadArguments, t.name, err)
	}
	dec := json.NewDecoder(bytes.NewReader(args))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&in); err != nil {
		return in, fmt.Errorf("%w for %s: %v", ErrBadArguments, t.name, err)
	}
	return in, nil
}
