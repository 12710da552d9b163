package longtest

import (
	"strconv"
	"strings"
	"testing"
)

func TestParse(t *testing.T) {
	for v, want := range map[string]bool{"": false, "0": false, "false": false, "1": true, "true": true} {
		got, err := parse(v)
		if err != nil || got != want {
			t.Errorf("parse(%q) = %v, %v; want %v, nil", v, got, err, want)
		}
	}
	for _, v := range []string{"yes", "long", " 1"} {
		_, err := parse(v)
		if err == nil || !strings.Contains(err.Error(), Env) || !strings.Contains(err.Error(), strconv.Quote(v)) {
			t.Errorf("parse(%q): error %v, want one naming %s and the value", v, err, Env)
		}
	}
}

func TestPickFollowsEnv(t *testing.T) {
	t.Setenv(Env, "1")
	if got := Pick(t, 30, 300); got != 300 {
		t.Errorf("Pick with %s=1 = %d, want the long value 300", Env, got)
	}
	t.Setenv(Env, "")
	if got := Pick(t, 30, 300); got != 30 {
		t.Errorf("Pick with %s unset = %d, want the short value 30", Env, got)
	}
}
