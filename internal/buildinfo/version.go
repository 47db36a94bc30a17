// Package buildinfo decides the one version string a wicket build reports:
// in --version, in the MCP serverInfo, in the node's status and in the
// server card. Every place asks Version; none derives its own. It also
// holds wicket's published identity (identity.go).
//
// It must never read the network, the clock or the environment: the answer
// depends only on what the linker and the Go toolchain stamped into the
// binary, so two reports from one binary always agree.
package buildinfo

import (
	"runtime/debug"
	"strings"
)

// Devel is the version of a build that carries neither an -ldflags stamp
// nor any module or VCS information (for example go build -buildvcs=false
// outside a module cache).
const Devel = "devel"

// Version is the version of this binary. stamped is what the build set
// with -ldflags "-X main.version=..." (empty when nothing was set).
func Version(stamped string) string {
	bi, _ := debug.ReadBuildInfo()
	return From(stamped, bi)
}

// From decides the version from a stamp and the recorded build info, in
// this order: the stamp; the main module's version (a tag, or the
// pseudo-version Go 1.24+ derives from the commit, with +dirty for
// uncommitted changes); the VCS revision Go recorded, as devel+<rev>;
// else Devel.
func From(stamped string, bi *debug.BuildInfo) string {
	if s := strings.TrimSpace(stamped); s != "" {
		return s
	}
	if bi == nil {
		return Devel
	}
	if v := bi.Main.Version; v != "" && v != "(devel)" {
		return v
	}
	rev, dirty := "", false
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			dirty = s.Value == "true"
		}
	}
	if rev == "" {
		return Devel
	}
	if len(rev) > 12 {
		rev = rev[:12]
	}
	if dirty {
		rev += ".dirty"
	}
	return Devel + "+" + rev
}
