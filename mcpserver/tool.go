package mcpserver

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// A tool's arguments are checked against its advertised input schema before
// its handler runs, so that what the schema promises (lengths, bounds,
// enums) is what the server holds to. The checks here cover the keywords
// the tools use, with messages that name the argument and the bound and
// never echo a long value back; the schema's full validation follows them.
// (The SDK's typed AddTool validates too, but its messages quote an
// oversized string whole.)

// props are the properties of an input schema, by name.
type props = map[string]*jsonschema.Schema

// addTool adds t to srv with handler h, the output schema inferred from Out
// and the input schema inferred from In with constrain (if not nil)
// applied to its properties. Arguments that break the input schema are a
// tool error naming what was wrong, as is an error h returns.
func addTool[In, Out any](srv *mcp.Server, t *mcp.Tool, constrain func(props), h func(context.Context, In) (Out, error)) error {
	in, err := jsonschema.For[In](nil)
	if err != nil {
		return fmt.Errorf("tool %s: input schema: %w", t.Name, err)
	}
	if constrain != nil {
		constrain(in.Properties)
	}
	resolved, err := in.Resolve(nil)
	if err != nil {
		return fmt.Errorf("tool %s: input schema: %w", t.Name, err)
	}
	out, err := jsonschema.For[Out](nil)
	if err != nil {
		return fmt.Errorf("tool %s: output schema: %w", t.Name, err)
	}
	tt := *t
	tt.InputSchema, tt.OutputSchema = in, out
	srv.AddTool(&tt, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		args := map[string]any{}
		if raw := req.Params.Arguments; len(raw) > 0 && string(raw) != "null" {
			if err := json.Unmarshal(raw, &args); err != nil {
				return toolError(fmt.Errorf("the arguments are not a JSON object: %v", err)), nil
			}
		}
		if err := checkArgs(in, args); err != nil {
			return toolError(err), nil
		}
		if err := resolved.Validate(args); err != nil {
			return toolError(fmt.Errorf("invalid arguments: %v", err)), nil
		}
		// Decoded again from the checked values, so that a whole number
		// written 5.0 fills an int.
		b, err := json.Marshal(args)
		if err != nil {
			return nil, err
		}
		var input In
		if err := json.Unmarshal(b, &input); err != nil {
			return toolError(fmt.Errorf("invalid arguments: %v", err)), nil
		}
		output, err := h(ctx, input)
		if err != nil {
			return toolError(err), nil
		}
		b, err = json.Marshal(output)
		if err != nil {
			return nil, fmt.Errorf("tool %s: encoding the result: %w", t.Name, err)
		}
		return &mcp.CallToolResult{StructuredContent: json.RawMessage(b), Content: []mcp.Content{&mcp.TextContent{Text: string(b)}}}, nil
	})
	return nil
}

func toolError(err error) *mcp.CallToolResult {
	var res mcp.CallToolResult
	res.SetError(err)
	return &res
}

// checkArgs checks the top-level arguments against s: required ones
// present, no unknown ones, each value as its property allows.
func checkArgs(s *jsonschema.Schema, args map[string]any) error {
	for _, name := range s.Required {
		if _, ok := args[name]; !ok {
			return fmt.Errorf("%s is required", name)
		}
	}
	names := make([]string, 0, len(args))
	for name := range args {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		p, ok := s.Properties[name]
		if !ok {
			takes := "no arguments"
			if len(s.PropertyOrder) > 0 {
				takes = "only " + strings.Join(s.PropertyOrder, ", ")
			}
			return fmt.Errorf("unknown argument %s: the tool takes %s", short(name), takes)
		}
		if err := checkValue(name, p, args[name]); err != nil {
			return err
		}
	}
	return nil
}

// checkValue checks one value v, named name in messages, against p.
func checkValue(name string, p *jsonschema.Schema, v any) error {
	if p == nil {
		return nil
	}
	switch v := v.(type) {
	case string:
		if !allows(p, "string") {
			return typeError(name, p, "a string")
		}
		n := utf8.RuneCountInString(v)
		if p.MinLength != nil && n < *p.MinLength {
			if n == 0 {
				return fmt.Errorf("%s is empty", name)
			}
			return fmt.Errorf("%s is too short: %d characters, at least %d", name, n, *p.MinLength)
		}
		if p.MaxLength != nil && n > *p.MaxLength {
			return fmt.Errorf("%s is too long: %d characters, at most %d characters", name, n, *p.MaxLength)
		}
		if len(p.Enum) > 0 && !slices.Contains(p.Enum, any(v)) {
			vals := make([]string, len(p.Enum))
			for i, e := range p.Enum {
				vals[i] = fmt.Sprint(e)
			}
			return fmt.Errorf("%s %s is not one of %s", name, short(v), strings.Join(vals, ", "))
		}
	case float64:
		whole := v == math.Trunc(v)
		switch {
		case allows(p, "integer") && !allows(p, "number") && !whole:
			return fmt.Errorf("%s must be a whole number, not %s", name, num(v))
		case !allows(p, "integer") && !allows(p, "number"):
			return typeError(name, p, "a number")
		}
		lo, hi := p.Minimum, p.Maximum
		switch {
		case lo != nil && hi != nil && (v < *lo || v > *hi):
			return fmt.Errorf("%s %s is outside %s to %s", name, num(v), num(*lo), num(*hi))
		case lo != nil && v < *lo:
			return fmt.Errorf("%s %s is less than %s", name, num(v), num(*lo))
		case hi != nil && v > *hi:
			return fmt.Errorf("%s %s is more than %s", name, num(v), num(*hi))
		}
	case []any:
		if !allows(p, "array") {
			return typeError(name, p, "an array")
		}
		if p.MaxItems != nil && len(v) > *p.MaxItems {
			return fmt.Errorf("%s has %d items, at most %d", name, len(v), *p.MaxItems)
		}
		for i, e := range v {
			if err := checkValue(fmt.Sprintf("%s[%d]", name, i), p.Items, e); err != nil {
				return err
			}
		}
	case nil:
		if !allows(p, "null") {
			return fmt.Errorf("%s is null: give a value or leave it out", name)
		}
	case bool:
		if !allows(p, "boolean") {
			return typeError(name, p, "a boolean")
		}
	case map[string]any:
		if !allows(p, "object") {
			return typeError(name, p, "an object")
		}
	}
	return nil
}

// allows reports whether p admits JSON values of type typ; a schema without
// a type admits any.
func allows(p *jsonschema.Schema, typ string) bool {
	if p.Type == "" && len(p.Types) == 0 {
		return true
	}
	return p.Type == typ || slices.Contains(p.Types, typ)
}

func typeError(name string, p *jsonschema.Schema, got string) error {
	want := p.Type
	if want == "" {
		want = strings.Join(slices.DeleteFunc(slices.Clone(p.Types), func(t string) bool { return t == "null" }), " or ")
	}
	article := "a"
	if want == "" {
		want = "value"
	}
	if strings.ContainsAny(want[:1], "aeiou") {
		article = "an"
	}
	return fmt.Errorf("%s must be %s %s, not %s", name, article, want, got)
}

// short quotes s, cut to a few dozen characters.
func short(s string) string {
	const maxRunes = 40
	n := 0
	for i := range s {
		if n == maxRunes {
			return strconv.Quote(s[:i]) + "…"
		}
		n++
	}
	return strconv.Quote(s)
}

func num(f float64) string { return strconv.FormatFloat(f, 'g', -1, 64) }
