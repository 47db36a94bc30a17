package agent

import (
	"fmt"
	"testing"
)

// TestModernDiscoverNoLogging: server/discover does not advertise logging
// (served to legacy sessions only), while a legacy initialize still does,
// and the other capabilities are the same in both eras.
func TestModernDiscoverNoLogging(t *testing.T) {
	s := newTestServer(t, ProfileFull, nil, nil)
	msgs := serveLines(t, s,
		`{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`+"\n"+
			`{"jsonrpc":"2.0","id":2,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`+"\n")
	caps := map[float64]map[string]any{}
	for _, m := range msgs {
		res, _ := m["result"].(map[string]any)
		c, _ := res["capabilities"].(map[string]any)
		caps[m["id"].(float64)] = c
	}
	modern, legacy := caps[1], caps[2]
	if modern == nil || legacy == nil {
		t.Fatalf("no capabilities in %v", msgs)
	}
	if _, ok := modern["logging"]; ok {
		t.Errorf("server/discover advertises logging: %v", modern)
	}
	if _, ok := legacy["logging"]; !ok {
		t.Errorf("initialize lost logging: %v", legacy)
	}
	delete(legacy, "logging")
	if a, b := fmt.Sprint(modern), fmt.Sprint(legacy); a != b {
		t.Errorf("the eras' other capabilities differ: discover %s, initialize %s", a, b)
	}
}
