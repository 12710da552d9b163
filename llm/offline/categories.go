package offline

import (
	"regexp"
	"slices"
	"strings"

	"github.com/agentmemory/agentmemory/internal/lexis"
)

// The default insight categories, in the order a profile groups them.
const (
	catDemographics     = "demographics"
	catFinancialGoals   = "financial_goals"
	catRiskProfile      = "risk_profile"
	catCurrentSituation = "current_situation"
	catConcern          = "concern"
	catPreference       = "preference"
	// catProcedural is not a default category: it has keyword rules for
	// when an application offers it (the memory service's procedural
	// memory).
	catProcedural = "procedural"
)

var profileOrder = []string{catDemographics, catFinancialGoals, catRiskProfile, catCurrentSituation, catConcern, catPreference}

// tiePriority breaks a tie between default categories: the more specific
// signal first ("worried about retiring" is a concern).
var tiePriority = []string{catConcern, catFinancialGoals, catRiskProfile, catCurrentSituation, catPreference, catDemographics, catProcedural}

// categoryKeywords are the keyword rules of the default categories, as
// normalised words (lexis.Words: lower case, apostrophes dropped); a
// trailing '*' matches any word with that start. A sentence scores one per
// keyword found.
var categoryKeywords = map[string][]string{
	catDemographics: {"years old", "married", "single", "divorced", "widowed", "wife", "husband", "spouse", "partner",
		"kid", "kids", "child", "children", "son", "sons", "daughter*", "grandchild*", "grandkid*", "family",
		"job", "jobs", "work as", "works as", "worked as", "working as", "retired", "career", "profession*",
		"occupation", "employer", "employed", "self employed", "unemployed", "live in", "living in", "moved to",
		"born", "dependents", "widow*"},
	catFinancialGoals: {"retire", "retiring", "retirement", "retire early", "save for", "saving for", "saving up",
		"goal", "goals", "target", "buy a house", "buy a home", "buy a car", "down payment", "college", "tuition",
		"education", "pay off", "paying off", "debt free", "emergency fund", "nest egg", "financial independence",
		"529", "wedding", "vacation home", "legacy", "inheritance for", "leave to"},
	catRiskProfile: {"risk", "risks", "risky", "risk tolerance", "conservative", "aggressive", "moderate", "volatile",
		"volatility", "stock", "stocks", "equities", "bond", "bonds", "safe", "safer", "safety", "cautious",
		"careful", "gamble", "gambling", "speculative", "speculat*", "crypto*", "high growth", "play it safe",
		"guaranteed"},
	catCurrentSituation: {"salary", "income", "earn", "earns", "earning", "earnings", "paycheck", "debt", "debts",
		"mortgage", "loan", "loans", "401 k", "401k", "403 b", "403b", "ira", "iras", "roth", "savings", "pension",
		"social security", "rent", "net worth", "budget", "expenses", "paid off", "credit card*", "bonus",
		"portfolio", "invested", "balance", "brokerage", "checking account", "owe"},
	catConcern: {"worried", "worry", "worries", "worrying", "concerned", "concern", "concerns", "afraid", "scared",
		"nervous", "anxious", "anxiety", "unsure", "uncertain", "fear", "fears", "fearful", "stress", "stressed",
		"stressful", "uneasy", "panic*", "lose sleep", "losing sleep", "keeps me up", "frighten*", "terrified"},
	catPreference: {"prefer", "prefers", "preferred", "preference", "would rather", "id rather", "like to", "love to",
		"dont like", "do not like", "dislike", "hate", "quarterly", "monthly", "weekly", "annually", "by email",
		"via email", "email me", "emails", "by phone", "phone call*", "text me", "in person", "video call*",
		"plain english", "plain language", "jargon", "simple terms", "detailed", "in detail", "short answers",
		"mornings", "evenings", "weekends", "updates", "reports"},
	catProcedural: {"always", "never", "step", "steps", "step by step", "procedure*", "process", "workflow*", "routine",
		"checklist", "instruction*", "make sure", "run", "runs", "deploy*", "before", "after", "first", "then",
		"template", "the way i", "how i want"},
}

var (
	// ageRE finds an age in normalised words ("im 42", "the user 41", "42
	// years old" is a keyword).
	ageRE = regexp.MustCompile(`(?:^| )(?:im|i am|aged?|user|user is|turned|turning|turn) [1-9]\d(?: |$)`)
	// amountRE finds a money amount in the text as written.
	amountRE = regexp.MustCompile(`(?i)[$€£]\s?\d|\b\d[\d,.]*\s?(?:k|dollars|euros|pounds|grand|million)\b`)
	// monthRE finds a month name, which makes a statement specific.
	monthRE = regexp.MustCompile(`\b(?:January|February|March|April|May|June|July|August|September|October|November|December)\b`)
	// insightLineRE reads a line of an insight block, as the prompts
	// package formats it: "[label | 2026-03-07 | category | 0.90] text".
	insightLineRE = regexp.MustCompile(`^\[(.*?) \| (\d{4}-\d{2}-\d{2}) \| (.*?) \| (\d+(?:\.\d+)?)\]\s*(.*)$`)
)

// genericTerms are content words of a category's description that say
// nothing about its subject.
var genericTerms = map[string]bool{
	"advice": true, "given": true, "information": true, "info": true, "detail": true, "details": true,
	"related": true, "kind": true, "kinds": true, "belongs": true, "belong": true, "general": true,
	"etc": true, "eg": true, "ie": true, "anything": true, "everything": true, "about": true,
}

// catRule is how a sentence is matched to one offered category.
type catRule struct {
	name     string
	priority int             // lower wins a tie
	keywords []string        // default categories
	terms    map[string]bool // other categories: content stems of name and description
}

// categoryRules returns the rules of the offered categories, "name:
// description" a line. Lines that do not name a category are skipped.
func categoryRules(block string) []catRule {
	var rules []catRule
	for _, line := range strings.Split(block, "\n") {
		name, desc, _ := strings.Cut(strings.TrimSpace(line), ":")
		name = strings.TrimSpace(name)
		if name == "" || strings.ContainsAny(name, " \t") || slices.ContainsFunc(rules, func(r catRule) bool { return r.name == name }) {
			continue
		}
		rules = append(rules, ruleFor(name, desc, len(rules)))
	}
	return rules
}

func ruleFor(name, desc string, index int) catRule {
	if kw, ok := categoryKeywords[name]; ok {
		return catRule{name: name, priority: slices.Index(tiePriority, name), keywords: kw}
	}
	r := catRule{name: name, priority: len(tiePriority) + index, terms: map[string]bool{}}
	for _, tk := range tokenize(strings.ReplaceAll(name, "_", " ") + " " + desc) {
		if tk.content && !genericTerms[tk.norm] {
			r.terms[tk.stem] = true
		}
	}
	return r
}

// classify returns the category of rules that text matches best, and
// false when it matches none.
func classify(text string, rules []catRule) (string, bool) {
	words := " " + strings.Join(lexis.Words(text), " ") + " "
	var stems []string
	for _, tk := range tokenize(text) {
		if tk.content && !slices.Contains(stems, tk.stem) {
			stems = append(stems, tk.stem)
		}
	}
	best, bestScore, bestPri := "", 0, 0
	for _, r := range rules {
		score := 0
		if r.keywords != nil {
			for _, kw := range r.keywords {
				if prefix, ok := strings.CutSuffix(kw, "*"); ok {
					if strings.Contains(words, " "+prefix) {
						score++
					}
				} else if strings.Contains(words, " "+kw+" ") {
					score++
				}
			}
			switch r.name {
			case catDemographics:
				if ageRE.MatchString(strings.TrimSpace(words)) {
					score++
				}
			case catCurrentSituation:
				if amountRE.MatchString(text) {
					score++
				}
			}
		} else {
			for _, s := range stems {
				if r.terms[s] {
					score++
				}
			}
		}
		if score > bestScore || (score == bestScore && score > 0 && r.priority < bestPri) {
			best, bestScore, bestPri = r.name, score, r.priority
		}
	}
	return best, bestScore > 0
}

func importanceOf(category string) string {
	switch category {
	case catFinancialGoals, catRiskProfile, catConcern:
		return "high"
	}
	return "medium"
}
