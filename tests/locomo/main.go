// Command locomo measures agentmemory's direct-mode retrieval on LoCoMo
// conversations ("Evaluating Very Long-Term Conversational Memory of LLM
// Agents", ACL 2024).
//
//	go run ./tests/locomo -data ../shared/locomo [-k 5] [-turns 10] [-json FILE] [-db DIR] [-offline] [-cosine-floor F]
//
// It ingests each conversation of -data (every *.json file in LoCoMo
// format) through the real memory provider on the embedded SQLite store,
// then asks retrieval (retrieval.Retriever.Search, direct mode) every
// question of categories 1–4 and scores the documents it returns.
//
// # Ingestion
//
// Each conversation is its own user ("locomo-<file>"). Each session_N is a
// memory session ("locomo-<file>-sN") whose date (session_N_date_time) is
// the provider's clock while the session is recorded, so the session's
// start and every turn carry it; each message's CreatedAt is that date.
// Each LoCoMo message is one provider.Record call, so a turn is one message
// and an interaction document holds -turns messages (provider Config.KeeperConfig.K).
// A message keeps its dia_id as its id (so interactions' TurnIDs are
// dia_ids) and its speaker as its Name; speaker_a is role user and
// speaker_b role assistant (the provider stores those two roles; the names
// are what the content shows, "Jon: …"). An image is kept as text: its
// caption is appended as "[image: <blip_caption>]". Each session is ended
// (EndSession: last interaction, session summary); session reflection is
// off (see openMemory). Only the conversation
// fields are read; the dataset's observations, session summaries and event
// summaries never reach the memory.
//
// With -db DIR the memory file DIR/locomo.db is kept: a later run finds a
// conversation already ingested with the same embedder and -turns and
// reuses it, and re-ingests one that is incomplete or differs.
//
// # Models
//
// By default, with no model configured, memory runs on llm/offline (rule
// metadata and summaries) and the lexical embedder. With OPENAI_API_KEY,
// OPENAI_BASE_URL or AZURE_OPENAI_ENDPOINT set (see llm/openai.FromEnv) it
// uses that model and embedder; -offline forces the offline client. A
// half-configured model is an error, never replaced silently.
//
// -cosine-floor F wraps the embedder (internal/affine) so that every cosine
// c becomes F + (1 − F)·c: the same ranking on another scale. The wrapper
// is not lexical (embed.IsLexical), so the lexical embedder's vectors are
// then stored and searched. Recall must not move with F (retrieval's
// relevance is relative to each query's own similarities, never an
// absolute cosine): F = 0 runs the vector leg on unchanged cosines, 0.15
// puts the lexical embedder's cosines about where text-embedding-3-small's
// are (0.15–0.5), 0.7 where text-embedding-ada-002's are (0.7–0.95).
//
// # Metric
//
// Questions of category 5 (adversarial) and those without evidence are left
// out. A question counts for recall_all when every dia_id of its evidence
// is among the TurnIDs of the k documents retrieved, for recall_any when
// one is. Both are reported at k = 5 and 10, overall and per category,
// with the p50 and p95 latency of the -k search and the tokens (tokens.BPE,
// o200k) of the text of the -k documents: recall bought with more text is
// no gain.
//
// The output is a Markdown table on stdout; -json FILE also writes the
// figures as a JSON object (see report), with the questions missed at -k
// and the turns found instead.
//
// # Answer quality (-answer)
//
//	go run ./tests/locomo -data DIR -answer [-conversations N] [-questions N] [-retrieval tool|auto|both] [-no-baseline] [-json FILE]
//
// With -answer the command needs a configured model (it says so and fails
// offline: the offline client is not an LLM) and measures answers instead
// of retrieval. After ingesting the conversations as above, it asks each
// question of categories 1–4 that has a reference answer ("Question: …")
// of an agent on the chat model with the memory provider as its context
// provider, retrieval as -retrieval says (tool: retrieve_user_facts, the
// provider's default; auto; both), every question in a session of its
// own whose turn is not stored, so that no question becomes memory for
// the next. Beside it, unless -no-baseline, the same model with the same
// instructions (answerInstructions) answers with the whole conversation
// in the prompt, sessions dated. The chat model then judges each answer
// against the reference with the answer_judge prompt (package prompts):
// CORRECT or WRONG, generous about wording — the J metric of the mem0
// paper (arXiv 2504.19413). J is the share judged CORRECT; an answer the
// judge's output does not label counts as wrong and is reported as
// unjudged. Tokens (answering model, memory model) and latency are kept
// per question. -conversations and -questions bound the run, which costs
// money: the ten LoCoMo conversations hold about 1,540 such questions, each
// answered twice and judged twice. After three failed questions in a row
// the run stops. The output is a Markdown table of J per category and the
// token and latency figures; -json FILE writes them with every question's
// answers and labels (see answerReport).
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"math"
	"os"
	"slices"

	"github.com/agentmemory/agentmemory/internal/affine"
	"github.com/agentmemory/agentmemory/internal/stack"
)

// options are the command's flags.
type options struct {
	data     string
	k        int
	turns    int
	jsonPath string
	db       string
	offline  bool
	verbose  bool
	// cosineFloor, when set, wraps the embedder with internal/affine:
	// every cosine c becomes floor + (1 − floor)·c.
	cosineFloor *float64

	// -answer and its limits.
	answer        bool
	conversations int
	questions     int
	retrieval     string
	noBaseline    bool
}

func main() {
	var o options
	flag.StringVar(&o.data, "data", "", "directory of LoCoMo-format JSON files (required)")
	flag.IntVar(&o.k, "k", 5, "documents retrieved per question")
	flag.IntVar(&o.turns, "turns", 10, "turns (LoCoMo messages) per interaction document")
	flag.StringVar(&o.jsonPath, "json", "", "also write the figures as JSON to this file")
	flag.StringVar(&o.db, "db", "", "directory of the memory file, kept and reused (default: a temporary directory, removed at exit)")
	flag.BoolVar(&o.offline, "offline", false, "use the offline client and lexical embedder even if a model is configured")
	flag.BoolVar(&o.verbose, "v", false, "log memory activity at info level")
	floor := flag.Float64("cosine-floor", -1, "wrap the embedder so that its cosines c become F + (1-F)·c (0 <= F < 1; 0: unchanged; 0.15: about 0.15-0.5; 0.7: about 0.7-0.95) and its vectors are searched even if it is lexical; negative: no wrapper")
	flag.BoolVar(&o.answer, "answer", false, "measure answer quality instead of retrieval: each question answered by the agent with memory and with the whole conversation, judged by the model (needs a model; costs money)")
	flag.IntVar(&o.conversations, "conversations", 0, "with -answer: at most this many conversations, in file order (0: all)")
	flag.IntVar(&o.questions, "questions", 0, "with -answer: at most this many questions per conversation (0: all)")
	flag.StringVar(&o.retrieval, "retrieval", "tool", "with -answer: how the agent reaches memory: tool (retrieve_user_facts), auto or both")
	flag.BoolVar(&o.noBaseline, "no-baseline", false, "with -answer: skip the full-context baseline")
	flag.Parse()
	if *floor >= 0 || math.IsNaN(*floor) {
		o.cosineFloor = floor
	}
	if o.data == "" || flag.NArg() > 0 {
		fmt.Fprintln(os.Stderr, "usage: locomo -data DIR [-k 5] [-turns 10] [-json FILE] [-db DIR] [-offline] [-cosine-floor F]\n       locomo -data DIR -answer [-conversations N] [-questions N] [-retrieval tool|auto|both] [-no-baseline] [-turns 10] [-json FILE] [-db DIR]")
		os.Exit(2)
	}
	level := slog.LevelWarn
	if o.verbose {
		level = slog.LevelInfo
	}
	logger := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: level}))
	if err := run(context.Background(), os.Stdout, logger, o, os.LookupEnv); err != nil {
		fmt.Fprintln(os.Stderr, "locomo:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, w io.Writer, logger *slog.Logger, o options, lookup func(string) (string, bool)) error {
	if o.retrieval == "" {
		o.retrieval = "tool"
	}
	switch {
	case o.k < 1 || o.k > 100:
		return fmt.Errorf("-k %d: want 1..100", o.k)
	case o.turns < 1:
		return fmt.Errorf("-turns %d: want at least 1", o.turns)
	case o.cosineFloor != nil && !(*o.cosineFloor >= 0 && *o.cosineFloor < 1):
		return fmt.Errorf("-cosine-floor %v: want 0 <= F < 1, or negative for none", *o.cosineFloor)
	case o.conversations < 0 || o.questions < 0:
		return fmt.Errorf("-conversations %d, -questions %d: want 0 (all) or more", o.conversations, o.questions)
	case !slices.Contains(slices.Collect(maps.Keys(retrievalModes)), o.retrieval):
		return fmt.Errorf("-retrieval %q: want tool, auto or both", o.retrieval)
	}
	m, err := stack.ModelsFromEnv(lookup, o.offline)
	if err != nil {
		return err
	}
	if o.answer && m.Offline {
		return ErrNeedsModel
	}
	convs, err := loadDir(o.data)
	if err != nil {
		return err
	}
	var mini *meter
	if o.answer {
		if o.conversations > 0 && len(convs) > o.conversations {
			convs = convs[:o.conversations]
		}
		mini = &meter{ChatClient: m.Mini}
		metered := *m
		metered.Mini = mini
		m = &metered
	}
	if f := o.cosineFloor; f != nil {
		a, err := affine.New(m.Embedder, *f)
		if err != nil {
			return err
		}
		m.Embedder = a
		m.Description += fmt.Sprintf(", cosines mapped to %.2f + %.2f·c", *f, 1-*f)
	}
	dir := o.db
	if dir == "" {
		if dir, err = os.MkdirTemp("", "agentmemory-locomo"); err != nil {
			return err
		}
		defer os.RemoveAll(dir)
	} else if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	mem, storeDesc, err := openMemory(ctx, lookup, dir, m, o.turns, logger)
	if err != nil {
		return err
	}
	defer mem.close(ctx)
	if o.answer {
		fmt.Fprintf(w, "LoCoMo answer quality (J: the model judges each answer CORRECT or WRONG): %d conversations from %s, %s, memory on %s, retrieval %s, %d turns per interaction\n\n",
			len(convs), o.data, m.Description, storeDesc, o.retrieval, o.turns)
	} else {
		fmt.Fprintf(w, "LoCoMo direct-mode retrieval: %d conversations from %s, %s, memory on %s, %d turns per interaction, top-%d\n\n", len(convs), o.data, m.Description, storeDesc, o.turns, o.k)
	}
	for _, c := range convs {
		st, err := mem.ingest(ctx, c)
		if err != nil {
			return fmt.Errorf("ingest %s: %w", c.name, err)
		}
		logger.Info("locomo: conversation ready", "conversation", c.name, "sessions", len(c.sessions), "reused", st.reused, "interactions", st.interactions, "elapsed", st.elapsed)
	}
	if o.answer {
		ingest, _ := mini.take()
		rep, err := runAnswers(ctx, logger, o, m, mem, mini, convs)
		if err != nil {
			return err
		}
		rep.IngestMemoryTokens = ingest.TotalTokens
		rep.writeMarkdown(w)
		if o.jsonPath != "" {
			return writeJSON(o.jsonPath, rep)
		}
		return nil
	}
	rep, err := evaluate(ctx, mem, convs, o.k)
	if err != nil {
		return err
	}
	rep.Model, rep.Turns = m.Description, o.turns
	rep.writeMarkdown(w)
	if o.jsonPath != "" {
		if err := rep.writeJSON(o.jsonPath); err != nil {
			return err
		}
	}
	return nil
}
