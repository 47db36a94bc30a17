package buildinfo

import (
	"runtime/debug"
	"testing"
)

func TestVersionFrom(t *testing.T) {
	vcs := func(rev, modified string) []debug.BuildSetting {
		return []debug.BuildSetting{{Key: "vcs", Value: "git"}, {Key: "vcs.revision", Value: rev}, {Key: "vcs.modified", Value: modified}}
	}
	const rev = "13d8dcd0a1b2c3d4e5f60718293a4b5c6d7e8f90"
	cases := []struct {
		name    string
		stamped string
		bi      *debug.BuildInfo
		want    string
	}{
		{"stamp wins", "v1.2.3", &debug.BuildInfo{Main: debug.Module{Version: "v0.0.0-x"}}, "v1.2.3"},
		{"stamp trimmed", " v1.2.3\n", nil, "v1.2.3"},
		{"go install at a tag", "", &debug.BuildInfo{Main: debug.Module{Version: "v1.4.0"}}, "v1.4.0"},
		{"pseudo-version from the commit", "", &debug.BuildInfo{Main: debug.Module{Version: "v0.0.0-20261201214000-13d8dcd0a1b2+dirty"}, Settings: vcs(rev, "true")}, "v0.0.0-20261201214000-13d8dcd0a1b2+dirty"},
		{"revision only", "", &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}, Settings: vcs(rev, "false")}, "devel+13d8dcd0a1b2"},
		{"revision, modified", "", &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}, Settings: vcs(rev, "true")}, "devel+13d8dcd0a1b2.dirty"},
		{"nothing recorded", "", &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}}, Devel},
		{"no build info", "", nil, Devel},
	}
	for _, c := range cases {
		if got := From(c.stamped, c.bi); got != c.want {
			t.Errorf("%s: From(%q) = %q, want %q", c.name, c.stamped, got, c.want)
		}
	}
}
