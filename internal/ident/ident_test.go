package ident

import (
	"strings"
	"testing"
	"unicode"
)

// TestForbiddenIsTheRule checks forbidden against the rule it implements,
// for every code point.
func TestForbiddenIsTheRule(t *testing.T) {
	for r := rune(0); r <= unicode.MaxRune; r++ {
		want := unicode.IsControl(r) || strings.ContainsRune(`/\?#`, r)
		if got := forbidden(r); got != want {
			t.Fatalf("forbidden(%U) = %v, want %v", r, got, want)
		}
	}
}

func TestCheck(t *testing.T) {
	for id, wantErr := range map[string]string{
		"alice":                  "",
		"user-42@example.com":    "",
		"Zoë":                    "",
		"":                       "empty",
		"  \t":                   "empty",
		strings.Repeat("a", 256): "256 bytes, at most 255",
		"a/b":                    `contains '/'`,
		`a\b`:                    `contains '\\'`,
		"a?b":                    `contains '?'`,
		"a#b":                    `contains '#'`,
		"a\nb":                   `contains '\n'`,
		"a\u0085b":               `contains '\u0085'`,
		"a\x7fb":                 `contains '\x7f'`,
		"a\xffb":                 "not valid UTF-8",
		ReservedUserID:           "",
		strings.Repeat("é", 127): "",
		strings.Repeat("é", 128): "256 bytes, at most 255",
	} {
		err := Check(id)
		if wantErr == "" {
			if err != nil {
				t.Errorf("Check(%q) = %v, want nil", id, err)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), wantErr) {
			t.Errorf("Check(%q) = %v, want an error containing %q", id, err, wantErr)
		}
	}
	if err := CheckUser(ReservedUserID); err == nil {
		t.Errorf("CheckUser(%q) = nil, want reserved", ReservedUserID)
	}
}

func BenchmarkCheck(b *testing.B) {
	for b.Loop() {
		if err := Check("memstore-support:scope-customer-4711"); err != nil {
			b.Fatal(err)
		}
	}
}
