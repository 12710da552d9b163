package lexis

import "sync"

// irregularForms lists common English verbs (and a few nouns) whose
// inflections a suffix stripper cannot reach: base form first, then its
// irregular past, past participle or plural forms. Questions put the base
// form after "did" ("When did Nate win ...?") where the conversation has
// the past ("I won ..."), so without these the two never meet. Forms that
// are common words of another meaning are left out ("rose", "lay",
// "ground", "bound", "wound", "lie"), as are the auxiliaries and "did",
// which are stopwords.
var irregularForms = [][]string{
	{"begin", "began", "begun"},
	{"break", "broke", "broken"},
	{"bring", "brought"},
	{"build", "built"},
	{"buy", "bought"},
	{"catch", "caught"},
	{"child", "children"},
	{"choose", "chose", "chosen"},
	{"come", "came"},
	{"draw", "drew", "drawn"},
	{"drink", "drank", "drunk"},
	{"drive", "drove", "driven"},
	{"eat", "ate", "eaten"},
	{"fall", "fell", "fallen"},
	{"feed", "fed"},
	{"feel", "felt"},
	{"fight", "fought"},
	{"find", "found"},
	{"fly", "flew", "flown"},
	{"forget", "forgot", "forgotten"},
	{"get", "got", "gotten"},
	{"give", "gave", "given"},
	{"go", "went", "gone"},
	{"grow", "grew", "grown"},
	{"hear", "heard"},
	{"hide", "hid", "hidden"},
	{"hold", "held"},
	{"keep", "kept"},
	{"know", "knew", "known"},
	{"lead", "led"},
	{"leave", "left"},
	{"lend", "lent"},
	{"lose", "lost"},
	{"make", "made"},
	{"man", "men"},
	{"mean", "meant"},
	{"meet", "met"},
	{"pay", "paid"},
	{"ride", "rode", "ridden"},
	{"run", "ran"},
	{"say", "said"},
	{"see", "saw", "seen"},
	{"sell", "sold"},
	{"send", "sent"},
	{"shoot", "shot"},
	{"sing", "sang", "sung"},
	{"sit", "sat"},
	{"sleep", "slept"},
	{"speak", "spoke", "spoken"},
	{"spend", "spent"},
	{"stand", "stood"},
	{"steal", "stole", "stolen"},
	{"swim", "swam", "swum"},
	{"take", "took", "taken"},
	{"teach", "taught"},
	{"tell", "told"},
	{"think", "thought"},
	{"throw", "threw", "thrown"},
	{"understand", "understood"},
	{"wake", "woke", "woken"},
	{"wear", "wore", "worn"},
	{"win", "won"},
	{"woman", "women"},
	{"write", "wrote", "written"},
}

var (
	irregularOnce sync.Once
	irregularBase map[string]string // inflected form → base form
)

// BaseForm returns the base form of an irregular inflection ("won" →
// "win", "children" → "child") and true; a normalised word that is not one
// is returned unchanged with false.
func BaseForm(w string) (string, bool) {
	irregularOnce.Do(func() {
		irregularBase = make(map[string]string)
		for _, f := range irregularForms {
			for _, w := range f[1:] {
				irregularBase[w] = f[0]
			}
		}
	})
	if b, ok := irregularBase[w]; ok {
		return b, true
	}
	return w, false
}
