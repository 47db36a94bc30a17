package main

import (
	"fmt"
	"time"

	"github.com/urfave/cli/v2"

	"wicket/internal/project"
	"wicket/node"
	"wicket/strategy/research"
)

// How commands reach the node and the data service: each client is built
// here, with its keys resolved by keys.go.

// dataClient builds the research client for `wicket data serve` at addr,
// with the bearer token WICKET_DATA_TOKEN when one is set (environment,
// then secrets.env); a loopback service needs none. A bad address is a
// usage error; unreadable secrets are not.
func dataClient(addr string, p *project.Project) (*research.Client, error) {
	s, err := loadSecrets(p)
	if err != nil {
		return nil, err
	}
	token, _, _ := s.Lookup(project.KeyData)
	c, err := research.NewClient(addr, research.ClientOptions{Token: token})
	if err != nil {
		return nil, usageError{fmt.Errorf("--addr: %w", err)}
	}
	return c, nil
}

// nodeClient builds a node client with the project's node keys.
func nodeClient(addr string, p *project.Project) (*node.Client, error) {
	observe, control, err := nodeKeys(p)
	if err != nil {
		return nil, err
	}
	return node.NewClient(addr, observe, control)
}

// nodeCallTimeout bounds each request an operator command sends the node.
const nodeCallTimeout = 30 * time.Second

// nodeAddrFlag is --addr of the commands that talk to the project's node
// through armClient.
func nodeAddrFlag() cli.Flag {
	return &cli.StringFlag{Name: "addr", Usage: "the node's HOST:PORT (default: wicket.toml [node] address)"}
}

// armClientAt is the node client of the project's node (or addr, the
// --addr flag), and the project; projectFlag is the --project flag.
func armClientAt(projectFlag, addr string) (*node.Client, project.Project, error) {
	p, cfg, err := openProjectAt(projectFlag)
	if err != nil {
		return nil, p, err
	}
	if addr == "" {
		addr = cfg.Node.Address
	}
	client, err := nodeClient(addr, &p)
	return client, p, err
}
