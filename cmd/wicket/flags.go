package main

import (
	"slices"
	"strings"

	"github.com/urfave/cli/v2"
)

// trailingFlags returns the positional arguments of c after setting the
// flags that follow them: urfave/cli v2 stops parsing flags at the first
// positional argument, and people write `wicket data import FILE.csv
// --series S` or `wicket trace show TOKEN --node H:P`. A flag may be the
// command's own or one of its parents' (wicket's --project, trade's
// --node); `--` ends the flags, so a positional argument that starts with
// a dash can still be given after it.
func trailingFlags(c *cli.Context) ([]string, error) {
	var pos []string
	args := c.Args().Slice()
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			return append(pos, args[i+1:]...), nil
		}
		if len(a) < 2 || a[0] != '-' {
			pos = append(pos, a)
			continue
		}
		name, val, hasVal := strings.Cut(strings.TrimLeft(a, "-"), "=")
		flag := lineageFlag(c, name)
		if flag == nil {
			return nil, usagef("flag provided but not defined: -%s (see --help)", name)
		}
		if _, isBool := flag.(*cli.BoolFlag); isBool {
			if !hasVal {
				val = "true"
			}
		} else if !hasVal {
			if i+1 == len(args) {
				return nil, usagef("flag needs an argument: -%s (see --help)", name)
			}
			i++
			val = args[i]
		}
		if err := c.Set(flag.Names()[0], val); err != nil { // an alias (-o) sets the flag by its name, which is what c.String reads
			return nil, usagef("invalid value %q for flag -%s: %v", val, name, err)
		}
	}
	return pos, nil
}

// lineageFlag finds the flag called name on c's command or the nearest
// parent that has it, as c.Set does.
func lineageFlag(c *cli.Context, name string) cli.Flag {
	for _, cc := range c.Lineage() {
		var flags []cli.Flag
		switch {
		case cc.Command != nil && cc.Command.Name != "":
			flags = cc.Command.Flags
		case cc.App != nil:
			flags = cc.App.Flags
		}
		for _, f := range flags {
			if slices.Contains(f.Names(), name) {
				return f
			}
		}
	}
	return nil
}

// oneArg returns the one positional argument of a command that takes
// exactly one, with the flags set wherever they stood (trailingFlags). usage
// is the error for any other count: it names the argument and how to give
// it.
func oneArg(c *cli.Context, usage func(n int) error) (string, error) {
	args, err := trailingFlags(c)
	if err != nil {
		return "", err
	}
	if len(args) != 1 {
		return "", usage(len(args))
	}
	return args[0], nil
}

// setFlags reports which of the named flags the command line gave (set
// to any value, even its default), for options that tell "given" from
// "left at its default".
func setFlags(c *cli.Context, names ...string) map[string]bool {
	set := map[string]bool{}
	for _, n := range names {
		if c.IsSet(n) {
			set[n] = true
		}
	}
	return set
}
