package lexis

// maxStopwordLen bounds the stopword lookup; no stopword is longer.
const maxStopwordLen = 10

// IsStopword reports whether the normalised word w (lower case, apostrophes
// removed, not stemmed) is on the English stopword list: articles,
// pronouns, auxiliaries, prepositions, conjunctions and their contractions
// ("dont", "im", "youre").
func IsStopword(w string) bool {
	if len(w) > maxStopwordLen {
		return false
	}
	switch w {
	case "a", "about", "above", "after", "again", "against", "all", "also", "am", "an",
		"and", "any", "are", "as", "at", "be", "because", "been", "before", "being",
		"below", "between", "both", "but", "by", "can", "could", "did", "do", "does",
		"doing", "down", "during", "each", "few", "for", "from", "further", "had", "has",
		"have", "having", "he", "her", "here", "hers", "herself", "him", "himself", "his",
		"how", "i", "if", "in", "into", "is", "it", "its", "itself", "just",
		"may", "me", "might", "more", "most", "must", "my", "myself", "no", "nor",
		"not", "of", "off", "on", "once", "only", "or", "other", "our", "ours",
		"ourselves", "out", "over", "own", "please", "same", "shall", "she", "should", "so",
		"some", "such", "than", "that", "the", "their", "theirs", "them", "themselves", "then",
		"there", "these", "they", "this", "those", "through", "to", "too", "under", "until",
		"up", "very", "was", "we", "were", "what", "when", "where", "which", "while",
		"who", "whom", "why", "will", "with", "would", "you", "your", "yours", "yourself",
		"yourselves",
		// contractions, apostrophe removed
		"im", "ive", "youre", "youve", "youll", "youd", "hes", "shes",
		"theyre", "theyve", "theyll", "weve", "dont", "doesnt", "didnt", "isnt", "arent",
		"wasnt", "werent", "cant", "couldnt", "wont", "wouldnt", "shouldnt", "lets", "thats", "whats",
		"theres", "heres", "hows", "wheres", "whos":
		return true
	}
	return false
}

// IsStopwordBytes is IsStopword for a byte slice; it does not allocate.
func IsStopwordBytes(w []byte) bool {
	if len(w) > maxStopwordLen {
		return false
	}
	return IsStopword(string(w))
}
