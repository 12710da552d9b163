package gateway

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
)

// stream runs a streamed request: upstream's server-sent events go to the
// client as they arrive, each event flushed, while the answer is
// accumulated. The turn is recorded when upstream ends the stream
// ("data: [DONE]"), before that event is passed on, so a client that has
// read [DONE] finds the turn stored. A client that goes away mid-stream
// does not stop it: upstream is read to its end and the turn recorded if
// the answer completed. A stream that upstream cuts short records
// nothing.
func (h *Handler) stream(ctx context.Context, w http.ResponseWriter, r *http.Request, c *chatRequest, plan *memoryPlan, model string, out emitter) {
	resp, err := h.up.do(ctx, http.MethodPost, "chat/completions", model, c.body())
	if err != nil {
		w.Header().Set(Header, plan.state.String())
		h.unreachable(w, r, err)
		return
	}
	defer resp.Body.Close()
	if resp.StatusCode >= 400 {
		w.Header().Set(Header, plan.state.String())
		relayError(w, resp)
		return
	}
	w.Header().Set(Header, plan.state.String())
	out.streamHeader(w.Header())
	w.WriteHeader(resp.StatusCode)
	rc := http.NewResponseController(w)
	gone := false // the client went away: upstream is read on, nothing written
	send := func(line []byte) {
		if !gone && out.event(w, line) != nil {
			gone = true
		}
	}
	flush := func() {
		if !gone && rc.Flush() != nil {
			gone = true
		}
	}

	a := &answer{}
	done := false
	rd := bufio.NewReader(resp.Body)
	for {
		line, err := rd.ReadBytes('\n')
		if len(line) > 0 {
			trimmed := bytes.TrimRight(line, "\r\n")
			if data, ok := bytes.CutPrefix(trimmed, []byte("data:")); ok {
				data = bytes.TrimSpace(data)
				if string(data) == "[DONE]" {
					done = true
					h.recordStream(ctx, plan, c, a)
				} else {
					a.add(data)
				}
			}
			send(line)
			if len(trimmed) == 0 {
				flush()
			}
		}
		if err != nil {
			if !errors.Is(err, io.EOF) {
				h.log.WarnContext(ctx, "gateway: upstream stream broken; the turn is not recorded", "user", plan.scope, "err", err)
			} else if !done && a.finish != "" {
				// A server that ends its stream without [DONE] after the
				// last choice chunk has completed the answer.
				done = true
				h.recordStream(ctx, plan, c, a)
			}
			break
		}
	}
	flush()
	if !done && plan.sess != nil {
		h.log.InfoContext(ctx, "gateway: stream did not complete; the turn is not recorded", "user", plan.scope)
	}
}

// recordStream records a completed stream's turn; a failure is logged
// (the headers have gone).
func (h *Handler) recordStream(ctx context.Context, plan *memoryPlan, c *chatRequest, a *answer) {
	if err := h.record(ctx, plan, c, a); err != nil {
		h.log.WarnContext(ctx, "gateway: the turn could not be recorded", "user", plan.scope, "err", err)
	}
}
