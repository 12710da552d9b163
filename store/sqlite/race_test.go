//go:build race

package sqlite

// raceEnabled is true under the race detector, whose instrumented scans
// are ~10 times slower: statistical tests then run on smaller fixtures.
const raceEnabled = true
