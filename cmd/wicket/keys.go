package main

import (
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
