package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/urfave/cli/v2"
)

// nodeClearBreakerCommand clears a venue's tripped breaker (wicket.toml
// max_daily_loss / max_drawdown_pct moved it to reduce_only): an operator
// at an interactive terminal, signed with the operator key, as arming is.
func nodeClearBreakerCommand() *cli.Command {
	return &cli.Command{
		Name:      "clear-breaker",
		Usage:     "clear a venue's tripped breaker, so it trades beyond reduce_only again (an operator at an interactive terminal only)",
		ArgsUsage: "VENUE",
		Description: "Shows why the breaker tripped and asks you to type the venue's name. Needs the operator key (settings/operator.key, " +
			"or WICKET_OPERATOR_KEY; it signs the clear and the node verifies it), the control key and an interactive terminal. " +
			"The day's loss and the peak are then measured from the venue's equity at the clear.",
		Flags: []cli.Flag{nodeAddrFlag()},
		Action: func(c *cli.Context) error {
			name, err := oneVenue(c, "clear-breaker")
			if err != nil {
				return err
			}
			o := nodeArmOptions{project: c.String("project"), addr: c.String("addr"), name: name, stdin: c.App.Reader}
			return runNodeClearBreaker(c.Context, o, c.App.Writer, c.App.ErrWriter)
		},
	}
}

// runNodeClearBreaker clears venue o.name's tripped breaker, signed with
// the operator key, once the operator at the terminal types its name.
func runNodeClearBreaker(ctx context.Context, o nodeArmOptions, stdout, _ io.Writer) error {
	name := o.name
	if !isTerminal(o.stdin) || !isTerminal(stdout) {
		return errors.New("wicket node clear-breaker needs an interactive terminal (stdin and stdout); a pipe or a script cannot clear a breaker")
	}
	client, p, err := armClientAt(o.project, o.addr)
	if err != nil {
		return err
	}
	key, err := operatorKey(p)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, nodeCallTimeout)
	defer cancel()
	info, err := client.Breaker(ctx, name)
	if err != nil {
		return err
	}
	out := stdout
	if info.Tripped == "" {
		fmt.Fprintf(out, "venue %s's breaker has not tripped: nothing to clear\n", name)
		return nil
	}
	fmt.Fprintf(out, "venue        %s is reduce_only by its breaker\nwhy          %s\nlimits       max_daily_loss %s, max_drawdown_pct %s\n",
		name, info.Tripped, info.MaxDailyLoss, info.MaxDrawdownPct)
	fmt.Fprintf(out, "Type %s to clear it: ", name)
	line, err := bufio.NewReader(o.stdin).ReadString('\n')
	if err != nil && line == "" {
		return errors.New("nothing done: no answer")
	}
	if typed := strings.TrimSpace(line); typed != name {
		return fmt.Errorf("nothing done: %q is not %q", typed, name)
	}
	if _, err := client.ClearBreaker(ctx, name, name, key); err != nil {
		return err
	}
	fmt.Fprintf(out, "venue %s's breaker is cleared; the day's loss and the peak are measured from now\n", name)
	return nil
}
