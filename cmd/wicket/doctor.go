package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/urfave/cli/v2"

	"wicket/deploy"
	"wicket/internal/project"
	"wicket/node"
	"wicket/strategy"
	"wicket/strategy/history"
)

// wicket doctor checks a project the way an operator would before a
// session: keys and their file modes, the node, its venues, the data the
// deployments read, the disk and the clock. Each finding that needs a fix
// names it. It reads; it never changes a file, arms, or prints a key.

func doctorCommand() *cli.Command {
	return &cli.Command{
		Name:  "doctor",
		Usage: "check a project (keys and their modes, the node, venues and arming, deployed series' data, disk, clock) and name each fix",
		Description: "Every check prints ok, warn or fail, with what it found and, unless ok, the command or edit that fixes it. " +
			"The exit code is 1 when any check fails (a warning alone exits 0), so a script can run it before a session. " +
			"No key is ever printed: only whether it is there and where it is read from.",
		Flags: []cli.Flag{
			nodeAddrFlag(),
			&cli.BoolFlag{Name: "json", Usage: "machine-readable output"},
		},
		Action: func(c *cli.Context) error {
			if c.Args().Present() {
				return usagef("doctor takes no arguments, got %q", c.Args().First())
			}
			o := doctorOptions{project: c.String("project"), addr: c.String("addr"), json: c.Bool("json"), now: time.Now}
			return runDoctor(c.Context, o, c.App.Writer, c.App.ErrWriter)
		},
	}
}

// doctorOptions is what wicket doctor works with, filled from its flags.
type doctorOptions struct {
	project string // the --project flag
	addr    string // the --addr flag; wicket.toml's [node] address without it
	json    bool
	now     func() time.Time
}

// Statuses of a check.
const (
	checkOK   = "ok"
	checkWarn = "warn"
	checkFail = "fail"
	checkSkip = "skip" // not checked, because an earlier check failed
)

// doctorCheck is one finding: what was checked, how it stands, what was
// found and, unless ok, the fix.
type doctorCheck struct {
	Check  string `json:"check"`
	Status string `json:"status"`
	Detail string `json:"detail"`
	Fix    string `json:"fix,omitempty"`
}

// doctorReport is the whole answer of wicket doctor --json.
type doctorReport struct {
	Project string        `json:"project"`
	Node    string        `json:"node"`
	Checks  []doctorCheck `json:"checks"`
	Fails   int           `json:"fails"`
	Warns   int           `json:"warnings"`
}

// Thresholds of the checks.
const (
	doctorCallTimeout = 5 * time.Second
	skewWarn          = 2 * time.Second
	skewFail          = node.Window / 2 // signed requests beyond node.Window are refused
	diskWarn          = 2 << 30
	diskFail          = 512 << 20
	staleBars         = 3 // a deployed series whose last bar is older than this many bars is stale
)

// runDoctor runs every check and prints them; it fails (exit 1) when any
// check failed.
func runDoctor(ctx context.Context, o doctorOptions, stdout, _ io.Writer) error {
	p, cfg, err := openProjectAt(o.project)
	if err != nil {
		return err
	}
	addr := o.addr
	if addr == "" {
		addr = cfg.Node.Address
	}
	d := &doctor{p: p, cfg: cfg, addr: addr, now: o.now, rep: doctorReport{Project: p.Root, Node: addr}}
	d.keys()
	d.node(ctx)
	d.disk()
	for _, c := range d.rep.Checks {
		switch c.Status {
		case checkFail:
			d.rep.Fails++
		case checkWarn:
			d.rep.Warns++
		}
	}
	if o.json {
		if err := writeJSON(stdout, d.rep); err != nil {
			return err
		}
	} else if err := printDoctor(stdout, d.rep); err != nil {
		return err
	}
	if d.rep.Fails > 0 {
		return fmt.Errorf("doctor: %d of %d checks failed; each names its fix", d.rep.Fails, len(d.rep.Checks))
	}
	return nil
}

func printDoctor(w io.Writer, r doctorReport) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "STATUS\tCHECK\tFOUND")
	for _, c := range r.Checks {
		fmt.Fprintf(tw, "%s\t%s\t%s\n", c.Status, c.Check, c.Detail)
		if c.Fix != "" {
			fmt.Fprintf(tw, "\t\tfix: %s\n", c.Fix)
		}
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintf(w, "%d checks: %d failed, %d warnings\n", len(r.Checks), r.Fails, r.Warns)
	return nil
}

// doctor collects the checks of one run.
type doctor struct {
	p    project.Project
	cfg  project.Config
	addr string
	now  func() time.Time
	rep  doctorReport

	observe, control string // the node keys, for the node client; never printed
}

func (d *doctor) add(check, status, detail, fix string) {
	d.rep.Checks = append(d.rep.Checks, doctorCheck{Check: check, Status: status, Detail: detail, Fix: fix})
}

// keys checks secrets.env's mode, the node keys and the operator key.
func (d *doctor) keys() {
	s, err := d.p.Secrets(os.LookupEnv)
	if err != nil {
		d.add("secrets", checkFail, err.Error(), "fix the line it names in "+d.p.SecretsPath())
		return
	}
	switch {
	case !s.Exists:
		d.add("secrets.env", checkWarn, s.Path+" does not exist: keys come from the environment only", "")
	case s.LooseMode():
		d.add("secrets.env", checkFail, fmt.Sprintf("%s has mode %04o: other users can read the keys", s.Path, s.Mode), "chmod 600 "+s.Path)
	default:
		d.add("secrets.env", checkOK, fmt.Sprintf("%s, mode %04o", s.Path, s.Mode), "")
	}
	var missing, found []string
	for _, k := range []string{project.KeyObserve, project.KeyControl} {
		v, src, ok := s.Lookup(k)
		if !ok {
			missing = append(missing, k)
			continue
		}
		found = append(found, k+" ("+string(src)+")")
		if k == project.KeyObserve {
			d.observe = v
		} else {
			d.control = v
		}
	}
	if len(missing) > 0 {
		d.add("node keys", checkFail, strings.Join(missing, " and ")+" not set",
			"set them in "+d.p.SecretsPath()+" or the environment, the same values the node was started with")
	} else {
		d.add("node keys", checkOK, strings.Join(found, ", "), "")
	}

	info, loose := d.p.OperatorKeyInfo(os.LookupEnv)
	_, pubErr := os.Stat(d.p.OperatorPublicPath())
	switch {
	case pubErr != nil:
		d.add("operator key", checkFail, d.p.OperatorPublicPath()+" is missing: the node cannot verify arming or approvals",
			"wicket init --operator-key "+d.p.Root)
	case loose:
		d.add("operator key", checkFail, d.p.OperatorKeyPath()+" can be read by other users", "chmod 600 "+d.p.OperatorKeyPath())
	case info.Present:
		d.add("operator key", checkOK, "present ("+string(info.Source)+"), operator.pub beside it", "")
	default:
		d.add("operator key", checkOK, "separated: only operator.pub is in the project; bring the key ("+
			project.KeyOperator+" or settings/operator.key) only to arm or approve", "")
	}
}

// node checks that the node answers, the clock against it, its venues and
// the data its deployments read.
func (d *doctor) node(ctx context.Context) {
	if d.observe == "" || d.control == "" {
		d.add("node", checkSkip, "not checked: the node keys are missing", "")
		return
	}
	client, err := node.NewClient(d.addr, d.observe, d.control)
	if err != nil {
		d.add("node", checkFail, err.Error(), "set [node] address in wicket.toml to HOST:PORT, or pass --addr")
		return
	}
	cctx, cancel := context.WithTimeout(ctx, doctorCallTimeout)
	sent := d.now()
	h, err := client.Health(cctx)
	got := d.now()
	cancel()
	if err != nil {
		d.add("node", checkFail, fmt.Sprintf("%s does not answer: %v", d.addr, err),
			"start it with `wicket node serve`, or pass --addr HOST:PORT of the running one")
		return
	}
	d.add("node", checkOK, fmt.Sprintf("%s answers (version %s, trading %s, %d venues)", d.addr, nonEmpty(h.Version, "unknown"), h.TradingState, len(h.Venues)), "")

	// The node's time is read between sent and got: against their midpoint
	// the error is at most half the round trip.
	mid := sent.Add(got.Sub(sent) / 2)
	skew := h.Time.Sub(mid)
	abs := skew.Abs()
	detail := fmt.Sprintf("this machine is %s %s the node (round trip %s); the venue's clock is not reported by the node",
		abs.Round(time.Millisecond), aheadBehind(skew), got.Sub(sent).Round(time.Millisecond))
	if abs < time.Millisecond {
		detail = "this machine is within 1ms of the node; the venue's clock is not reported by the node"
	}
	switch {
	case abs > skewFail:
		d.add("clock", checkFail, detail, fmt.Sprintf("synchronise both clocks with NTP: the node refuses signed requests more than %s off", node.Window))
	case abs > skewWarn:
		d.add("clock", checkWarn, detail, "synchronise both clocks with NTP (timedatectl set-ntp true)")
	default:
		d.add("clock", checkOK, detail, "")
	}

	d.venues(ctx, client, h)
	d.deployments(ctx, client)
}

func aheadBehind(skew time.Duration) string {
	if skew > 0 {
		return "behind" // the node's clock reads later than ours
	}
	return "ahead of"
}

func nonEmpty(s, otherwise string) string {
	if s == "" {
		return otherwise
	}
	return s
}

// venues checks each venue of wicket.toml at the node: served, its
// symbols, its arming.
func (d *doctor) venues(ctx context.Context, client *node.Client, h node.Health) {
	served := map[string]bool{}
	for _, v := range h.Venues {
		served[v] = true
	}
	for _, v := range d.cfg.Venues {
		check := "venue " + v.Name
		if !served[v.Name] {
			d.add(check, checkWarn, "in wicket.toml but not served by the node at "+d.addr,
				"restart `wicket node serve` so it reads the current wicket.toml")
			continue
		}
		cctx, cancel := context.WithTimeout(ctx, doctorCallTimeout)
		a, err := client.Arming(cctx, v.Name)
		cancel()
		if err != nil {
			d.add(check, checkFail, "the node's arming state: "+err.Error(), "see the node's log (wicket node serve's stderr)")
			continue
		}
		var lost []string
		for _, s := range v.Symbols {
			if !containsString(a.Symbols, s) {
				lost = append(lost, s)
			}
		}
		kind := v.Kind
		if a.Live {
			kind += ", live (real money)"
		} else if v.Real() {
			kind += ", " + v.Environment
		}
		detail := fmt.Sprintf("%s; %d symbols (%s)", kind, len(a.Symbols), strings.Join(a.Symbols, " "))
		switch {
		case len(a.Symbols) == 0:
			d.add(check, checkFail, detail, "list the venue's symbols in wicket.toml's [[venues]] table and restart the node")
			continue
		case len(lost) > 0:
			d.add(check, checkWarn, detail+"; not served: "+strings.Join(lost, " "),
				"restart `wicket node serve` so it reads the current wicket.toml, or check the symbols' spelling in [symbols]")
			continue
		}
		if !v.Real() {
			d.add(check, checkOK, detail+"; simulated, needs no arming", "")
			continue
		}
		switch {
		case a.Armed:
			d.add(check, checkOK, detail+"; armed until "+a.ArmedUntil.UTC().Format(time.RFC3339), "")
		case !a.MayArm:
			d.add(check, checkWarn, detail+"; disarmed, and may_arm is false: it can never be armed",
				"set may_arm = true in its [[venues]] table if it should trade, then restart the node")
		case a.Refusal != "":
			d.add(check, checkWarn, detail+"; disarmed: "+a.Refusal, "")
		default:
			d.add(check, checkWarn, detail+"; disarmed: it refuses every write",
				"wicket node arm "+v.Name+" --for 8h (at a terminal, with the operator key)")
		}
	}
}

func containsString(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// deployments checks that the history store holds fresh bars of each
// running deployment's series: the node's deployments read them there.
func (d *doctor) deployments(ctx context.Context, client *node.Client) {
	cctx, cancel := context.WithTimeout(ctx, doctorCallTimeout)
	defer cancel()
	var list struct {
		Deployments []deploy.Deployment `json:"deployments"`
	}
	if err := client.DeploymentsGet(cctx, "", nil, &list); err != nil {
		var ne *node.Error
		if errors.As(err, &ne) && (ne.Kind == node.KindNotFound || ne.Code == "deployments_off") {
			d.add("deployments", checkOK, "the node runs no deployments service", "")
			return
		}
		d.add("deployments", checkFail, err.Error(), "see the node's log (wicket node serve's stderr)")
		return
	}
	series := map[string]bool{}
	var names []string
	for _, dep := range list.Deployments {
		if dep.State == deploy.StateStopped || series[dep.Series] {
			continue
		}
		series[dep.Series] = true
		names = append(names, dep.Series)
	}
	if len(names) == 0 {
		d.add("deployments", checkOK, fmt.Sprintf("%d deployments, none running", len(list.Deployments)), "")
		return
	}
	var store *history.Store
	if _, err := os.Stat(d.p.HistoryPath()); err == nil {
		s, err := history.OpenReadOnly(d.p.HistoryPath())
		if err != nil {
			d.add("data", checkFail, err.Error(), "")
			return
		}
		defer s.Close()
		store = s
	}
	now := d.now()
	for _, name := range names {
		check := "data " + name
		fix := "wicket data fetch " + name + " (or keep `wicket data record` running for it)"
		if store == nil {
			d.add(check, checkFail, "no history store: a running deployment reads its bars there", fix)
			continue
		}
		info, err := store.Info(name)
		if err != nil {
			d.add(check, checkFail, err.Error(), fix)
			continue
		}
		age := now.Sub(info.Last)
		detail := fmt.Sprintf("%d bars, the last opened %s ago (%s)", info.Bars, age.Round(time.Second), info.Last.UTC().Format(time.RFC3339))
		if g := strategy.Granularity(info.Granularity).Duration(); g > 0 && age > staleBars*g {
			d.add(check, checkWarn, detail+fmt.Sprintf(": stale, more than %d bars behind", staleBars), fix)
			continue
		}
		d.add(check, checkOK, detail, "")
	}
}

// disk checks the free space where the project keeps its state.
func (d *doctor) disk() {
	dir := d.p.StateDir()
	if _, err := os.Stat(dir); err != nil {
		dir = d.p.Root
	}
	free, err := freeBytes(dir)
	if err != nil {
		d.add("disk", checkWarn, "free space not known: "+err.Error(), "")
		return
	}
	detail := fmt.Sprintf("%.1f GiB free where %s is", float64(free)/(1<<30), dir)
	switch {
	case free < diskFail:
		d.add("disk", checkFail, detail, "free space on that filesystem: the journal and the history store stop writing when it is full")
	case free < diskWarn:
		d.add("disk", checkWarn, detail, "free space on that filesystem soon")
	default:
		d.add("disk", checkOK, detail, "")
	}
}
