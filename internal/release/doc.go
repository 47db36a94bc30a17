// Package release holds the checks on what a release publishes beside the
// binary: server.json, the MCP registry's description of wicket, validated
// against the registry's published schema (testdata/registry) and equal in
// its names to the server card's (internal/buildinfo), and the
// GoReleaser configuration that `make release-snapshot` runs, and the MCPB
// bundles made after it (mcpb: each manifest validated against the
// committed MCPB v0.4 schema, testdata/mcpb).
//
// It has no code a build links: only its tests read the files at the root
// of the repository (mcpb and mcpbundle are release tooling, never part of
// the wicket binary). It must never reach the network (the schema is a
// committed copy) and never publish anything.
package release
