package gateway_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agentmemory/agentmemory/gateway"
	"github.com/agentmemory/agentmemory/internal/fakeopenai"
	"github.com/agentmemory/agentmemory/store"
)

// benchMemories is how many interactions the benchmark's user has.
const benchMemories = 10_000

// seedMemories writes n interactions of ten messages each for gateway
// user user, one a day, from a small vocabulary (as package retrieval's
// benchmark does).
func seedMemories(b *testing.B, r *rig, user string, n int) {
	b.Helper()
	words := strings.Fields(`retirement savings budget mortgage house rent salary bonus pension fund bond stock dividend
portfolio market inflation loan debt tuition daughter son wife parents vacation travel japan car insurance doctor
wedding job promotion startup taxes charity bank garden dog cat piano guitar marathon yoga cooking camping hiking
book movie concert friend birthday holiday summer winter weekend plan goal review deadline`)
	rng := rand.New(rand.NewPCG(1, 2))
	sentence := func(k int) string {
		w := make([]string, k)
		for i := range w {
			x := rng.Float64()
			w[i] = words[int(float64(len(words))*x*x*x)%len(words)]
		}
		return strings.Join(w, " ")
	}
	ctx := context.Background()
	userID := r.mem.UserID(user)
	start := time.Date(2020, 1, 1, 10, 0, 0, 0, time.UTC)
	for i := range n {
		session := fmt.Sprintf("s%d", i/3)
		first := i%3*10 + 1
		var lines, ids []string
		for t := range 10 {
			who := "user"
			if t%2 == 1 {
				who = "assistant"
			}
			lines = append(lines, who+": "+sentence(8+rng.IntN(12)))
			ids = append(ids, fmt.Sprintf("%s-%d", session, first+t))
		}
		d := &store.Interaction{ID: store.InteractionID(session, first, first+9), SessionID: session,
			Timestamp: start.AddDate(0, 0, i), FirstTurn: first, LastTurn: first + 9, TurnIDs: ids,
			Content: strings.Join(lines, "\n"), Summary: sentence(20), EmbeddingModel: "lexical"}
		if err := r.st.PutInteraction(ctx, userID, d); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkGateway measures what the gateway adds to a request over
// calling the upstream directly, in one run, side by side, for a user
// with 10,000 interactions in the embedded SQLite store (offline models,
// lexical embedder; the fake upstream answers at once, so what is
// measured is the gateway's own time): a greeting the pre-filter keeps
// from searching, a question that searches memory, and the time to the
// first streamed byte of that question. It reports the p50 and p95 of
// each, and the p50 added over the direct call, in ms.
func BenchmarkGateway(b *testing.B) {
	r := newRig(b, nil)
	seedMemories(b, r, "bench", benchMemories)
	r.up.HandleChat(func(fakeopenai.Request) fakeopenai.Reply { return fakeopenai.Text("Noted, thank you.") })
	body := func(text string, stream bool) string {
		return fmt.Sprintf(`{"model":"m","stream":%t,"messages":[{"role":"user","content":%q}]}`, stream, text)
	}
	send := func(url, text string, stream, firstByte bool) time.Duration {
		req, err := http.NewRequest(http.MethodPost, url+"/chat/completions", strings.NewReader(body(text, stream)))
		if err != nil {
			b.Fatal(err)
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set(gateway.UserHeader, "bench")
		start := time.Now()
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		defer resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			msg, _ := io.ReadAll(resp.Body)
			b.Fatalf("%s: %s", resp.Status, msg)
		}
		rd := bufio.NewReader(resp.Body)
		if firstByte {
			if _, err := rd.ReadByte(); err != nil {
				b.Fatal(err)
			}
			d := time.Since(start)
			_, _ = io.Copy(io.Discard, rd)
			return d
		}
		_, _ = io.Copy(io.Discard, rd)
		return time.Since(start)
	}
	direct, gw := r.up.URL(), r.srv.URL+"/v1"
	const greeting, question = "Thanks, that helps a lot!", "What did I decide about my retirement savings and the mortgage?"
	var dSkip, gSkip, dAsk, gAsk, dFirst, gFirst []time.Duration
	for b.Loop() {
		dSkip = append(dSkip, send(direct, greeting, false, false))
		gSkip = append(gSkip, send(gw, greeting, false, false))
		dAsk = append(dAsk, send(direct, question, false, false))
		gAsk = append(gAsk, send(gw, question, false, false))
		dFirst = append(dFirst, send(direct, question, true, true))
		gFirst = append(gFirst, send(gw, question, true, true))
	}
	ms := func(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
	report := func(name string, direct, via []time.Duration) {
		b.ReportMetric(ms(pct(via, 50)), name+"-p50-ms")
		b.ReportMetric(ms(pct(via, 95)), name+"-p95-ms")
		b.ReportMetric(ms(pct(via, 50)-pct(direct, 50)), name+"-added-p50-ms")
		b.ReportMetric(ms(pct(via, 95)-pct(direct, 95)), name+"-added-p95-ms")
	}
	report("skip", dSkip, gSkip)
	report("retrieval", dAsk, gAsk)
	report("first-byte", dFirst, gFirst)
	b.ReportMetric(ms(pct(dAsk, 50)), "direct-p50-ms")
}

// pct is the p-th percentile of ds.
func pct(ds []time.Duration, p int) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[min(len(s)-1, len(s)*p/100)]
}
