package agent

import (
	"bytes"
	"encoding/json"
	"testing"
)

// FuzzToolArgumentsText checks that whatever a model puts in a tool call's
// arguments, the result is valid JSON (so a session holding it marshals),
// and that valid JSON keeps its meaning.
func FuzzToolArgumentsText(f *testing.F) {
	for _, s := range []string{``, `  `, `{}`, `{"city":"Paris"}`, " {\n \"a\" : [1, 2] }\t", `{"a":`, `null`, `"str"`, `[1,2]`, "\xff\xfe", `{"a":"\u00e9"}`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got := ToolArguments(s)
		if !json.Valid(got) {
			t.Fatalf("ToolArguments(%q) = %q: not valid JSON", s, got)
		}
		trimmed := bytes.TrimSpace([]byte(s))
		switch {
		case len(trimmed) == 0:
			if string(got) != "{}" {
				t.Fatalf("blank arguments %q became %q, want {}", s, got)
			}
		case json.Valid(trimmed):
			var want bytes.Buffer
			if err := json.Compact(&want, trimmed); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, want.Bytes()) {
				t.Fatalf("valid arguments %q became %q, want %q", s, got, want.Bytes())
			}
		default:
			var back string
			if err := json.Unmarshal(got, &back); err != nil {
				t.Fatalf("invalid arguments %q became %q, not a JSON string: %v", s, got, err)
			}
		}
	})
}
