package buildinfo

// wicket's identity as the MCP registry and the server card publish it:
// server.json at the repository's root carries the same words, and
// internal/release's test holds the two equal.
const (
	// RegistryName is the MCP registry's name for wicket (io.github.<owner>/<name>).
	RegistryName = "io.github.wicket-trading/wicket"
	// Title is the name a client shows.
	Title = "wicket"
	// Description says what wicket is for, in at most 100 characters.
	Description = "Author, research and trade Starlark strategies behind a preview-and-confirm gate and a trace."
)
