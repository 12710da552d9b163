package gateway

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
)

// emitter writes a door's answer from the upstream's Chat Completions
// answer. The Chat Completions door's (chatEmitter) writes it as it is;
// the Responses door's (responsesEmitter) translates it (a Responses
// object, Responses events).
type emitter interface {
	// completion writes a whole answer: upstream's chat.completion body.
	completion(w http.ResponseWriter, body []byte)
	// streamHeader sets the headers of a streamed answer.
	streamHeader(h http.Header)
	// event writes one line of upstream's server-sent events, with its
	// line ending.
	event(w io.Writer, line []byte) error
	// end closes a streamed answer whose headers were written, once the
	// upstream's stream is over: completed says whether the answer was.
	end(w io.Writer, completed bool)
}

type chatEmitter struct{}

func (chatEmitter) completion(w http.ResponseWriter, body []byte) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(body)
}

func (chatEmitter) streamHeader(h http.Header) {
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
}

func (chatEmitter) event(w io.Writer, line []byte) error {
	_, err := w.Write(line)
	return err
}

// end writes nothing: upstream's own events, [DONE] included, were
// passed on.
func (chatEmitter) end(io.Writer, bool) {}

// serveChat serves POST /v1/chat/completions.
func (h *Handler) serveChat(w http.ResponseWriter, r *http.Request) {
	c, err := readChatRequest(w, r, h.cfg.MaxBodyBytes)
	if err != nil {
		h.fail(w, err)
		return
	}
	h.exchange(w, r, c, chatEmitter{})
}

// fail answers err: an *apiError as it is, anything else as a 500.
func (h *Handler) fail(w http.ResponseWriter, err error) {
	var ae *apiError
	if !errors.As(err, &ae) {
		h.log.Error("gateway: internal error", "err", err)
		ae = internal("internal error; see the gateway's log")
	}
	writeError(w, ae)
}

// exchange runs one request: memory before the model, the upstream
// exchange (streamed or not), the turn recorded after it.
func (h *Handler) exchange(w http.ResponseWriter, r *http.Request, c *chatRequest, out emitter) {
	ctx := r.Context()
	plan, err := h.prepare(ctx, r, c)
	if err != nil {
		h.fail(w, err)
		return
	}
	if _, ok := c.fields["model"]; !ok && h.up.Model != "" {
		c.fields["model"], _ = json.Marshal(h.up.Model)
	}
	var model string
	_ = json.Unmarshal(c.fields["model"], &model)
	// The upstream exchange does not end with the client: an answer that
	// completes is recorded even if nobody reads it.
	uctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), h.cfg.UpstreamTimeout)
	defer cancel()
	// Released once the answer is written (or the exchange failed), on
	// whichever entry the session is in by then (follow may move it).
	if plan.lease != nil {
		defer plan.lease.release()
	}
	if c.stream {
		h.stream(uctx, w, r, c, plan, model, out)
		return
	}
	h.complete(uctx, w, r, c, plan, model, out)
}

// complete runs a request that is not streamed, with the gateway's own
// tool loop when retrieve_user_facts is offered.
func (h *Handler) complete(ctx context.Context, w http.ResponseWriter, r *http.Request, c *chatRequest, plan *memoryPlan, model string, out emitter) {
	loop := newToolLoop(c, plan.tool)
	for round := 0; ; round++ {
		offer := loop.offer(round < h.cfg.MaxToolRounds)
		resp, err := h.up.do(ctx, http.MethodPost, "chat/completions", model, c.body())
		if err != nil {
			w.Header().Set(Header, plan.state.String())
			h.unreachable(w, r, err)
			return
		}
		if resp.StatusCode >= 400 {
			w.Header().Set(Header, plan.state.String())
			relayError(w, resp)
			resp.Body.Close()
			return
		}
		body, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil {
			w.Header().Set(Header, plan.state.String())
			h.unreachable(w, r, err)
			return
		}
		a, msg := completionOf(body)
		if offer {
			if again := loop.run(ctx, a, msg); again {
				continue
			}
			body = loop.strip(body, a)
		}
		if err := h.record(ctx, plan, c, a); err != nil {
			h.log.WarnContext(ctx, "gateway: the turn could not be recorded", "user", plan.scope, "err", err)
			plan.state = degraded("record")
		}
		w.Header().Set(Header, plan.state.String())
		out.completion(w, body)
		return
	}
}
