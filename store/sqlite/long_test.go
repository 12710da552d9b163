package sqlite

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
)

// LongTestsEnv names the environment variable that selects the long
// versions of this package's slowest tests: larger fixtures, more queries,
// more iterations of the same checks. .ci/run sets it to 1; README's test
// command, without it, runs the short versions.
const LongTestsEnv = "AGENTMEMORY_LONG_TESTS"

// LongTests reports whether LongTestsEnv asks for the long versions of the
// tests, and fails tb if its value is not a boolean. It is exported for the
// external test package.
func LongTests(tb testing.TB) bool {
	tb.Helper()
	long, err := parseLongTests(os.Getenv(LongTestsEnv))
	if err != nil {
		tb.Fatal(err)
	}
	return long
}

// pick returns long in the long mode and short otherwise.
func pick[T any](tb testing.TB, short, long T) T {
	tb.Helper()
	if LongTests(tb) {
		return long
	}
	return short
}

// parseLongTests reads LongTestsEnv's value: unset or empty is the short
// mode.
func parseLongTests(v string) (bool, error) {
	if v == "" {
		return false, nil
	}
	long, err := strconv.ParseBool(v)
	if err != nil {
		return false, fmt.Errorf("%s=%q: want 1 (long tests) or 0 (short)", LongTestsEnv, v)
	}
	return long, nil
}

func TestParseLongTests(t *testing.T) {
	for v, want := range map[string]bool{"": false, "0": false, "false": false, "1": true, "true": true} {
		got, err := parseLongTests(v)
		if err != nil || got != want {
			t.Errorf("parseLongTests(%q) = %v, %v; want %v, nil", v, got, err, want)
		}
	}
	for _, v := range []string{"yes", "long", " 1"} {
		_, err := parseLongTests(v)
		if err == nil || !strings.Contains(err.Error(), LongTestsEnv) || !strings.Contains(err.Error(), strconv.Quote(v)) {
			t.Errorf("parseLongTests(%q): error %v, want one naming %s and the value", v, err, LongTestsEnv)
		}
	}
}
