package main

import (
	"wicket/internal/project"
	"wicket/node"
)

// The agent key (WICKET_NODE_AGENT_KEY, optional): a node given it takes
// writes signed with it as the agent's and holds them, with the
// deployments that key creates, to [agent.envelope] (node/server/envelope.go);
// wicket mcp signs its writes with it instead of the control key when it
// holds one, so the node knows the agent's writes from a person's.

// agentKey is the project's agent key, "" when none is set.
func agentKey(p *project.Project) (string, error) {
	s, err := loadSecrets(p)
	if err != nil {
		return "", err
	}
	key, _, _ := s.Lookup(project.KeyAgent)
	return key, nil
}

// mcpNodeClient is wicket mcp's node client: it writes with the agent key
// when the project has one, else with the control key.
func mcpNodeClient(addr string, p *project.Project) (*node.Client, error) {
	agent, err := agentKey(p)
	if err != nil || agent == "" {
		if err != nil {
			return nil, err
		}
		return nodeClient(addr, p)
	}
	observe, _, err := nodeKeys(p)
	if err != nil {
		return nil, err
	}
	return node.NewClient(addr, observe, agent, node.AsAgent())
}
