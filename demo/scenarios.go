package main

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/agentmemory/agentmemory/agent"
	"github.com/agentmemory/agentmemory/keeper"
	"github.com/agentmemory/agentmemory/provider"
	"github.com/agentmemory/agentmemory/retrieval"
	"github.com/agentmemory/agentmemory/store"
	"github.com/agentmemory/agentmemory/tokens"
)

// demo holds what the scenarios share: one client, one memory, the
// story's clock.
type demo struct {
	w       io.Writer
	st      store.Store
	mem     *provider.MemoryProvider
	advisor *agent.Agent
	clock   *simClock
	ids     *idSeq
	seen    *witness
	offline bool
	counter tokens.Counter
}

// timeline dates the story: Dana's first meeting in January, a question
// about it in March, a fresh session in April, a budget talk in June.
var timeline = struct {
	pastSession, askSession, reflect, freshSession, budgetSession time.Time
}{
	pastSession:   time.Date(2025, time.January, 14, 10, 0, 0, 0, time.UTC),
	askSession:    time.Date(2025, time.March, 4, 9, 0, 0, 0, time.UTC),
	reflect:       time.Date(2025, time.April, 7, 22, 0, 0, 0, time.UTC),
	freshSession:  time.Date(2025, time.April, 8, 9, 0, 0, 0, time.UTC),
	budgetSession: time.Date(2025, time.June, 10, 18, 0, 0, 0, time.UTC),
}

func (d *demo) play(ctx context.Context, n int) error {
	switch n {
	case 1:
		return d.longContext(ctx)
	case 2:
		return d.reflectionInit(ctx)
	case 3:
		return d.compression(ctx)
	}
	return fmt.Errorf("no scenario %d (there are 1, 2 and 3)", n)
}

// heading prints a scenario's title and the claim it demonstrates.
func (d *demo) heading(n int, title, claim string) {
	fmt.Fprintf(d.w, "== Scenario %d: %s\n", n, title)
	wrap(d.w, "Claim: ", claim)
	fmt.Fprintln(d.w)
}

// longContext is scenario 1: a long past conversation is imported, and a
// new session finds in memory the decision taken in it.
func (d *demo) longContext(ctx context.Context) error {
	d.heading(1, "long context with memory retrieval",
		"a new session starts with none of an old conversation's turns in its context, yet the decision taken in it "+
			"(roll the Acme 401k into a traditional IRA in March) reaches the model, with its citation.")
	d.clock.set(timeline.pastSession)
	past, err := d.advisor.NewUserSession(userID)
	if err != nil {
		return err
	}
	for _, t := range history {
		d.clock.advance(2 * time.Minute)
		now := d.clock.Now()
		user := agent.Message{ID: d.ids.next(), Role: agent.RoleUser, Text: t[0], CreatedAt: now}
		reply := agent.Message{ID: d.ids.next(), Role: agent.RoleAssistant, Text: t[1], CreatedAt: now}
		if err := d.mem.Record(ctx, past, user, reply); err != nil {
			return err
		}
	}
	res, err := d.mem.EndSession(ctx, past)
	if err != nil {
		return err
	}
	if err := d.mem.Flush(ctx); err != nil {
		return err
	}
	docs, err := d.st.ListInteractions(ctx, userID, store.InteractionFilter{SessionID: past.ID()})
	if err != nil {
		return err
	}
	fmt.Fprintf(d.w, "%s: a past conversation of %d turns (session %s) is imported and ended: %d interaction documents\n",
		day(timeline.pastSession), len(history), past.ID(), len(docs))
	for _, doc := range docs {
		fmt.Fprintf(d.w, "  %s  turns %d-%d; topics %s\n", doc.ID, doc.FirstTurn, doc.LastTurn, strings.Join(doc.Metadata.MentionedTopics, ", "))
	}
	wrap(d.w, "  session summary: ", res.Session.Summary)
	fmt.Fprintln(d.w)

	d.clock.set(timeline.askSession)
	fmt.Fprintf(d.w, "%s: a new session; none of those turns is in its context.\n", day(timeline.askSession))
	now, err := d.advisor.NewUserSession(userID)
	if err != nil {
		return err
	}
	t := &talk{sess: now}
	if err := d.say(ctx, t, "What did we discuss about my 401k?",
		fact{"the 401k decision", []string{"rollover", "traditional IRA", "March"}}); err != nil {
		return err
	}
	if _, err := d.mem.EndSession(ctx, now); err != nil {
		return err
	}
	fmt.Fprintln(d.w)
	return d.mem.Flush(ctx)
}

// reflectionInit is scenario 2: the finished sessions are reflected on,
// the insights folded into the long-term profile, and a fresh session
// starts with it.
func (d *demo) reflectionInit(ctx context.Context) error {
	d.heading(2, "reflection-powered session initialization",
		"the finished sessions are reflected on; their insights fold into a long-term profile, and a fresh session's "+
			"first message reaches the model with that profile (the client's goal and concern) and the last session.")
	d.clock.set(timeline.reflect)
	// Sessions are reflected on in the background when they end; wait for
	// that, and reflect on any still pending.
	if err := d.mem.Flush(ctx); err != nil {
		return err
	}
	rf := d.mem.Reflector()
	if _, err := rf.ReflectPending(ctx, userID); err != nil {
		fmt.Fprintf(d.w, "reflection failed; memory goes on without it: %v\n", err)
	}
	ins, err := d.st.ListInsights(ctx, userID, store.InsightFilter{Type: store.InsightSession})
	if err != nil {
		return err
	}
	fmt.Fprintf(d.w, "reflection: %d session insights\n", len(ins))
	slices.SortFunc(ins, func(a, b *store.Insight) int {
		if c := a.CreatedAt.Compare(b.CreatedAt); c != 0 {
			return c
		}
		return cmp.Or(strings.Compare(a.Category, b.Category), strings.Compare(a.InsightText, b.InsightText))
	})
	for _, in := range ins {
		conf := 0.0
		if in.Confidence != nil {
			conf = *in.Confidence
		}
		fmt.Fprintf(d.w, "  [%s, confidence %.2f, %s] %s\n", in.Category, conf, in.Importance, in.InsightText)
	}
	if rec, err := rf.Reconcile(ctx, userID); err != nil {
		fmt.Fprintf(d.w, "reconciliation failed: %v\n", err)
	} else {
		fmt.Fprintf(d.w, "reconciliation: %d kept, %d merged, %d contradicted\n", rec.Kept, rec.Merged, rec.Contradicted)
	}
	prof, err := rf.ReflectLongTerm(ctx, userID)
	switch {
	case err != nil:
		fmt.Fprintf(d.w, "long-term reflection failed; the session starts without a new profile: %v\n", err)
	case prof.Profile == nil:
		fmt.Fprintln(d.w, "long-term profile: none (no insight yet)")
	default:
		wrap(d.w, fmt.Sprintf("long-term profile (%d insights folded in): ", len(prof.Folded)), prof.Profile.InsightText)
	}
	fmt.Fprintln(d.w)

	last, err := d.st.ListSessions(ctx, userID, store.SessionFilter{Status: store.SessionCompleted, Limit: 1})
	if err != nil {
		return err
	}
	facts := []fact{{"the goal", []string{"retire at 60"}}, {"the concern", []string{"market volatility"}}}
	if len(last) == 1 && last[0].Summary != "" {
		first := sentences(last[0].Summary)[0]
		facts = append(facts, fact{fmt.Sprintf("the last session (%s, %s)", last[0].ID, day(last[0].StartTime)), []string{first}})
	}
	d.clock.set(timeline.freshSession)
	fmt.Fprintf(d.w, "%s: a fresh session starts with the profile and the recent session summaries.\n", day(timeline.freshSession))
	fresh, err := d.advisor.NewUserSession(userID)
	if err != nil {
		return err
	}
	if err := d.say(ctx, &talk{sess: fresh}, "Hi, it's me again. Where were we?", facts...); err != nil {
		return err
	}
	if _, err := d.mem.EndSession(ctx, fresh); err != nil {
		return err
	}
	fmt.Fprintln(d.w)
	return d.mem.Flush(ctx)
}

// compression is scenario 3: a conversation long enough for the keeper to
// prune turns into an interaction document and a cumulative summary.
func (d *demo) compression(ctx context.Context) error {
	d.heading(3, fmt.Sprintf("real-time context compression (%d turns)", len(longTalk)),
		"every 10 turns memory prunes the conversation into an interaction document and folds it into a cumulative "+
			"summary, keeping the last 5 turns in context: the context stays smaller than the full history, and a "+
			"question about a pruned fact (Sarah's $80,000 raise, turn 4) is answered from memory.")
	d.clock.set(timeline.budgetSession)
	fmt.Fprintf(d.w, "%s: a new session.\n", day(timeline.budgetSession))
	sess, err := d.advisor.NewUserSession(userID)
	if err != nil {
		return err
	}
	t := &talk{sess: sess, full: true}
	for _, line := range longTalk {
		var facts []fact
		if line == prunedFactQuestion {
			facts = []fact{{"the raise (said in turn 4, pruned since)", []string{"$80,000"}}}
		}
		if err := d.say(ctx, t, line, facts...); err != nil {
			return err
		}
		if err := d.showPrunes(ctx, t); err != nil {
			return err
		}
	}
	if man, ok := d.mem.LastManifest(sess); ok {
		conv := conversationTokens(man)
		full := sum(t.turnTokens[:len(t.turnTokens)-1]) // the turns stored before the last message
		wrap(d.w, "tokens:    ", fmt.Sprintf("the last message's context held this conversation as its summary and %s: %d tokens, "+
			"where its full history, turns 1-%d, takes %d (the whole context: %d of %d tokens; with the full history instead: %d)",
			turnRange(man), conv, len(t.turnTokens)-1, full, man.Tokens, man.Budget, man.Tokens-conv+full))
	}
	d.clock.advance(time.Minute)
	res, err := d.mem.EndSession(ctx, sess)
	if err != nil {
		return err
	}
	for _, p := range res.Pruned {
		d.printPrune("session end", p.Interaction)
	}
	wrap(d.w, "memory:    ", "session ended; its summary: "+res.Session.Summary)
	return d.mem.Flush(ctx)
}

// prunedFactQuestion asks about what turn 4 said, pruned by then.
const prunedFactQuestion = "What should I do with Sarah's raise?"

// talk is one session's conversation as the demo follows it.
type talk struct {
	sess *agent.Session
	// turnTokens are the tokens of each stored turn, counted as the keeper
	// counts them.
	turnTokens []int
	// pruned is how many interaction documents the demo has shown.
	pruned int
	// full compares each context with the full history's tokens.
	full bool
}

// say runs one user message and prints what memory gave the model: one
// line of context, and, when the scenario names facts, the memory block,
// the retrieved memories and where each fact is in them.
func (d *demo) say(ctx context.Context, t *talk, text string, facts ...fact) error {
	d.clock.advance(time.Minute)
	n := len(t.turnTokens) + 1
	wrap(d.w, fmt.Sprintf("%-11s", fmt.Sprintf("user %d:", n)), text)
	resp, err := d.advisor.Run(ctx, t.sess, agent.UserText(text))
	if err != nil {
		return fmt.Errorf("run: %w", err)
	}
	// Memory work runs in the background; the demo waits for it after
	// each turn so that what it prints is the same on every run.
	if err := d.mem.Flush(ctx); err != nil {
		return err
	}
	injected, produced := d.seen.last()
	man, _ := d.mem.LastManifest(t.sess)
	wrap(d.w, "context:   ", d.describe(t, man, text))
	got := receivedOf(injected, produced, man)
	if len(facts) > 0 {
		d.showMemory(got, text)
	}
	if d.offline {
		if len(facts) > 0 {
			fmt.Fprintln(d.w, "advisor:   (no reply: no model is configured; a model would answer from the memory above)")
		}
	} else {
		for _, m := range resp.Messages {
			for _, tc := range m.ToolCalls {
				fmt.Fprintf(d.w, "tool call: %s\n", tc.Name)
			}
		}
		wrap(d.w, "assistant: ", resp.Text())
	}
	for _, f := range facts {
		sentence, cites := find(got.all(), f)
		if sentence == "" {
			fmt.Fprintf(d.w, "evidence:  %s — not in the memory the model received\n", f.what)
			continue
		}
		wrap(d.w, "evidence:  ", fmt.Sprintf("%s — %q [%s]", f.what, sentence, strings.Join(cites, "] [")))
	}
	t.turnTokens = append(t.turnTokens, d.turnTokens(text, resp))
	return nil
}

// describe summarises a context manifest in one line.
func (d *demo) describe(t *talk, m keeper.Manifest, text string) string {
	var parts []string
	var summaries, retrieved int
	for _, it := range m.Items {
		switch {
		case it.Kind == keeper.ItemProfile:
			parts = append(parts, "profile")
		case it.Kind == keeper.ItemSessionSummary:
			summaries++
		case strings.HasPrefix(it.Kind, "retrieved_"):
			retrieved++
		}
	}
	if summaries > 0 {
		parts = append(parts, plural(summaries, "session summary", "session summaries"))
	}
	if slices.ContainsFunc(m.Items, func(it keeper.ManifestItem) bool { return it.Kind == keeper.ItemCumulativeSummary }) {
		parts = append(parts, "conversation summary")
	}
	parts = append(parts, turnRange(m))
	line := fmt.Sprintf("%s — %d tokens", strings.Join(parts, ", "), m.Tokens)
	if t.full {
		line += fmt.Sprintf(" (full history %d)", m.Tokens-conversationTokens(m)+sum(t.turnTokens))
	}
	switch {
	case !d.offline:
	case !retrieval.NeedsMemory(text):
		line += "; nothing retrieved (the message needs no memory)"
	default:
		line += "; " + plural(retrieved, "memory", "memories") + " retrieved"
	}
	return line
}

// showMemory prints the memory block as the model received it and the
// retrieved memories, each with its citation.
func (d *demo) showMemory(got received, text string) {
	if got.block == "" {
		fmt.Fprintln(d.w, "memory block: none (nothing to remember yet)")
	} else {
		fmt.Fprintln(d.w, "memory block, as the model receives it:")
		for _, l := range strings.Split(got.block, "\n") {
			wrapIndent(d.w, "    ", "      ", l)
		}
	}
	if len(got.retrieved) == 0 {
		return
	}
	fmt.Fprintln(d.w, "retrieved memories (the sentences that share a word with the message; the model receives each whole):")
	for _, p := range got.retrieved {
		wrapIndent(d.w, "    ", "      ", fmt.Sprintf("[%s] %s", p.cite, snippet(p.text, text)))
	}
}

// showPrunes prints the interaction documents written since the last
// call, and the cumulative summary they were folded into.
func (d *demo) showPrunes(ctx context.Context, t *talk) error {
	docs, err := d.st.ListInteractions(ctx, userID, store.InteractionFilter{SessionID: t.sess.ID()})
	if err != nil {
		return err
	}
	if len(docs) == t.pruned {
		return nil
	}
	for _, doc := range docs[t.pruned:] {
		d.printPrune("prune", doc)
	}
	t.pruned = len(docs)
	s, err := d.st.GetSession(ctx, userID, t.sess.ID())
	if err != nil {
		return err
	}
	wrap(d.w, "memory:    ", "cumulative summary now: "+s.State.CumulativeSummary)
	return nil
}

func (d *demo) printPrune(when string, doc *store.Interaction) {
	wrap(d.w, "memory:    ", fmt.Sprintf("%s: turns %d-%d pruned into interaction %s; topics %s; entities %s", when,
		doc.FirstTurn, doc.LastTurn, doc.ID, strings.Join(doc.Metadata.MentionedTopics, ", "), strings.Join(doc.Metadata.Entities, ", ")))
}

// turnTokens counts the turn a run stored as the keeper counts a turn in
// context: the user's message and the advisor's text, four tokens of
// overhead each.
func (d *demo) turnTokens(text string, resp *agent.Response) int {
	var b strings.Builder
	msgs := 1
	b.WriteString(text + "\n")
	for _, m := range resp.Messages {
		if m.Role == agent.RoleAssistant && strings.TrimSpace(m.Text) != "" {
			b.WriteString(m.Text + "\n")
			msgs++
		}
	}
	return d.counter.Count(b.String()) + 4*msgs
}

// turnRange names the turns a context holds.
func turnRange(m keeper.Manifest) string {
	var turns []int
	for _, it := range m.Items {
		if it.Kind == keeper.ItemTurn {
			turns = append(turns, it.Turn)
		}
	}
	switch len(turns) {
	case 0:
		return "no earlier turns"
	case 1:
		return fmt.Sprintf("turn %d", turns[0])
	}
	return fmt.Sprintf("turns %d-%d", turns[0], turns[len(turns)-1])
}

// conversationTokens returns the tokens a context spends on the session's
// own conversation: its cumulative summary and its turns.
func conversationTokens(m keeper.Manifest) int {
	n := 0
	for _, it := range m.Items {
		if it.Kind == keeper.ItemCumulativeSummary || it.Kind == keeper.ItemTurn {
			n += it.Tokens
		}
	}
	return n
}

func sum(ns []int) int {
	t := 0
	for _, n := range ns {
		t += n
	}
	return t
}

func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}

func day(t time.Time) string { return t.UTC().Format("2006-01-02") }

// history is scenario 1's past conversation: user message, advisor reply.
var history = [][2]string{
	{"Hi, I'm Dana. I'm 35, married to Sarah, and we have a two-year-old.", "Nice to meet you, Dana. What would you like to work on?"},
	{"I want to retire at 60 and I'm not sure I'm saving enough.", "Let's look at what you have and what you put aside today."},
	{"I earn $95,000 a year as a nurse at Mercy Hospital.", "Thanks. Does Mercy offer a retirement plan with a match?"},
	{"Yes, a 403b with a 4% match. I put in 6%.", "Good: you get the whole match. We can look at raising it later."},
	{"I also have an old 401k from Acme with about $40,000 in it.", "We should decide what to do with the Acme 401k: leave it, move it to the 403b, or roll it into an IRA."},
	{"What are the fees on the Acme 401k?", "Its funds charge about 0.9% a year, which is high next to an index fund at 0.05%."},
	{"That's a lot. Could I roll the Acme 401k into an IRA?", "Yes. A direct rollover into a traditional IRA avoids taxes and the 20% withholding."},
	{"And a Roth IRA instead?", "Converting to a Roth IRA means paying income tax on the $40,000 this year."},
	{"No, a traditional IRA then. Let's plan the rollover for March.", "Noted: a direct rollover of the Acme 401k into a traditional IRA in March."},
	{"Which provider would you use?", "A low-cost brokerage such as Fidelity, Vanguard or Schwab."},
	{"Sarah already has a Fidelity account, so Fidelity.", "Fidelity it is, for the IRA."},
	{"I can put aside $500 a month for retirement on top of the 403b.", "That $500 a month could go into the new IRA each month."},
	{"I'm nervous about market volatility; I lost money in 2022.", "That's common. A diversified mix and a long horizon soften the swings."},
	{"I prefer low-cost index funds over picking stocks.", "Index funds suit you: broad, cheap, and no stock picking."},
	{"What mix would you suggest?", "At 35 with a moderate risk tolerance, around 80% stocks and 20% bonds."},
	{"80/20 feels right, maybe a bit aggressive.", "We can start at 75/25 and revisit as you get comfortable."},
	{"We also want to buy a house in 2028.", "Then keep the house fund apart from retirement, in safer assets."},
	{"We have $15,000 saved for the down payment.", "Keep the $15,000 in a high-yield savings account or short-term Treasuries."},
	{"And an emergency fund?", "Six months of expenses, about $24,000 for you, before investing more."},
	{"We have $10,000 in emergency savings.", "Then build it to $24,000 over the next year."},
	{"Should we save for our child's college too?", "A 529 plan gives tax-free growth for education; even $100 a month helps."},
	{"Let's start a 529 with $100 a month.", "Good: $100 a month into a 529 for your child."},
	{"Can we review all this every quarter?", "Yes, quarterly reviews it is."},
	{"Thanks, that's all for today.", "You're welcome, Dana. Talk next quarter."},
}

// longTalk is scenario 3's conversation.
var longTalk = []string{
	"Hi! I'd like to go through our family budget for this year, line by line.",
	"Our rent is $2,100 a month for the apartment, and the landlord raises it in June.",
	"Can you check the financial glossary: what is a Roth IRA?",
	"Big news: Sarah got a raise at the hospital, so her salary is now $80,000 a year.",
	"Daycare for our daughter costs $350 a month, and that stays the same until she starts school.",
	"One more from the financial glossary: what is an emergency fund?",
	"Our car loan still has $8,000 left on it at 6% interest, with three years to go.",
	"Should we pay the car loan off early?",
	"We spend about $600 a month on groceries and another $200 on eating out.",
	"I'd like to give $50 a month to the local food bank from now on.",
	"Could we afford a family trip to Portugal next summer?",
	"The trip would cost around $6,000 for the three of us, flights included.",
	"Let's save $500 a month for the trip, starting in July.",
	prunedFactQuestion,
	"Thanks, that helps a lot.",
}
