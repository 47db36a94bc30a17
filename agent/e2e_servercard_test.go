package agent_test

import (
	"encoding/json"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"

	"wicket/agent"
	"wicket/agent/front"
	"wicket/internal/buildinfo"
)

// TestHTTPServerCard: the card is served without a token, names wicket as
// the registry does and the endpoint a client connects to, says a bearer
// credential is needed, and keeps the Host check and the method rule.
func TestHTTPServerCard(t *testing.T) {
	proj := newProject(t)
	token := addCaller(t, proj, "alice", agent.ProfileOffline)
	h := startHTTP(t, nil, proj)
	cardURL := strings.TrimSuffix(h.url, front.MCPPath) + front.ServerCardPath
	get := func(method, host string) (*http.Response, []byte) {
		t.Helper()
		req, _ := http.NewRequest(method, cardURL, nil)
		if host != "" {
			req.Host = host
		}
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		body, _ := io.ReadAll(res.Body)
		return res, body
	}
	res, body := get(http.MethodGet, "")
	if res.StatusCode != http.StatusOK || res.Header.Get("Content-Type") != "application/json" {
		t.Fatalf("GET card: %d %s %s", res.StatusCode, res.Header.Get("Content-Type"), body)
	}
	var card struct {
		Name, Title, Description, Version string
		Remotes                           []struct {
			Type, URL                 string
			SupportedProtocolVersions []string
			Headers                   []struct {
				Name                 string
				IsRequired, IsSecret bool
			}
		}
	}
	if err := json.Unmarshal(body, &card); err != nil {
		t.Fatal(err)
	}
	if card.Name != buildinfo.RegistryName || card.Description != buildinfo.Description || card.Version == "" {
		t.Errorf("card identity: %+v", card)
	}
	if len(card.Remotes) != 1 || card.Remotes[0].Type != "streamable-http" || card.Remotes[0].URL != h.url ||
		!slices.Contains(card.Remotes[0].SupportedProtocolVersions, "2026-07-28") {
		t.Fatalf("card remotes: %+v (endpoint %s)", card.Remotes, h.url)
	}
	if hs := card.Remotes[0].Headers; len(hs) != 1 || hs[0].Name != "Authorization" || !hs[0].IsRequired || !hs[0].IsSecret {
		t.Errorf("card headers: %+v", hs)
	}
	if strings.Contains(string(body), token) {
		t.Error("the card shows a caller's token")
	}
	if res, _ := get(http.MethodGet, "evil.example:80"); res.StatusCode != http.StatusForbidden {
		t.Errorf("foreign Host: %d, want 403", res.StatusCode)
	}
	if res, _ := get(http.MethodPost, ""); res.StatusCode != http.StatusMethodNotAllowed || res.Header.Get("Allow") != "GET, HEAD" {
		t.Errorf("POST card: %d, Allow %q", res.StatusCode, res.Header.Get("Allow"))
	}
}
