package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// completionScript writes `wicket completion SHELL` to a file.
func completionScript(t *testing.T, shell string) string {
	t.Helper()
	code, stdout, stderr := wicket(t, "completion", shell)
	if code != 0 || stdout == "" {
		t.Fatalf("completion %s: %d %s", shell, code, stderr)
	}
	f := filepath.Join(t.TempDir(), "wicket."+shell)
	if err := os.WriteFile(f, []byte(stdout), 0o600); err != nil {
		t.Fatal(err)
	}
	return f
}

// shellOut runs script in shell and returns its output.
func shellOut(t *testing.T, shell string, args ...string) string {
	t.Helper()
	cmd := exec.Command(shell, args...)
	cmd.Env = append(os.Environ(), "HOME="+t.TempDir(), "XDG_CONFIG_HOME="+t.TempDir())
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s: %v\n%s", shell, err, out)
	}
	return string(out)
}

// TestCompletionBash: the bash script loads in bash and completes
// commands, subcommands and flags from what was typed; after a flag that
// takes a value it offers no words (bash completes file names).
func TestCompletionBash(t *testing.T) {
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("no bash")
	}
	script := completionScript(t, "bash")
	out := shellOut(t, "bash", "-c", `set -e; source "$1"
complete -p wicket
c() { read -ra COMP_WORDS <<< "$1"; [[ "$1" == *" " ]] && COMP_WORDS+=(""); COMP_CWORD=$((${#COMP_WORDS[@]}-1)); _wicket; echo "$1|${COMPREPLY[*]}"; }
c "wicket no"
c "wicket node ar"
c "wicket callers re"
c "wicket --project p cal"
c "wicket approve --oa"
c "wicket backtest --series "
c "wicket completion "`, "bash", script)
	for _, want := range []string{
		"complete -o default -F _wicket wicket",
		"wicket no|node\n",
		"wicket node ar|arm\n",
		"wicket callers re|remove revoke\n",
		"wicket --project p cal|callers\n",
		"wicket approve --oa|--oauth\n",
		"wicket backtest --series |\n",
		"wicket completion |--help -h\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("bash completion lacks %q:\n%s", want, out)
		}
	}
}

// TestCompletionZshAndFish: the zsh function and the fish completions
// load in their shells and complete the same paths (skipped where the
// shell is not installed).
func TestCompletionZshAndFish(t *testing.T) {
	if _, err := exec.LookPath("zsh"); err == nil {
		script := completionScript(t, "zsh")
		// _describe and _files print what they were given.
		out := shellOut(t, "zsh", "-c", `autoload -U compinit; compinit -u -D; source "$1"
_describe() { local -a a; a=("${(@P)${@[-1]}}"); a=(${a%%:*}); print -r -- "${(j: :)a}" }
_files() { print files }
c() { words=(${=1}); [[ "$1" == *" " ]] && words+=(""); CURRENT=${#words}; _wicket; }
c "wicket no"; c "wicket node ar"; c "wicket approve --oa"; c "wicket backtest --series "
print ${_comps[wicket]}`, "zsh", script)
		for _, want := range []string{"approve backtest callers completion", "approve-proposal arm clear-breaker", "--addr --oauth --http --json --listen --help -h", "files", "_wicket"} {
			if !strings.Contains(out, want) {
				t.Errorf("zsh completion lacks %q:\n%s", want, out)
			}
		}
	} else {
		t.Log("no zsh: its script is not loaded")
	}
	if _, err := exec.LookPath("fish"); err == nil {
		script := completionScript(t, "fish")
		out := shellOut(t, "fish", "-c", `source $argv[1]; complete -C"wicket no"; complete -C"wicket node ar"; complete -C"wicket callers re"; complete -C"wicket approve --oa"`, script)
		for _, want := range []string{"node\trun the trading node", "arm\tarm a real venue", "revoke\trevoke an OAuth grant", "--oauth\t"} {
			if !strings.Contains(out, want) {
				t.Errorf("fish completion lacks %q:\n%s", want, out)
			}
		}
	} else {
		t.Log("no fish: its script is not loaded")
	}
	if code, _, stderr := wicket(t, "completion", "tcsh"); code != 2 || !strings.Contains(stderr, "valid: bash, zsh, fish") {
		t.Errorf("an unknown shell: %d %s", code, stderr)
	}
}
