package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"

	"wicket/deploy"
	"wicket/internal/project"
	"wicket/strategy/ledger"
	"wicket/strategy/research"
)

// ledgerPlans reads the research plans of the project's research ledger
// for the node's deployments (deploy.Plans): the ledger is opened for
// each read, so the node sees verdicts the CLI or the agent record while
// it runs; a project without a ledger (or its key) has no plans. It only
// reads: no key is added, no ledger created.
type ledgerPlans struct{ p project.Project }

func (lp ledgerPlans) PlanOf(ctx context.Context, digest string) (*research.PlanInfo, error) {
	s, err := lp.p.Secrets(os.LookupEnv)
	if err != nil {
		return nil, err
	}
	key, _, ok := s.Lookup(project.KeyLedger)
	if !ok { // no ledger key, so no ledger: nothing was researched here
		return nil, nil
	}
	l, err := ledger.OpenExisting(lp.p.ResearchPath(), ledger.Options{Key: []byte(key)})
	if errors.Is(err, ledger.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer l.Close()
	return research.PlanOf(ctx, l, digest)
}

// planLine writes a deployment preview's plan in one line.
func planLine(p *deploy.PlanStatus) string {
	head := p.Status
	if p.Name != "" {
		head = fmt.Sprintf("%s (%s)", p.Name, p.Status)
	}
	if len(p.Criteria) > 0 {
		head += ": " + strings.Join(p.Criteria, ", ")
	}
	return head + "; " + p.Note
}
