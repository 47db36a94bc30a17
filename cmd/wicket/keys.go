package main

import (
	"crypto/ed25519"
	"fmt"
	"os"
	"strings"

	"wicket/internal/project"
)

// loadSecrets reads the project's secrets.env (none without a project)
// against the environment, which wins.
func loadSecrets(p *project.Project) (*project.Secrets, error) {
	if p == nil {
		return project.LoadSecrets("", os.LookupEnv)
	}
	return p.Secrets(os.LookupEnv)
}

// nodeKeys resolves the node's observe and control keys once: the
// environment first, then the project's settings/secrets.env, trimmed.
// Missing keys are one error naming both places. The node, wicket mcp and
// wicket trade all take their keys from here.
func nodeKeys(p *project.Project) (observe, control string, err error) {
	s, err := loadSecrets(p)
	if err != nil {
		return "", "", err
	}
	observe, _, okObserve := s.Lookup(project.KeyObserve)
	control, _, okControl := s.Lookup(project.KeyControl)
	if okObserve && okControl {
		return observe, control, nil
	}
	var missing []string
	if !okObserve {
		missing = append(missing, project.KeyObserve)
	}
	if !okControl {
		missing = append(missing, project.KeyControl)
	}
	where := "settings/secrets.env (no project found)"
	if p != nil {
		where = p.SecretsPath()
	}
	return "", "", fmt.Errorf("node keys missing: %s not set in the environment nor in %s; set them in either (`wicket secrets list` shows what is found)",
		strings.Join(missing, " and "), where)
}

// operatorKey is the operator's private key, for `wicket node arm` and
// `wicket approve` only: the environment's WICKET_OPERATOR_KEY, else the
// project's settings/operator.key. wicket mcp never calls it.
func operatorKey(p project.Project) (ed25519.PrivateKey, error) {
	return p.OperatorKey(os.LookupEnv)
}

// refuseOperatorKey keeps the operator key out of the agent's process:
// wicket mcp refuses to start when WICKET_OPERATOR_KEY is set in its
// environment (and drops an empty one, so no child inherits it).
func refuseOperatorKey() error {
	v, ok := os.LookupEnv(project.KeyOperator)
	if !ok {
		return nil
	}
	if err := os.Unsetenv(project.KeyOperator); err != nil {
		return err
	}
	if strings.TrimSpace(v) == "" {
		return nil
	}
	return usagef("%s is set in wicket mcp's environment: the operator key must never reach the agent's process. "+
		"Remove it from the MCP client's configuration (or the shell that starts it); only `wicket node arm` and `wicket approve` read it",
		project.KeyOperator)
}
