package main

// The venue end-to-end harness of the real-binary tests: a project with
// binance venues on node/venuerig's Binance fake, `wicket node serve` run
// on it as a process, a client on that node, and the helpers that kill
// and wait on it. The tests in node_venue*_test.go use it; none repeats it.

import (
	"bufio"
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/creack/pty"

	"wicket/internal/project"
	"wicket/node"
	"wicket/node/binance/binancefake"
	"wicket/node/venuerig"
)

// venueProject is a project whose wicket.toml adds binance venues on a
// fake exchange (testnet bn with may_arm, live bnlive with may_arm, and
// bnnope without it), with the fake's keys in settings/secrets.env.
type venueProject struct {
	dir              string
	fake             *binancefake.Fake
	observe, control string
	operator         ed25519.PrivateKey // the project's, from settings/operator.key
}

func newVenueProject(t *testing.T) *venueProject {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "proj")
	p, err := project.Init(dir, rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	f := venuerig.Binance(t, map[string]string{"USDT": "20000"}, "BTCUSDT")
	key, secret := f.APIKey, f.Secret
	toml := ""
	for _, v := range []struct {
		name, env string
		mayArm    bool
	}{{"bn", "testnet", true}, {"bnlive", "live", true}, {"bnnope", "testnet", false}} {
		toml += fmt.Sprintf("\n[[venues]]\nname = %q\nkind = \"binance\"\nenvironment = %q\nmay_arm = %v\nbase_url = %q\nsymbols = [\"BTCUSDT\"]\n",
			v.name, v.env, v.mayArm, f.URL)
	}
	appendFile(t, p.ConfigPath(), toml)
	appendFile(t, p.SecretsPath(), project.KeyBinanceAPIKey+"="+key+"\n"+project.KeyBinanceAPISecret+"="+secret+"\n")
	s, err := p.Secrets(func(string) (string, bool) { return "", false })
	if err != nil {
		t.Fatal(err)
	}
	vp := &venueProject{dir: dir, fake: f}
	vp.observe, _, _ = s.Lookup(project.KeyObserve)
	vp.control, _, _ = s.Lookup(project.KeyControl)
	if vp.operator, err = p.OperatorKey(func(string) (string, bool) { return "", false }); err != nil {
		t.Fatal(err)
	}
	return vp
}

func appendFile(t *testing.T, path, text string) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteString(text); err != nil {
		t.Fatal(err)
	}
}

// runNodeServe runs wicket with args (a `node serve`), waits for its
// "listening on" line and returns the process, the node's address and its
// stderr so far and from then on. The process is killed when the test ends.
func runNodeServe(t *testing.T, args ...string) (*exec.Cmd, string, *syncBuffer) {
	t.Helper()
	bin, err := exec.LookPath("wicket") // the test binary, installed by testscript.Main
	if err != nil {
		t.Fatalf("no wicket command on PATH: %v", err)
	}
	cmd := exec.Command(bin, args...)
	cmd.Env = cleanEnv()
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() }) //nolint:errcheck // already dead is fine
	log := &syncBuffer{}
	lines := bufio.NewScanner(stderr)
	addr := ""
	for lines.Scan() {
		log.WriteString(lines.Text() + "\n")
		if a, ok := strings.CutPrefix(lines.Text(), "wicket node: listening on "); ok {
			addr = a
			break
		}
	}
	if addr == "" {
		t.Fatalf("node exited without listening; stderr:\n%s", log.String())
	}
	go io.Copy(log, stderr) //nolint:errcheck // keep the pipe drained
	return cmd, addr, log
}

// startVenueNode runs `wicket node serve` for the project and waits until
// the node has read venue bn. Its stderr is kept for the test to inspect.
func (vp *venueProject) start(t *testing.T, args ...string) (*exec.Cmd, *node.Client, *syncBuffer) {
	t.Helper()
	cmd, addr, log := runNodeServe(t, append([]string{"--project", vp.dir, "node", "serve", "--listen", "127.0.0.1:0", "--tick", "0", "--venue-timeout", "1s"}, args...)...)
	c, err := node.NewClient(addr, vp.observe, vp.control)
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(15 * time.Second)
	for {
		snap, err := c.Snapshot(context.Background(), "bn", 0)
		if err == nil && snap.Venues[0].Connection == "connected" && snap.Venues[0].Account != "" {
			return cmd, c, log
		}
		if time.Now().After(deadline) {
			t.Fatalf("venue bn never synced: %v\n%s", err, log.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func cleanEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "WICKET_") {
			env = append(env, kv)
		}
	}
	return env
}

func (s *syncBuffer) WriteString(v string) { s.Write([]byte(v)) } //nolint:errcheck // a buffer

// wicketCLI runs the wicket binary for the project with stdin and stdout
// as pipes.
func (vp *venueProject) cli(t *testing.T, addr string, args ...string) (string, error) {
	t.Helper()
	bin, _ := exec.LookPath("wicket")
	cmd := exec.Command(bin, append([]string{"--project", vp.dir}, args...)...)
	cmd.Env = cleanEnv()
	cmd.Stdin = strings.NewReader("bn\n")
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// armAtTerminal runs `wicket node arm` on a pseudo-terminal, types answer
// at the prompt, and returns everything it printed.
func (vp *venueProject) armAtTerminal(t *testing.T, addr, venue, answer string, extra ...string) (string, error) {
	t.Helper()
	bin, _ := exec.LookPath("wicket")
	cmd := exec.Command(bin, append([]string{"--project", vp.dir, "node", "arm", venue, "--addr", addr}, extra...)...)
	cmd.Env = cleanEnv()
	tty, err := pty.Start(cmd)
	if err != nil {
		t.Fatal(err)
	}
	defer tty.Close()
	out := &syncBuffer{}
	go io.Copy(out, tty) //nolint:errcheck // ends when the process exits
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(out.String(), "to arm it: ") && time.Now().Before(deadline) {
		if cmd.ProcessState != nil {
			break
		}
		time.Sleep(20 * time.Millisecond)
		if strings.Contains(out.String(), "wicket: ") { // refused before the prompt
			break
		}
	}
	if strings.Contains(out.String(), "to arm it: ") {
		if _, err := tty.Write([]byte(answer + "\n")); err != nil {
			t.Fatal(err)
		}
	}
	err = cmd.Wait()
	time.Sleep(50 * time.Millisecond) // the last output
	return out.String(), err
}

// startArmedVenueNode is a venue project with its node started and bn
// armed; it skips under -short, since it starts real node processes.
func startArmedVenueNode(t *testing.T) (*venueProject, *exec.Cmd, *node.Client) {
	t.Helper()
	if testing.Short() {
		t.Skip("starts real node processes")
	}
	vp := newVenueProject(t)
	proc, c, _ := vp.start(t)
	if _, err := c.Arm(context.Background(), "bn", time.Hour, "bn", vp.operator); err != nil {
		t.Fatal(err)
	}
	return vp, proc, c
}

// kill ends the node with SIGKILL.
func kill(t *testing.T, proc *exec.Cmd) {
	t.Helper()
	if err := proc.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	proc.Wait() //nolint:errcheck // killed
}

// eventually polls ok (a bounded loop) until it holds, failing with the
// node's log after 15 s.
func eventually(t *testing.T, what string, log *syncBuffer, ok func() bool) {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for !ok() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s\n%s", what, log.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
}
