//go:build race

package inspector_test

// raceEnabled reports a test binary built with the race detector.
const raceEnabled = true
