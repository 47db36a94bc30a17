package node

// The agent's capital envelope ([agent.envelope.VENUE], docs/node.md
// "Capital envelope"): the node attributes to the agent every write
// signed with the agent key (KeyAgent, which wicket mcp signs its writes
// with when WICKET_NODE_AGENT_KEY is set) and the writes of the
// deployments that key created, and holds their book per venue against
// the envelope.

// KeyAgent is the key id of the agent's writes: a write key like the
// control key, whose writes the node attributes to the agent.
const KeyAgent = "agent"

// EventAgentOrder records that the order with ClientOrderID on Venue is
// the agent's (Note: "agent", or the agent's deployment), so a replay
// rebuilds the agent's book from its fills; ArmingEnvelope audits a
// breach and what the node did.
const (
	EventAgentOrder EventKind    = "agent_order"
	ArmingEnvelope  ArmingAction = "agent_envelope"
)
