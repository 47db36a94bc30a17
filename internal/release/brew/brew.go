// Package brew writes wicket's Homebrew formula for a release: the
// darwin and linux archives of each architecture, downloaded from the
// release tagged v<version> and checked against their SHA-256, the binary
// installed with its shell completions (`wicket completion SHELL`), and a
// test that runs `wicket --version`.
//
// It never reaches the network and never publishes anything: the formula
// is a file of the release, for a tap to take.
package brew

import (
	"fmt"
	"regexp"
	"strings"
)

// Archive is one release archive the formula can install.
type Archive struct {
	GOOS, GOARCH string
	Name         string // the file name in the release
	SHA256       string // hex
}

// Formula is the formula of version for the archives (darwin and linux,
// amd64 and arm64, all four needed), downloaded from repository's
// release v<version>.
func Formula(version, repository, desc string, archives []Archive) (string, error) {
	if !regexp.MustCompile(`^[0-9]+\.[0-9]+\.[0-9]+([-+][0-9A-Za-z.+-]+)?$`).MatchString(version) {
		return "", fmt.Errorf("brew: version %q is not semantic", version)
	}
	find := func(goos, goarch string) (Archive, error) {
		for _, a := range archives {
			if a.GOOS == goos && a.GOARCH == goarch {
				if !regexp.MustCompile(`^[0-9a-f]{64}$`).MatchString(a.SHA256) || strings.ContainsAny(a.Name, "\"\\#{}") {
					return a, fmt.Errorf("brew: %s/%s archive %q: bad name or sha256", goos, goarch, a.Name)
				}
				return a, nil
			}
		}
		return Archive{}, fmt.Errorf("brew: no %s/%s archive: the release must build it", goos, goarch)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "# Homebrew formula for wicket %s, written by the release (internal/release/brew).\n", version)
	b.WriteString("class Wicket < Formula\n")
	fmt.Fprintf(&b, "  desc %q\n", desc)
	fmt.Fprintf(&b, "  homepage %q\n", repository)
	fmt.Fprintf(&b, "  version %q\n", version)
	for _, goos := range []string{"darwin", "linux"} {
		block := map[string]string{"darwin": "on_macos", "linux": "on_linux"}[goos]
		fmt.Fprintf(&b, "\n  %s do\n", block)
		for _, arch := range []struct{ goarch, block string }{{"arm64", "on_arm"}, {"amd64", "on_intel"}} {
			a, err := find(goos, arch.goarch)
			if err != nil {
				return "", err
			}
			fmt.Fprintf(&b, "    %s do\n", arch.block)
			fmt.Fprintf(&b, "      url %q\n", fmt.Sprintf("%s/releases/download/v%s/%s", repository, version, a.Name))
			fmt.Fprintf(&b, "      sha256 %q\n", a.SHA256)
			b.WriteString("    end\n")
		}
		b.WriteString("  end\n")
	}
	b.WriteString(`
  def install
    bin.install "wicket"
    generate_completions_from_executable(bin/"wicket", "completion")
  end

  test do
    assert_match version.to_s, shell_output("#{bin}/wicket --version")
  end
end
`)
	return b.String(), nil
}
