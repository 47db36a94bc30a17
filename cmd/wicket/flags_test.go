package main

import (
	"crypto/rand"
	"strings"
	"testing"

	"wicket/internal/project"
)

// TestFlagsAfterTheArgument: a command that takes one positional argument
// accepts its flags, and its parents' (wicket's --project), after it; more
// than one argument and unknown flags are still refused.
func TestFlagsAfterTheArgument(t *testing.T) {
	t.Setenv(project.EnvProject, "")
	t.Chdir(t.TempDir()) // no project here: only --project finds one
	dir := t.TempDir()
	if _, err := project.Init(dir, rand.Reader); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		args []string
		code int
		want string
	}{
		{[]string{"data", "delete", "NOPE@1h", "--project", dir}, exitFailure, "series NOPE@1h: no such series"},
		{[]string{"data", "delete", "NOPE@1h", "--project=" + dir}, exitFailure, "series NOPE@1h: no such series"},
		{[]string{"data", "delete", "NOPE@1h", "B@1h", "--project", dir}, exitUsage, "needs exactly one series"},
		{[]string{"data", "delete", "NOPE@1h", "--frob"}, exitUsage, "flag provided but not defined: -frob"},
		{[]string{"data", "delete", "NOPE@1h", "--project"}, exitUsage, "flag needs an argument: -project"},
		{[]string{"trace", "show", "3", "--dir", dir + "/none"}, exitFailure, "no trace here"},
		{[]string{"trade", "ticket", "tk-1", "--node", "nonsense"}, exitUsage, `--node "nonsense" is not HOST:PORT`},
	}
	for _, tt := range tests {
		code, _, stderr := wicket(t, tt.args...)
		if code != tt.code || !strings.Contains(stderr, tt.want) {
			t.Errorf("wicket %s: exit %d, %q; want %d and %q", strings.Join(tt.args, " "), code, stderr, tt.code, tt.want)
		}
	}
}
