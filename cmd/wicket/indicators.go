package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"text/tabwriter"

	"github.com/urfave/cli/v2"

	"wicket/internal/project"
	"wicket/strategy/script"
	"wicket/strategy/ta"
)

func indicatorsCommand() *cli.Command {
	return &cli.Command{
		Name:  "indicators",
		Usage: "list the built-in ta.* indicators and the project's user indicators",
		Description: "Built-ins are listed by category; --category user lists only the project's " +
			"indicators/*.star, which strategies import with load(\"indicators/NAME\", \"fn\").",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "category", Usage: "only this category: " + categoryNames() + ", or user"},
			&cli.StringFlag{Name: "name", Usage: "only names containing this text"},
			&cli.BoolFlag{Name: "json", Usage: "machine-readable output"},
		},
		Action: func(c *cli.Context) error {
			args, err := trailingFlags(c)
			if err != nil {
				return err
			}
			if len(args) > 0 {
				return usagef("indicators takes no arguments (use --name %s)", args[0])
			}
			o := indicatorsOptions{project: c.String("project"), category: c.String("category"), name: c.String("name"), json: c.Bool("json")}
			return runIndicators(c.Context, o, c.App.Writer, c.App.ErrWriter)
		},
	}
}

// indicatorsOptions is what wicket indicators works with, filled from its
// flags.
type indicatorsOptions struct {
	project  string // the --project flag
	category string // a built-in category, "user", or empty for all
	name     string // only names containing this text
	json     bool
}

// runIndicators lists the built-in indicators and the project's own.
func runIndicators(_ context.Context, o indicatorsOptions, stdout, stderr io.Writer) error {
	cat, name := o.category, o.name
	var builtins []*ta.Entry
	if cat != "user" {
		var err error
		if builtins, err = ta.Builtin().Filter(cat, name); err != nil {
			return usagef("%v, or user", err)
		}
	}
	var user []script.UserIndicator
	if cat == "" || cat == "user" {
		var err error
		if user, err = userIndicators(o.project, name); err != nil {
			return err
		}
	}
	if o.json {
		if builtins == nil {
			builtins = []*ta.Entry{}
		}
		if user == nil {
			user = []script.UserIndicator{}
		}
		return writeJSON(stdout, struct {
			Builtin []*ta.Entry            `json:"builtin"`
			User    []script.UserIndicator `json:"user"`
		}{builtins, user})
	}
	return printIndicators(stdout, stderr, builtins, user)
}

func categoryNames() string {
	names := make([]string, len(ta.Categories))
	for i, k := range ta.Categories {
		names[i] = string(k)
	}
	return strings.Join(names, ", ")
}

// userIndicators lists the project's indicators; outside a project there
// are none.
func userIndicators(projectFlag, name string) ([]script.UserIndicator, error) {
	p, _, err := openProjectAt(projectFlag)
	if errors.Is(err, project.ErrNoProject) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	root, err := os.OpenRoot(p.IndicatorsDir())
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("open indicators: %w", err)
	}
	defer root.Close()
	all, err := script.ListIndicators(root.FS())
	if err != nil {
		return nil, fmt.Errorf("list indicators: %w", err)
	}
	var out []script.UserIndicator
	for _, u := range all {
		if strings.Contains(u.Name, strings.ToLower(name)) {
			out = append(out, u)
		}
	}
	return out, nil
}

func printIndicators(w, stderr io.Writer, builtins []*ta.Entry, user []script.UserIndicator) error {
	if len(builtins) > 0 {
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "INDICATOR\tCATEGORY\tWARM-UP\tOUTPUTS\tSUMMARY")
		for _, e := range builtins {
			fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t%s\n", e.Signature(), e.Category, e.Warmup, strings.Join(e.Outputs, ","), e.Summary)
		}
		if err := tw.Flush(); err != nil {
			return err
		}
	}
	if len(user) > 0 {
		if len(builtins) > 0 {
			fmt.Fprintln(w)
		}
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "USER INDICATOR\tMARK\tIMPORT\tSUMMARY")
		for _, u := range user {
			summary := u.Summary
			if u.Problem != "" {
				summary = "does not parse: " + u.Problem
			}
			fmt.Fprintf(tw, "%s\t[user]\t%s\t%s\n", u.Name, u.Load, summary)
		}
		if err := tw.Flush(); err != nil {
			return err
		}
	}
	if len(builtins) == 0 && len(user) == 0 {
		fmt.Fprintln(stderr, "no indicator matches")
	}
	return nil
}
