package main

import (
	"bufio"
	"crypto/ed25519"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/urfave/cli/v2"

	"wicket/internal/project"
	"wicket/node/server"
)

// wicket node rotate-operator-key moves the operator key the node's
// journal pinned to the one now in settings/operator.pub. The node must be
// stopped. It is signed by the old key (--old-key), or, when that key is
// lost, confirmed at an interactive terminal by typing the new key's
// fingerprint back; the journal's audit trail records which.

func nodeRotateOperatorKeyCommand() *cli.Command {
	return &cli.Command{
		Name:  "rotate-operator-key",
		Usage: "let the node start with a new settings/operator.pub (signed by the old key, or confirmed at a terminal; the node stopped)",
		Description: "The node pins its operator public key in its journal at its first start and refuses another at every later start. " +
			"After making a new pair (remove settings/operator.key and settings/operator.pub, run `wicket init --operator-key`), " +
			"stop the node and run this: with --old-key FILE (a copy of the old settings/operator.key) the old key signs the change; " +
			"without it, it shows both fingerprints at an interactive terminal and asks you to type the new one. The audit trail records the change.",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "old-key", Usage: "the old operator private key, in a `FILE` of settings/operator.key's form (mode 0600)"},
		},
		Action: func(c *cli.Context) error {
			if c.NArg() > 0 {
				return usagef("node rotate-operator-key takes no arguments, got %q", c.Args().First())
			}
			return runRotateOperatorKey(c.String("project"), c.String("old-key"), c.App.Reader, c.App.Writer)
		},
	}
}

func runRotateOperatorKey(projectFlag, oldKeyPath string, stdin io.Reader, stdout io.Writer) error {
	p, _, err := openProjectAt(projectFlag)
	if err != nil {
		return err
	}
	pub, err := p.OperatorPublic()
	if err != nil {
		return err
	}
	r := server.Rotation{New: pub, Now: time.Now()}
	if oldKeyPath != "" {
		old, err := project.ReadOperatorKeyFile(oldKeyPath)
		if err != nil {
			return err
		}
		r.Sign = func(msg []byte) []byte { return ed25519.Sign(old, msg) }
	} else {
		if !isTerminal(stdin) || !isTerminal(stdout) {
			return errors.New("wicket node rotate-operator-key without --old-key needs an interactive terminal (stdin and stdout) to confirm the new key; a pipe or a script cannot")
		}
		r.Confirm = func(oldPrint, newPrint string) (string, error) {
			fmt.Fprintf(stdout, "pinned operator key   %s\nsettings/operator.pub %s\nType the new key's fingerprint (%s) to pin it: ", oldPrint, newPrint, newPrint)
			line, err := bufio.NewReader(stdin).ReadString('\n')
			if err != nil && line == "" {
				return "", errors.New("not rotated: no answer")
			}
			return line, nil
		}
	}
	old, err := server.RotateOperatorKey(p.JournalPath(), r)
	if err != nil {
		return err
	}
	if old.Equal(pub) {
		fmt.Fprintf(stdout, "the node's journal already pins settings/operator.pub (%s); nothing to rotate\n", server.Fingerprint(pub))
		return nil
	}
	fmt.Fprintf(stdout, "the node's operator key is now %s (was %s); start the node again\n", server.Fingerprint(pub), server.Fingerprint(old))
	return nil
}
