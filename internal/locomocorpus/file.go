package locomocorpus

import (
	"cmp"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
)

// File is one LoCoMo JSON file, as its fields: what a reader of the
// dataset picks from is the same in every release, where it stands is not.
type File struct {
	// Path is the file's path.
	Path string
	// Fields are the file's top-level fields, "qa" among them.
	Fields map[string]json.RawMessage
	// Conversation are the conversation's fields (speaker_a, session_N,
	// session_N_date_time, …): Fields' "conversation", where a release
	// nests them there (the released locomo10 file), else Fields itself
	// (the per-conversation files).
	Conversation map[string]json.RawMessage
}

// SessionKey is a session_N field of a conversation.
type SessionKey struct {
	// Key is the field's name.
	Key string
	// N is its number.
	N int
}

var sessionKey = regexp.MustCompile(`^session_(\d+)$`)

// ReadDir reads every *.json file of dir, in name order; no such file is an
// error.
func ReadDir(dir string) ([]File, error) {
	paths, err := filepath.Glob(filepath.Join(dir, "*.json"))
	if err != nil {
		return nil, err
	}
	if len(paths) == 0 {
		return nil, fmt.Errorf("locomocorpus: no *.json file in %s", dir)
	}
	sort.Strings(paths)
	files := make([]File, 0, len(paths))
	for _, p := range paths {
		f, err := ReadFile(p)
		if err != nil {
			return nil, err
		}
		files = append(files, f)
	}
	return files, nil
}

// ReadFile reads the LoCoMo JSON file at path.
func ReadFile(path string) (File, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return File{}, fmt.Errorf("locomocorpus: %w", err)
	}
	f := File{Path: path}
	if err := json.Unmarshal(b, &f.Fields); err != nil {
		return File{}, fmt.Errorf("locomocorpus: %s: %w", path, err)
	}
	f.Conversation = f.Fields
	if inner, ok := f.Fields["conversation"]; ok {
		if err := json.Unmarshal(inner, &f.Conversation); err != nil {
			return File{}, fmt.Errorf("locomocorpus: %s: conversation: %w", path, err)
		}
	}
	return f, nil
}

// Sessions returns the conversation's session_N fields in order of N.
func (f File) Sessions() []SessionKey {
	var out []SessionKey
	for k := range f.Conversation {
		if m := sessionKey.FindStringSubmatch(k); m != nil {
			n, _ := strconv.Atoi(m[1])
			out = append(out, SessionKey{Key: k, N: n})
		}
	}
	slices.SortFunc(out, func(a, b SessionKey) int { return cmp.Or(cmp.Compare(a.N, b.N), cmp.Compare(a.Key, b.Key)) })
	return out
}
