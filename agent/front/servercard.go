package front

import (
	"encoding/json"
	"net/http"

	"github.com/mark3labs/mcp-go/mcp"

	"wicket/internal/buildinfo"
)

// ServerCardPath is where `wicket mcp --http` serves its server card
// (SEP-2127): a small public document that names the server and the
// endpoint to connect to, read before any connection. It holds no caller's
// data, so it needs no token; the Host and Origin checks still apply.
const ServerCardPath = "/.well-known/mcp/server-card.json"

// serverCardSchema is the card's published schema.
const serverCardSchema = "https://static.modelcontextprotocol.io/schemas/v1/server-card.schema.json"

// serveCard answers the server card: the registry's name and words
// (internal/buildinfo), this build's version, and the one remote, with the
// protocol versions it speaks and the credential it asks for.
func (h *HTTPServer) serveCard(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		closeAfter(w)
		w.Header().Set("Allow", "GET, HEAD")
		httpError(w, http.StatusMethodNotAllowed, "use GET on "+ServerCardPath)
		return
	}
	remote := map[string]any{
		"type":                      "streamable-http",
		"url":                       h.endpointURL(r),
		"supportedProtocolVersions": mcp.ValidProtocolVersions,
	}
	if h.h.Callers != nil || h.h.OAuth != nil {
		remote["headers"] = []map[string]any{{"name": "Authorization", "isRequired": true, "isSecret": true,
			"description": "Bearer token: a caller's (wicket callers add) or an OAuth access token for this resource"}}
	}
	body, _ := json.Marshal(map[string]any{
		"$schema":     serverCardSchema,
		"name":        buildinfo.RegistryName,
		"title":       buildinfo.Title,
		"description": buildinfo.Description,
		"version":     h.opts.Version,
		"remotes":     []any{remote},
	})
	w.Header().Set("Cache-Control", "max-age=300")
	writeJSON(w, http.StatusOK, body)
}

// endpointURL is the MCP endpoint's URL as a client reaches it: the OAuth
// resource when one is configured, else this request's scheme and (checked)
// Host.
func (h *HTTPServer) endpointURL(r *http.Request) string {
	if h.h.OAuth != nil {
		return h.h.OAuth.audience
	}
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	return scheme + "://" + r.Host + MCPPath
}
