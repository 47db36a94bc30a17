package main

import (
	"context"
	"crypto/rand"
	"fmt"
	"io"
	"strings"
	"time"

	"wicket/agent/authserver"
)

// runApproveOAuth answers the built-in issuer's authorization requests at
// the operator's terminal: each is shown as its authorize page shows it
// (client, redirect host, scopes); a grant prints a one-time code, signed
// with the operator key, for the person to type on that page.
func runApproveOAuth(ctx context.Context, o approveOptions, stdout io.Writer) error {
	if !isTerminal(o.stdin) || !isTerminal(stdout) {
		return usagef("wicket approve --oauth needs an interactive terminal: granting a client is a person's decision, " +
			"so it does not read a pipe or a file; run it in a terminal")
	}
	p, _, err := openProjectAt(o.project)
	if err != nil {
		return err
	}
	key, err := operatorKey(p) // every consent is signed with it
	if err != nil {
		return err
	}
	st := authserver.OpenStore(p.SettingsDir())
	in := startLines(o.stdin)
	by := whoAmI(o.stdin)
	fmt.Fprintln(stdout, "wicket approve --oauth: watching the built-in issuer's authorization requests (q or Ctrl-D quits).")
	seen := map[string]bool{}
	idle := false
	for {
		waiting, err := st.Waiting(o.now())
		if err != nil {
			return err
		}
		var next *authserver.Pending
		for i := range waiting {
			if !seen[waiting[i].ID] {
				next = &waiting[i]
				break
			}
		}
		if next == nil {
			if !idle {
				fmt.Fprintln(stdout, "Nothing is waiting.")
				idle = true
			}
			select {
			case line, ok := <-in:
				if !ok || line == "q" {
					fmt.Fprintln(stdout, "bye")
					return nil
				}
			case <-time.After(o.poll):
			case <-ctx.Done():
				return nil
			}
			continue
		}
		idle = false
		seen[next.ID] = true
		scopes := strings.Fields(next.Scope)
		fmt.Fprintf(stdout, "\n--- authorization request %s (%d waiting)\n", next.ID, len(waiting))
		fmt.Fprintf(stdout, "  client       %s (%s)\n", next.ClientName, next.ClientID)
		fmt.Fprintf(stdout, "  redirects to %s\n", next.RedirectHost())
		fmt.Fprintf(stdout, "  asks for     %s\n", next.Scope)
		fmt.Fprintf(stdout, "  expires      %s (in %s)\n", next.Expires.UTC().Format("15:04:05 UTC"), next.Expires.Sub(o.now()).Round(time.Second))
		narrow := len(scopes) > 1
		if narrow {
			fmt.Fprintf(stdout, "Grant it? y = all it asks for, r = only %s, n = refuse, s = skip, q = quit: ", scopes[0])
		} else {
			fmt.Fprint(stdout, "Grant it? y = yes, n = refuse, s = skip, q = quit: ")
		}
		var line string
		select {
		case l, ok := <-in:
			if !ok {
				fmt.Fprintln(stdout, "\nbye")
				return nil
			}
			line = l
		case <-ctx.Done():
			return nil
		}
		grant := ""
		switch {
		case line == "y":
			grant = next.Scope
		case line == "r" && narrow:
			grant = scopes[0]
		case line == "n":
			if err := authserver.Deny(st, o.now(), next.ID); err != nil {
				fmt.Fprintf(stdout, "not recorded: %v\n", err)
			} else {
				fmt.Fprintln(stdout, "refused: the authorize page sends the client back with access_denied.")
			}
			continue
		case line == "q":
			fmt.Fprintln(stdout, "bye")
			return nil
		default:
			fmt.Fprintln(stdout, "skipped.")
			continue
		}
		code, err := authserver.Approve(st, o.now(), next.ID, grant, key, by, rand.Reader)
		if err != nil {
			fmt.Fprintf(stdout, "not granted: %v\n", err)
			continue
		}
		fmt.Fprintf(stdout, "granted %s. One-time code for this request: %s\n", grant, code)
		fmt.Fprintln(stdout, "Type it on the authorize page within 5 minutes; it works once, for this request only.")
	}
}
