package offline

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/agentmemory/agentmemory/agent"
)

func FuzzParseMarker(f *testing.F) {
	for _, s := range []string{"", Marker("insights"), "\n " + Marker("a.b-c_d") + " \r\nbody", MarkerPrefix, MarkerPrefix + "X", MarkerPrefix + "a b", "agentmemory:prompt", "\xff" + MarkerPrefix} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		name, found, err := ParseMarker(text)
		switch {
		case !found && (name != "" || err != nil):
			t.Fatalf("not found but name %q err %v", name, err)
		case found && err == nil:
			if !ValidName(name) || !strings.Contains(text, Marker(name)) {
				t.Fatalf("found invalid or absent name %q", name)
			}
		case found && err != nil:
			// The error quotes at most MaxNameLen+8 bytes, each up to 4
			// characters once escaped.
			if name != "" || len(err.Error()) > 4*(MaxNameLen+8)+100 {
				t.Fatalf("malformed marker: name %q, error of %d bytes", name, len(err.Error()))
			}
		}
		// FindMarker agrees on a lone system message.
		n2, f2, _ := FindMarker([]agent.Message{agent.SystemText(text)})
		if n2 != name || f2 != found {
			t.Fatalf("FindMarker = %q, %v; ParseMarker = %q, %v", n2, f2, name, found)
		}
	})
}

// FuzzComplete drives the marker-free rules with arbitrary memory, question
// and tool output: no panic, bounded valid-UTF-8 output, determinism.
func FuzzComplete(f *testing.F) {
	f.Add("The user plans to retire at 60. Mr. Smith manages the 401k.", "When do I retire?", "retrieve_user_facts", "Retires at 60.")
	f.Add("", "", "x", "")
	f.Add("### Key Insights\n- a\n- b", "hi", "get_weather", "error: down")
	f.Add("東京に住んでいます。猫が好きです。", "東京?", "search-notes", "\xff\xfe")
	const maxRunes = 120
	c, err := New(Config{MaxAnswerRunes: maxRunes})
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, memory, question, toolName, toolOut string) {
		var tools []agent.Tool
		if tool, err := agent.NewFuncTool(toolName, "", func(context.Context, queryArgs) (string, error) { return toolOut, nil }); err == nil {
			tools = append(tools, tool)
		}
		reqs := []*agent.ChatRequest{
			{Messages: []agent.Message{agent.SystemText(memory), agent.UserText(question)}, Tools: tools},
			{Messages: []agent.Message{agent.SystemText(memory), agent.UserText(question), {Role: agent.RoleTool, Name: toolName, ToolCallID: "c", Text: toolOut}}},
			{Messages: []agent.Message{{Role: agent.RoleAssistant, Source: "p", Text: memory}, agent.UserText(question)}, MaxTokens: 3},
		}
		for _, req := range reqs {
			resp, err := c.Complete(context.Background(), req)
			if err != nil {
				// Only a marker in the memory message may fail.
				if !strings.Contains(memory, MarkerPrefix) && !strings.Contains(question, MarkerPrefix) {
					t.Fatalf("Complete: %v", err)
				}
				continue
			}
			text := resp.Message.Text
			if !utf8.ValidString(text) || utf8.RuneCountInString(text) > maxRunes {
				t.Fatalf("answer of %d runes (valid UTF-8 %v)", utf8.RuneCountInString(text), utf8.ValidString(text))
			}
			for _, tc := range resp.Message.ToolCalls {
				if !json.Valid(tc.Arguments) || len(tc.Arguments) > 8*maxArgRunes {
					t.Fatalf("arguments %q", tc.Arguments)
				}
			}
			again, err := c.Complete(context.Background(), req)
			if err != nil {
				t.Fatal(err)
			}
			a, _ := json.Marshal(resp)
			b, _ := json.Marshal(again)
			if string(a) != string(b) {
				t.Fatalf("not deterministic:\n%s\n%s", a, b)
			}
		}
	})
}
