package gateway_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/responses"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentmemory/agentmemory/embed/lexical"
	"github.com/agentmemory/agentmemory/gateway"
	"github.com/agentmemory/agentmemory/internal/fakeopenai"
	"github.com/agentmemory/agentmemory/llm/offline"
	"github.com/agentmemory/agentmemory/memoryservice"
	"github.com/agentmemory/agentmemory/retrieval"
	"github.com/agentmemory/agentmemory/store"
)

// respond sends one non-streamed Responses request as user, continuing
// prev when it is set, and returns the response and its headers.
func (r *rig) respond(user, prev string, params responses.ResponseNewParams, reply fakeopenai.Reply) (*responses.Response, http.Header) {
	r.t.Helper()
	r.up.QueueChat(reply)
	if params.Model == "" {
		params.Model = "gpt-test"
	}
	if prev != "" {
		params.PreviousResponseID = openai.String(prev)
	}
	var resp *http.Response
	c := r.client(user)
	out, err := c.Responses.New(context.Background(), params, option.WithResponseInto(&resp))
	require.NoError(r.t, err)
	return out, resp.Header
}

// say is a Responses request of one user message.
func say(text string) responses.ResponseNewParams {
	return responses.ResponseNewParams{Input: responses.ResponseNewParamsInputUnion{OfString: openai.String(text)}}
}

// contextTokens reads the X-Memory-Context-Tokens header.
func contextTokens(t *testing.T, h http.Header) (sent, chain int) {
	t.Helper()
	v := h.Get(gateway.ContextTokensHeader)
	_, err := fmt.Sscanf(v, "sent=%d; chain=%d", &sent, &chain)
	require.NoError(t, err, "header %q", v)
	return sent, chain
}

// count returns how many messages of req have role and content.
func count(req fakeopenai.Request, role, content string) int {
	n := 0
	for _, m := range req.Chat.Messages {
		if m.Role == role && m.Content == content {
			n++
		}
	}
	return n
}

func TestAResponsesChainSendsTheEarlierTurnsOnceAndNotTheInstructions(t *testing.T) {
	t.Parallel()
	r := newRig(t, nil)
	first := say("My dog is called Biscuit.")
	first.Instructions = openai.String("Answer in one sentence.")
	r1, h1 := r.respond("alice", "", first, fakeopenai.Text("What a lovely name."))
	assert.Equal(t, "What a lovely name.", r1.OutputText())
	assert.True(t, strings.HasPrefix(r1.ID, "resp_"), r1.ID)
	assert.True(t, strings.HasPrefix(h1.Get(gateway.Header), "used"), h1.Get(gateway.Header))
	sent1 := r.up.ChatRequests()[0]
	assert.Equal(t, "Answer in one sentence.", sent1.Chat.Messages[0].Content[:len("Answer in one sentence.")], "the instructions come first, the memory block merged after them")

	r2, _ := r.respond("alice", r1.ID, say("I live in Lisbon."), fakeopenai.Text("Noted, Lisbon."))
	assert.Equal(t, "Noted, Lisbon.", r2.OutputText())
	assert.Equal(t, r1.ID, r2.PreviousResponseID)

	r3, h3 := r.respond("alice", r2.ID, say("What is my dog called and where do I live?"), fakeopenai.Text("Biscuit, in Lisbon."))
	assert.Equal(t, "Biscuit, in Lisbon.", r3.OutputText())

	reqs := r.up.ChatRequests()
	require.Len(t, reqs, 3)
	third := reqs[2]
	for _, m := range []struct{ role, text string }{
		{"user", "My dog is called Biscuit."}, {"assistant", "What a lovely name."},
		{"user", "I live in Lisbon."}, {"assistant", "Noted, Lisbon."},
	} {
		assert.Equal(t, 1, count(third, m.role, m.text), "%s %q is sent once, as an active turn", m.role, m.text)
	}
	msgs := third.Chat.Messages
	assert.Equal(t, "What is my dog called and where do I live?", msgs[len(msgs)-1].Content, "the new input last")
	assert.Equal(t, "My dog is called Biscuit.", msgs[0].Content, "no memory block yet (nothing summarised): the active turns first")
	for _, m := range msgs {
		assert.NotContains(t, m.Content, "Answer in one sentence.", "instructions are not carried over")
	}
	sent, chain := contextTokens(t, h3)
	assert.Greater(t, sent, 0)
	assert.Greater(t, chain, 0)

	// One session: the chain's, its turns stored in order.
	turns := r.storedTurns("alice")
	require.Len(t, turns, 3)
	assert.Equal(t, turns[0].SessionID, turns[2].SessionID)
	assert.Equal(t, "What is my dog called and where do I live?", turns[2].Messages[0].Content)

	// A request without previous_response_id begins a new chain.
	r.respond("alice", "", say("Hello again."), fakeopenai.Text("Hello."))
	fresh := r.up.ChatRequests()[3]
	assert.Zero(t, count(fresh, "user", "I live in Lisbon."), "a new chain does not get the active turns of another")
}

func TestAStreamedResponsesChainContinuesAcrossRequests(t *testing.T) {
	t.Parallel()
	r := newRig(t, nil)
	stream := func(prev, text, answer string) (*responses.Response, string, http.Header) {
		t.Helper()
		r.up.QueueChat(fakeopenai.Text(answer))
		params := say(text)
		params.Model = "gpt-test"
		if prev != "" {
			params.PreviousResponseID = openai.String(prev)
		}
		var resp *http.Response
		c := r.client("bob")
		s := c.Responses.NewStreaming(context.Background(), params, option.WithResponseInto(&resp))
		// The SDK's accumulator puts the events together (it reads the
		// events' JSON, which the WebSocket transport shares with SSE).
		var acc responses.ResponseAccumulator
		var deltas strings.Builder
		for s.Next() {
			ev := s.Current()
			if ev.Type == "response.output_text.delta" {
				deltas.WriteString(ev.AsResponseOutputTextDelta().Delta)
			}
			var u responses.ResponsesServerEventUnion
			require.NoError(t, json.Unmarshal([]byte(ev.RawJSON()), &u))
			require.NoError(t, acc.AddEvent(u), "event %s", ev.Type)
		}
		require.NoError(t, s.Err())
		require.Equal(t, "response.completed", acc.Snapshot().TerminalEvent)
		done, err := acc.ReconstructedResponse()
		require.NoError(t, err)
		assert.Equal(t, deltas.String(), acc.Snapshot().OutputText(), "the deltas make the text")
		return done, deltas.String(), resp.Header
	}
	r1, text1, _ := stream("", "My favourite colour is teal.", "Teal is lovely.")
	assert.Equal(t, "Teal is lovely.", text1)
	assert.Equal(t, "Teal is lovely.", r1.OutputText())
	require.Len(t, r.turns("bob"), 2, "the streamed turn is stored before response.completed")

	r2, _, _ := stream(r1.ID, "I also like jazz.", "Jazz too, noted.")
	r3, text3, h3 := stream(r2.ID, "What do I like?", "Teal and jazz.")
	assert.Equal(t, "Teal and jazz.", text3)
	assert.Equal(t, r2.ID, r3.PreviousResponseID)
	third := r.up.ChatRequests()[2]
	assert.Equal(t, 1, count(third, "user", "My favourite colour is teal."))
	assert.Equal(t, 1, count(third, "assistant", "Jazz too, noted."))
	_, chain := contextTokens(t, h3)
	assert.Greater(t, chain, 0)
	assert.Len(t, r.turns("bob"), 6)
}

func TestALongChainSendsFewerTokensThanTheWholeChain(t *testing.T) {
	t.Parallel()
	r := newRig(t, nil)
	filler := strings.Repeat("The weather in the mountains changes quickly and walkers should carry layers. ", 8)
	prev := ""
	var sent, chain int
	for i := range 16 {
		out, h := r.respond("carol", prev, say(fmt.Sprintf("Day %d of my trip: %s", i, filler)), fakeopenai.Text(fmt.Sprintf("Noted day %d. %s", i, filler)))
		prev = out.ID
		sent, chain = contextTokens(t, h)
		require.NoError(t, r.gw.Flush(context.Background())) // let pruning compress the old turns
	}
	t.Logf("after 16 turns: sent=%d chain=%d", sent, chain)
	assert.Less(t, sent, chain/2, "the compressed context is well under the whole chain")
	last := r.up.ChatRequests()[15]
	assert.Zero(t, count(last, "user", fmt.Sprintf("Day 0 of my trip: %s", filler)), "the oldest turns are summarised, not resent")
}

func TestAnotherUsersPreviousResponseIDIsNotFound(t *testing.T) {
	t.Parallel()
	r := newRig(t, func(c *gateway.Config) { c.IdleTimeout = 50 * time.Millisecond })
	mine, _ := r.respond("alice", "", say("My PIN hint is 'blue heron'."), fakeopenai.Text("Noted."))

	for _, tc := range []struct{ name, user, id string }{
		{"another user", "mallory", mine.ID},
		{"no user", "", mine.ID},
		{"not an id of the gateway", "alice", "resp_0123456789abcdef"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := r.client(tc.user)
			params := say("What is my PIN hint?")
			params.Model = "gpt-test"
			params.PreviousResponseID = openai.String(tc.id)
			_, err := c.Responses.New(context.Background(), params)
			var apiErr *openai.Error
			require.True(t, errors.As(err, &apiErr), "%v", err)
			assert.Equal(t, http.StatusBadRequest, apiErr.StatusCode)
			assert.Equal(t, "previous_response_not_found", apiErr.Code)
			assert.Equal(t, "previous_response_id", apiErr.Param)
		})
	}
	assert.Len(t, r.up.ChatRequests(), 1, "nothing refused reached the upstream")

	// Nor does a refused request leave a session behind in the refused
	// user's memory, once its idle time has passed.
	time.Sleep(150 * time.Millisecond)
	require.NoError(t, r.gw.Flush(context.Background()))
	ss, err := r.st.ListSessions(context.Background(), r.mem.UserID("mallory"), store.SessionFilter{})
	require.NoError(t, err)
	assert.Empty(t, ss, "mallory's memory is untouched")
}

func TestAClientToolCallRoundTripsThroughTheChain(t *testing.T) {
	t.Parallel()
	r := newRig(t, nil)
	weather := responses.ToolParamOfFunction("get_weather", map[string]any{
		"type": "object", "properties": map[string]any{"city": map[string]any{"type": "string"}},
	}, false)
	params := say("Is it warm in Lisbon today?")
	params.Tools = []responses.ToolUnionParam{weather}
	first, _ := r.respond("dave", "", params,
		fakeopenai.ToolCalls(fakeopenai.Call("call_9", "get_weather", `{"city":"Lisbon"}`)).WithFinishReason("tool_calls"))
	require.Len(t, first.Output, 1)
	call := first.Output[0].AsFunctionCall()
	assert.Equal(t, "get_weather", call.Name)
	assert.Equal(t, "call_9", call.CallID)

	output := responses.ResponseNewParams{
		Input: responses.ResponseNewParamsInputUnion{OfInputItemList: responses.ResponseInputParam{
			{OfFunctionCallOutput: &responses.ResponseInputItemFunctionCallOutputParam{
				CallID: openai.String(call.CallID),
				Output: responses.ResponseInputItemFunctionCallOutputOutputUnionParam{OfString: openai.String("24°C and sunny")},
			}},
		}},
		Tools: []responses.ToolUnionParam{weather},
	}
	second, _ := r.respond("dave", first.ID, output, fakeopenai.Text("Yes, 24°C and sunny."))
	assert.Equal(t, "Yes, 24°C and sunny.", second.OutputText())

	msgs := r.up.ChatRequests()[1].Chat.Messages
	n := len(msgs)
	require.GreaterOrEqual(t, n, 3)
	assert.Equal(t, "user", msgs[n-3].Role)
	assert.Equal(t, "Is it warm in Lisbon today?", msgs[n-3].Content, "the question, from the chain")
	assert.Equal(t, "assistant", msgs[n-2].Role)
	require.Len(t, msgs[n-2].ToolCalls, 1, "the call the output answers, from the chain")
	assert.Equal(t, "call_9", msgs[n-2].ToolCalls[0].ID)
	assert.Equal(t, "get_weather", msgs[n-2].ToolCalls[0].Name)
	assert.JSONEq(t, `{"city":"Lisbon"}`, msgs[n-2].ToolCalls[0].Arguments)
	assert.Equal(t, "tool", msgs[n-1].Role)
	assert.Equal(t, "call_9", msgs[n-1].ToolCallID)
	assert.Equal(t, "24°C and sunny", msgs[n-1].Content)

	turns := r.storedTurns("dave")
	require.Len(t, turns, 2, "the call, then its answer")
	assert.Equal(t, "Yes, 24°C and sunny.", turns[1].Messages[len(turns[1].Messages)-1].Content)
	assert.Contains(t, turns[1].Metadata["tools"], "24°C and sunny", "the result kept with its call")
}

func TestAStoppedStoreStillAnswersResponsesDegraded(t *testing.T) {
	t.Parallel()
	r := newRig(t, nil)
	prior, _ := r.respond("erin", "", say("I live in Porto."), fakeopenai.Text("Noted."))
	require.NoError(t, r.st.Close())

	out, h := r.respond("erin", prior.ID, say("Where do I live?"), fakeopenai.Text("Still here."))
	assert.Equal(t, "Still here.", out.OutputText())
	assert.Equal(t, "degraded; reason=store", h.Get(gateway.Header))
	assert.Len(t, r.up.ChatRequests()[1].Chat.Messages, 1, "forwarded without memory")
	assert.True(t, strings.HasPrefix(out.ID, "resp_"))

	r.up.QueueChat(fakeopenai.Text("Streaming still works."))
	params := say("Where do I live?")
	params.Model = "gpt-test"
	c := r.client("erin")
	s := c.Responses.NewStreaming(context.Background(), params)
	var text strings.Builder
	for s.Next() {
		if ev := s.Current(); ev.Type == "response.output_text.delta" {
			text.WriteString(ev.AsResponseOutputTextDelta().Delta)
		}
	}
	require.NoError(t, s.Err())
	assert.Equal(t, "Streaming still works.", text.String())
}

func TestStoreFalseKeepsTheTurnOut(t *testing.T) {
	t.Parallel()
	r := newRig(t, nil)
	params := say("My locker code is 4312.")
	params.Store = openai.Bool(false)
	out, h := r.respond("frank", "", params, fakeopenai.Text("I won't keep it."))
	assert.Contains(t, out.RawJSON(), `"store":false`)
	assert.Contains(t, h.Get(gateway.Header), "store=off")
	require.NoError(t, r.gw.Flush(context.Background()))
	assert.Empty(t, r.turns("frank"), "store: false records nothing")
}

func TestAResponsesRequestTheTranslationRefusesIsA400(t *testing.T) {
	t.Parallel()
	r := newRig(t, nil)
	status, _, body := r.do(http.MethodPost, "/v1/responses", map[string]string{gateway.UserHeader: "alice"},
		map[string]any{"model": "gpt-test", "input": "hi", "tools": []any{map[string]any{"type": "web_search"}}})
	assert.Equal(t, http.StatusBadRequest, status)
	assert.Contains(t, string(body), "web_search")
	assert.Empty(t, r.up.ChatRequests())

	status, _, body = r.do(http.MethodPost, "/v1/responses", map[string]string{gateway.UserHeader: "alice"},
		map[string]any{"model": "gpt-test", "input": "hi", "memory_config": map[string]any{"retrieval_limt": 3}})
	assert.Equal(t, http.StatusBadRequest, status)
	assert.Contains(t, string(body), "memory_config")
}

func TestResponsesExtensionsDoNotReachTheUpstream(t *testing.T) {
	t.Parallel()
	r := newRig(t, nil)
	r.up.QueueChat(fakeopenai.Text("ok"))
	status, h, _ := r.do(http.MethodPost, "/v1/responses", nil, map[string]any{
		"model": "gpt-test", "input": "hi", "seed": 7,
		"memory_context": map[string]any{"user_id": "gina"},
		"memory_config":  map[string]any{"retrieval_limit": 0},
	})
	require.Equal(t, http.StatusOK, status)
	assert.Contains(t, h.Get(gateway.Header), "retrieval=off")
	sent := r.up.ChatRequests()[0].JSON
	assert.NotContains(t, sent, "memory_context")
	assert.NotContains(t, sent, "memory_config")
	assert.EqualValues(t, 7, sent["seed"], "an unknown field passes through")
	assert.Len(t, r.turns("gina"), 2)
}

func TestAChainContinuesOnAnotherReplica(t *testing.T) {
	t.Parallel()
	r := newRig(t, nil)
	first, _ := r.respond("hana", "", say("My sister is called Ines."), fakeopenai.Text("Hello to Ines."))

	// A second replica: its own memory service and gateway on the same
	// store, nothing shared in memory with the first.
	ctx := context.Background()
	chat, err := offline.New(offline.Config{})
	require.NoError(t, err)
	emb, err := lexical.New(lexical.Config{})
	require.NoError(t, err)
	svc, err := memoryservice.New(ctx, r.st, memoryservice.Config{Chat: chat, Mini: chat, Embedder: emb, Logger: quiet(), RateLimit: -1})
	require.NoError(t, err)
	t.Cleanup(func() { _ = svc.Close(context.Background()) })
	mem, err := svc.GatewayStore(ctx, storeName, "offline", "lexical")
	require.NoError(t, err)
	gw, err := gateway.New(ctx, gateway.Config{Memory: mem, Upstream: gateway.Upstream{BaseURL: r.up.URL()}, Logger: quiet()})
	require.NoError(t, err)
	t.Cleanup(func() { _ = gw.Close(context.Background()) })
	other := httptest.NewServer(gw)
	t.Cleanup(other.Close)

	// The first replica measures the chain from what it counted before
	// (store: false, so that nothing is added), the other from the store:
	// the same chain.
	latest, _ := r.respond("hana", first.ID, say("I have a brother too."), fakeopenai.Text("Noted."))
	probe := say("What is my sister called?")
	probe.Store = openai.Bool(false)
	_, h := r.respond("hana", latest.ID, probe, fakeopenai.Text("Ines."))
	_, chainHere := contextTokens(t, h)

	r.up.QueueChat(fakeopenai.Text("Ines."))
	c := openai.NewClient(option.WithBaseURL(other.URL+"/v1"), option.WithAPIKey("k"), option.WithMaxRetries(0), option.WithHeader(gateway.UserHeader, "hana"))
	params := say("What is my sister called?")
	params.Model = "gpt-test"
	params.PreviousResponseID = openai.String(latest.ID)
	var resp *http.Response
	second, err := c.Responses.New(ctx, params, option.WithResponseInto(&resp))
	require.NoError(t, err)
	assert.Equal(t, "Ines.", second.OutputText())
	_, chainThere := contextTokens(t, resp.Header)
	assert.Equal(t, chainHere, chainThere, "the chain measures the same on both replicas")
	sent := r.up.ChatRequests()[3]
	assert.Equal(t, 1, count(sent, "user", "My sister is called Ines."), "the chain's turns, read from the store by the other replica")
	assert.Equal(t, 1, count(sent, "user", "I have a brother too."))

	turns := r.storedTurns("hana")
	require.Len(t, turns, 3)
	assert.Equal(t, turns[0].SessionID, turns[2].SessionID, "one session, whichever replica answered")
}

func TestAStreamedResponseHidesTheGatewaysOwnToolCalls(t *testing.T) {
	t.Parallel()
	r := newRig(t, func(c *gateway.Config) { c.RetrievalTool = true })
	r.up.QueueChat(
		fakeopenai.ToolCalls(fakeopenai.Call("call_m", retrieval.ToolName, `{"query":"dog"}`)),
		fakeopenai.Text("I don't know your dog's name yet."),
	)
	params := say("What is my dog called?")
	params.Model = "gpt-test"
	c := r.client("ivan")
	s := c.Responses.NewStreaming(context.Background(), params)
	var types []string
	var done responses.Response
	for s.Next() {
		ev := s.Current()
		types = append(types, ev.Type)
		if ev.Type == "response.completed" {
			done = ev.AsResponseCompleted().Response
		}
	}
	require.NoError(t, s.Err())
	assert.NotContains(t, types, "response.function_call_arguments.delta", "the gateway's call is not the client's")
	require.Len(t, done.Output, 1, "one message, no function_call: %s", done.RawJSON())
	assert.Equal(t, "I don't know your dog's name yet.", done.OutputText())
	assert.Len(t, r.up.ChatRequests(), 2, "the gateway answered its call and asked again")
	assert.Equal(t, "response.completed", types[len(types)-1])
}

func TestAChainIdlePastTheTimeoutGoesOnInANewSession(t *testing.T) {
	t.Parallel()
	// Long enough for the requests of the chain not to idle between
	// them, under -race on a loaded machine too (300 ms was not, at a load
	// of 20 on two cores); the test waits for it once, in parallel.
	r := newRig(t, func(c *gateway.Config) { c.IdleTimeout = 2 * time.Second })
	r1, _ := r.respond("judy", "", say("My cat is called Miso."), fakeopenai.Text("Hello Miso."))
	r.endSessions("judy")

	r2, _ := r.respond("judy", r1.ID, say("What is my cat called?"), fakeopenai.Text("Miso."))
	assert.Contains(t, r.up.ChatRequests()[1].Text(), "Miso", "the ended session's summary reaches the model")
	assert.NotEqual(t, r1.ID[len(r1.ID)-8:], r2.ID[len(r2.ID)-8:], "the new response names the new session")
	r.respond("judy", r2.ID, say("Thanks."), fakeopenai.Text("You're welcome."))
	assert.Equal(t, 1, count(r.up.ChatRequests()[2], "user", "What is my cat called?"), "the new session's turn, as an active turn")

	sessionOf := map[string]string{}
	for _, tr := range r.storedTurns("judy") {
		sessionOf[tr.Messages[0].Content] = tr.SessionID
	}
	require.Len(t, sessionOf, 3)
	assert.NotEqual(t, sessionOf["My cat is called Miso."], sessionOf["What is my cat called?"], "the chain went on in a new session")
	assert.Equal(t, sessionOf["What is my cat called?"], sessionOf["Thanks."], "and stays in it")
}

func TestANamedSessionIsOneSessionForBothDoorsAcrossAnIdleEnd(t *testing.T) {
	t.Parallel()
	// As long as in the test above, for the same reason.
	r := newRig(t, func(c *gateway.Config) { c.IdleTimeout = 2 * time.Second })
	named := option.WithHeader(gateway.SessionHeader, "work")
	r.up.QueueChat(fakeopenai.Text("Noted."))
	c := r.client("kate", named)
	first, err := c.Responses.New(context.Background(), responses.ResponseNewParams{Model: "gpt-test",
		Input: responses.ResponseNewParamsInputUnion{OfString: openai.String("The project is called Heron.")}})
	require.NoError(t, err)
	r.endSessions("kate")

	r.respond("kate", first.ID, say("What is the project called?"), fakeopenai.Text("Heron."))
	r.ask("kate", "work", "And who leads it?", fakeopenai.Text("You do."))

	sessionOf := map[string]string{}
	for _, tr := range r.storedTurns("kate") {
		sessionOf[tr.Messages[0].Content] = tr.SessionID
	}
	require.Len(t, sessionOf, 3)
	assert.NotEqual(t, sessionOf["The project is called Heron."], sessionOf["What is the project called?"], "the idle end began a new session")
	assert.Equal(t, sessionOf["What is the project called?"], sessionOf["And who leads it?"],
		"the chain and the Chat Completions door go on in the one session the name is in")
}

func TestAStreamedClientToolCallRoundTripsThroughTheChain(t *testing.T) {
	t.Parallel()
	r := newRig(t, nil)
	weather := responses.ToolParamOfFunction("get_weather", map[string]any{"type": "object"}, false)
	stream := func(params responses.ResponseNewParams) responses.Response {
		t.Helper()
		params.Model = "gpt-test"
		params.Tools = []responses.ToolUnionParam{weather}
		c := r.client("leo")
		s := c.Responses.NewStreaming(context.Background(), params)
		var done responses.Response
		for s.Next() {
			if ev := s.Current(); ev.Type == "response.completed" {
				done = ev.AsResponseCompleted().Response
			}
		}
		require.NoError(t, s.Err())
		return done
	}
	r.up.QueueChat(fakeopenai.ToolCalls(fakeopenai.Call("call_s", "get_weather", `{"city":"Oslo"}`)).WithFinishReason("tool_calls"))
	first := stream(say("Weather in Oslo?"))
	require.Len(t, first.Output, 1)
	call := first.Output[0].AsFunctionCall()
	assert.Equal(t, `{"city":"Oslo"}`, call.Arguments, "the streamed fragments, put together")

	r.up.QueueChat(fakeopenai.Text("It is 4 °C in Oslo."))
	output := responses.ResponseNewParams{
		PreviousResponseID: openai.String(first.ID),
		Input: responses.ResponseNewParamsInputUnion{OfInputItemList: responses.ResponseInputParam{
			{OfFunctionCallOutput: &responses.ResponseInputItemFunctionCallOutputParam{
				CallID: openai.String(call.CallID),
				Output: responses.ResponseInputItemFunctionCallOutputOutputUnionParam{OfString: openai.String(`{"celsius":4}`)},
			}},
		}},
	}
	second := stream(output)
	assert.Equal(t, "It is 4 °C in Oslo.", second.OutputText())
	msgs := r.up.ChatRequests()[1].Chat.Messages
	n := len(msgs)
	require.GreaterOrEqual(t, n, 2)
	require.Len(t, msgs[n-2].ToolCalls, 1, "the streamed call, recorded with its turn, precedes its output")
	assert.Equal(t, "call_s", msgs[n-2].ToolCalls[0].ID)
	assert.Equal(t, "call_s", msgs[n-1].ToolCallID)
}
