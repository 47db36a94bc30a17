// Command mcpbundle is the step of `make release-snapshot` (and of a
// release) after GoReleaser: it writes the MCPB bundles and dist/server.json
// (internal/release/mcpb, BundleDist). It never publishes anything.
package main

import (
	"fmt"
	"os"

	"wicket/internal/release/mcpb"
)

func main() {
	if len(os.Args) != 3 {
		fmt.Fprintln(os.Stderr, "usage: mcpbundle DIST SERVER_JSON (after goreleaser, from the repository's top folder)")
		os.Exit(2)
	}
	if err := mcpb.BundleDist(os.Args[1], os.Args[2], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "mcpbundle:", err)
		os.Exit(1)
	}
}
