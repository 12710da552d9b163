// Package longtest tells a test whether to run its long version: more
// trials, larger fixtures, more iterations of the same checks.
//
// README's test command runs the short versions, so that it stays within
// its time budget on a small machine; .ci/run sets Env to 1 and runs the
// long ones. A test reads the mode with Enabled, or picks a size with Pick:
//
//	trials := longtest.Pick(t, 30, 300)
//
// # Values
//
// Env unset or empty is the short mode; otherwise its value is read with
// strconv.ParseBool, and any other value fails the test that asks, naming
// the variable and the value, rather than silently running the short
// version.
package longtest

import (
	"fmt"
	"os"
	"strconv"
	"testing"
)

// Env names the environment variable that selects the long versions.
const Env = "AGENTMEMORY_LONG_TESTS"

// Enabled reports whether Env asks for the long versions of the tests. It
// fails tb if Env's value is not a boolean.
func Enabled(tb testing.TB) bool {
	tb.Helper()
	long, err := parse(os.Getenv(Env))
	if err != nil {
		tb.Fatal(err)
	}
	return long
}

// Pick returns long in the long mode and short otherwise.
func Pick[T any](tb testing.TB, short, long T) T {
	tb.Helper()
	if Enabled(tb) {
		return long
	}
	return short
}

// parse reads Env's value: unset or empty is the short mode.
func parse(v string) (bool, error) {
	if v == "" {
		return false, nil
	}
	long, err := strconv.ParseBool(v)
	if err != nil {
		return false, fmt.Errorf("%s=%q: want 1 (long tests) or 0 (short)", Env, v)
	}
	return long, nil
}
