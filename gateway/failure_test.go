package gateway_test

import (
	"bufio"
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentmemory/agentmemory/gateway"
	"github.com/agentmemory/agentmemory/internal/fakeopenai"
)

func TestAClosedStoreStillGetsAnswersMarkedDegraded(t *testing.T) {
	t.Parallel()
	r := newRig(t, nil)
	require.NoError(t, r.st.Close())

	r.up.QueueChat(fakeopenai.Text("Still here."))
	var resp *http.Response
	out, err := r.chat("carol").New(context.Background(), openai.ChatCompletionNewParams{
		Model: "gpt-test", Messages: []openai.ChatCompletionMessageParamUnion{userMessage("Where do I live?")},
	}, option.WithResponseInto(&resp))
	require.NoError(t, err)
	assert.Equal(t, "Still here.", out.Choices[0].Message.Content)
	assert.Equal(t, "degraded; reason=store", resp.Header.Get(gateway.Header))
	assert.Len(t, r.up.ChatRequests()[0].Chat.Messages, 1, "forwarded without memory")

	r.up.QueueChat(fakeopenai.Text("Streaming still works."))
	s := r.chat("carol", option.WithResponseInto(&resp)).NewStreaming(context.Background(), openai.ChatCompletionNewParams{
		Model: "gpt-test", Messages: []openai.ChatCompletionMessageParamUnion{userMessage("Where do I live?")},
	})
	var text strings.Builder
	for s.Next() {
		if ch := s.Current().Choices; len(ch) > 0 {
			text.WriteString(ch[0].Delta.Content)
		}
	}
	require.NoError(t, s.Err())
	assert.Equal(t, "Streaming still works.", text.String())
}

func TestAStoreThatFailsAfterTheSessionOpenedDegradesTheRecord(t *testing.T) {
	t.Parallel()
	r := newRig(t, nil)
	r.ask("carol", "", "I live in Porto.", fakeopenai.Text("Noted."))
	require.NoError(t, r.st.Close())
	_, state := r.ask("carol", "", "Where do I live?", fakeopenai.Text("Porto."))
	assert.Equal(t, "degraded; reason=record", state, "answered; the turn could not be recorded")
}

// streamRaw sends a streamed chat request as user over plain HTTP and
// returns the response, to read as the test chooses.
func (r *rig) streamRaw(ctx context.Context, user, text string) *http.Response {
	r.t.Helper()
	body := `{"model":"m","stream":true,"messages":[{"role":"user","content":` + quote(text) + `}]}`
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, r.srv.URL+"/v1/chat/completions", strings.NewReader(body))
	require.NoError(r.t, err)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set(gateway.UserHeader, user)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(r.t, err)
	return resp
}

func quote(s string) string { return `"` + strings.ReplaceAll(s, `"`, `\"`) + `"` }

func TestAClientThatLeavesMidStreamStillHasACompletedTurnRecorded(t *testing.T) {
	t.Parallel()
	r := newRig(t, nil, fakeopenai.WithLatency(fakeopenai.Latency{PerToken: 20 * time.Millisecond}))
	answer := "one two three four five six seven eight nine ten eleven twelve"
	r.up.QueueChat(fakeopenai.Text(answer))
	ctx, cancel := context.WithCancel(context.Background())
	resp := r.streamRaw(ctx, "dave", "Count to twelve for me.")
	assert.Equal(t, "used; retrieved=0", resp.Header.Get(gateway.Header))
	rd := bufio.NewReader(resp.Body)
	line, err := rd.ReadString('\n')
	require.NoError(t, err)
	require.True(t, strings.HasPrefix(line, "data: "), line)
	cancel() // the client goes away after the first event
	resp.Body.Close()

	require.Eventually(t, func() bool { return len(r.turns("dave")) == 2 }, 5*time.Second, 20*time.Millisecond,
		"upstream is read to its end and the turn recorded")
	assert.Equal(t, answer, r.turns("dave")[1].Content)
}

func TestAStreamUpstreamCutsShortRecordsNothing(t *testing.T) {
	t.Parallel()
	r := newRig(t, nil)
	partial := "data: {\"id\":\"c1\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"m\",\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":\"Half an ans\"},\"finish_reason\":null}]}\n\n"
	r.up.QueueChat(fakeopenai.Raw(http.StatusOK, "text/event-stream", partial))
	resp := r.streamRaw(context.Background(), "erin", "Tell me a long story.")
	defer resp.Body.Close()
	rd := bufio.NewReader(resp.Body)
	var got strings.Builder
	for {
		line, err := rd.ReadString('\n')
		got.WriteString(line)
		if err != nil {
			break
		}
	}
	assert.Contains(t, got.String(), "Half an ans", "what upstream sent is relayed")
	require.NoError(t, r.gw.Flush(context.Background()))
	assert.Empty(t, r.turns("erin"), "an answer upstream did not complete is not recorded")
}
