package main

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/agentmemory/agentmemory/agent"
	"github.com/agentmemory/agentmemory/keeper"
	"github.com/agentmemory/agentmemory/provider"
	"github.com/agentmemory/agentmemory/store"
)

// demo holds what the scenarios share: one client, one memory.
type demo struct {
	w       io.Writer
	st      store.Store
	mem     *provider.MemoryProvider
	advisor *agent.Agent
}

// longContext is scenario 1: a long past conversation is imported, and a
// new session finds in it what it needs through retrieval.
func (d *demo) longContext(ctx context.Context) error {
	fmt.Fprintln(d.w, "== Scenario 1: long context with memory retrieval")
	past, err := d.advisor.NewUserSession(userID)
	if err != nil {
		return err
	}
	for _, t := range history {
		if err := d.mem.Record(ctx, past, agent.UserText(t[0]), agent.AssistantText(t[1])); err != nil {
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
	fmt.Fprintf(d.w, "memory: a past conversation of %d turns imported and ended: %d interaction documents\n", len(history), len(docs))
	for _, doc := range docs {
		fmt.Fprintf(d.w, "memory:   turns %d-%d; topics %s\n", doc.FirstTurn, doc.LastTurn, strings.Join(doc.Metadata.MentionedTopics, ", "))
	}
	fmt.Fprintf(d.w, "memory: session summary: %s\n\n", res.Session.Summary)

	fmt.Fprintln(d.w, "A new session: none of those turns is in its context; retrieval reaches them.")
	now, err := d.advisor.NewUserSession(userID)
	if err != nil {
		return err
	}
	if err := d.converse(ctx, now, []string{"What did we discuss about my 401k?"}); err != nil {
		return err
	}
	if _, err := d.mem.EndSession(ctx, now); err != nil {
		return err
	}
	fmt.Fprintln(d.w)
	return nil
}

// reflectionInit is scenario 2: the finished sessions are reflected on,
// the insights folded into the long-term profile, and a fresh session
// starts with it.
func (d *demo) reflectionInit(ctx context.Context) error {
	fmt.Fprintln(d.w, "== Scenario 2: reflection-powered session initialization")
	// Sessions are reflected on in the background when they end; wait for
	// that, and reflect on any still pending (with -scenario 2 alone).
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
	// Oldest first; those of one reflection by category and text (their
	// ids are derived from random session ids).
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
		fmt.Fprintf(d.w, "long-term profile (%d insights folded in): %s\n\n", len(prof.Folded), prof.Profile.InsightText)
	}

	fmt.Fprintln(d.w, "A fresh session starts with the profile and the recent session summaries:")
	fresh, err := d.advisor.NewUserSession(userID)
	if err != nil {
		return err
	}
	if err := d.converse(ctx, fresh, []string{"Hi, it's me again. Where were we?"}); err != nil {
		return err
	}
	if _, err := d.mem.EndSession(ctx, fresh); err != nil {
		return err
	}
	fmt.Fprintln(d.w)
	return nil
}

// compression is scenario 3: a conversation long enough for the keeper to
// prune turns into an interaction document and a cumulative summary.
func (d *demo) compression(ctx context.Context) error {
	fmt.Fprintf(d.w, "== Scenario 3: real-time context compression (%d turns; memory prunes every 10, keeps the last 5)\n", len(longTalk))
	sess, err := d.advisor.NewUserSession(userID)
	if err != nil {
		return err
	}
	if err := d.converse(ctx, sess, longTalk); err != nil {
		return err
	}
	docs, err := d.st.ListInteractions(ctx, userID, store.InteractionFilter{SessionID: sess.ID()})
	if err != nil {
		return err
	}
	for _, doc := range docs {
		fmt.Fprintf(d.w, "memory: turns %d-%d stored as one interaction; topics %s; entities %s\n",
			doc.FirstTurn, doc.LastTurn, strings.Join(doc.Metadata.MentionedTopics, ", "), strings.Join(doc.Metadata.Entities, ", "))
	}
	res, err := d.mem.EndSession(ctx, sess)
	if err != nil {
		return err
	}
	fmt.Fprintf(d.w, "memory: session ended; summary: %s\n", res.Session.Summary)
	return d.mem.Flush(ctx)
}

// converse runs each line as a user message and prints what memory
// injected, the tools called and the answer.
func (d *demo) converse(ctx context.Context, sess *agent.Session, lines []string) error {
	for _, q := range lines {
		fmt.Fprintf(d.w, "user:      %s\n", q)
		resp, err := d.advisor.Run(ctx, sess, agent.UserText(q))
		if err != nil {
			return fmt.Errorf("run: %w", err)
		}
		// Memory work runs in the background; the demo waits for it after
		// each turn so that what it prints is the same on every run.
		if err := d.mem.Flush(ctx); err != nil {
			return err
		}
		if man, ok := d.mem.LastManifest(sess); ok {
			fmt.Fprintf(d.w, "memory:    %s\n", describe(man))
		}
		for _, m := range resp.Messages {
			for _, tc := range m.ToolCalls {
				fmt.Fprintf(d.w, "tool call: %s\n", tc.Name)
			}
		}
		fmt.Fprintf(d.w, "assistant: %s\n", resp.Text())
	}
	return nil
}

// describe summarises a context manifest in one line.
func describe(m keeper.Manifest) string {
	counts := map[string]int{}
	for _, it := range m.Items {
		counts[it.Kind]++
	}
	return fmt.Sprintf("injected %d profile, %d session summaries, %d cumulative summary, %d active turns (%d of %d tokens)",
		counts[keeper.ItemProfile], counts[keeper.ItemSessionSummary], counts[keeper.ItemCumulativeSummary], counts[keeper.ItemTurn], m.Tokens, m.Budget)
}

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
	"Hi! I have a few questions about our budget this year.",
	"Our rent is $2,100 a month and it goes up in June.",
	"Can you check the financial glossary: what is a Roth IRA?",
	"Sarah got a raise to $80,000 a year.",
	"We pay $350 a month for daycare.",
	"One more from the financial glossary: what is an emergency fund?",
	"Our car loan has $8,000 left at 6% interest.",
	"Should we pay the car loan off early?",
	"We spend about $600 a month on groceries.",
	"I'd like to give $50 a month to a local food bank.",
	"Could we afford a family trip to Portugal next summer?",
	"The trip would cost around $6,000.",
	"Let's save $500 a month for the trip then.",
	"What should I do with Sarah's raise?",
	"Thanks, that helps a lot.",
}
