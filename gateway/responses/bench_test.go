package responses_test

import (
	"fmt"
	"io"
	"strings"
	"testing"

	resp "github.com/agentmemory/agentmemory/gateway/responses"
)

// benchRequest is a request of a typical agent turn: instructions, ten
// earlier messages with a tool round, two tools.
func benchRequest() []byte {
	var items []string
	for i := range 4 {
		items = append(items,
			fmt.Sprintf(`{"role":"user","content":"Question %d about the weather in a city far away from here?"}`, i),
			fmt.Sprintf(`{"role":"assistant","content":[{"type":"output_text","text":"Answer %d: it is mild and dry, with a light breeze from the west.","annotations":[]}]}`, i))
	}
	items = append(items,
		`{"type":"function_call","call_id":"c1","name":"get_weather","arguments":"{\"city\":\"Oslo\"}"}`,
		`{"type":"function_call_output","call_id":"c1","output":"{\"celsius\":4}"}`)
	tool := `{"type":"function","name":"%s","description":"A tool.","parameters":{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]},"strict":false}`
	return []byte(`{"model":"gpt-4.1-mini","instructions":"Be brief.","stream":true,"input":[` + strings.Join(items, ",") +
		`],"tools":[` + fmt.Sprintf(tool, "get_weather") + `,` + fmt.Sprintf(tool, "get_time") + `]}`)
}

func BenchmarkParseRequestAndChatBody(b *testing.B) {
	body := benchRequest()
	b.ReportAllocs()
	for b.Loop() {
		r, err := resp.ParseRequest(body)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := r.ChatBody(); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkFromChat(b *testing.B) {
	req, err := resp.ParseRequest(benchRequest())
	if err != nil {
		b.Fatal(err)
	}
	answer := []byte(`{"model":"gpt-4.1-mini","choices":[{"index":0,"message":{"role":"assistant","content":"` + strings.Repeat("word ", 100) +
		`"},"finish_reason":"stop"}],"usage":{"prompt_tokens":300,"completion_tokens":100,"total_tokens":400}}`)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := resp.FromChat(answer, resp.Meta{ID: "resp_1", Request: req}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkStreamChunk measures one text chunk of a stream.
func BenchmarkStreamChunk(b *testing.B) {
	req, err := resp.ParseRequest(benchRequest())
	if err != nil {
		b.Fatal(err)
	}
	st := resp.NewStream(io.Discard, resp.Meta{ID: "resp_1", Request: req})
	c := chunk(`{"content":"word "}`)
	b.ReportAllocs()
	for b.Loop() {
		if err := st.Chunk(c); err != nil {
			b.Fatal(err)
		}
	}
}
