package project

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestAlertsSection(t *testing.T) {
	good := "[alerts]\nwebhook = \"https://hooks.example.test/x\"\ntemplate = \"slack\"\nattempts = 3\n"
	c, err := ParseConfig("wicket.toml", []byte(good))
	if err != nil {
		t.Fatal(err)
	}
	if c.Alerts.Webhook != "https://hooks.example.test/x" || c.Alerts.Template != "slack" || c.Alerts.Attempts != 3 {
		t.Errorf("alerts %+v", c.Alerts)
	}
	for _, bad := range []string{"[alerts]\nwebhook = \"ftp://x\"\n", "[alerts]\nattempts = 50\n", "[alerts]\napprove_url = \"nope\"\n"} {
		if _, err := ParseConfig("wicket.toml", []byte(bad)); err == nil || !strings.Contains(err.Error(), "alerts.") {
			t.Errorf("%q: %v", bad, err)
		}
	}
}

func TestAlertsKeyIsMadeOnceAndPrivate(t *testing.T) {
	p := Project{Root: t.TempDir()}
	k1, made, err := p.AlertsKey()
	if err != nil || !made || len(k1) != 32 {
		t.Fatalf("first: %d bytes, made %v, %v", len(k1), made, err)
	}
	k2, made, err := p.AlertsKey()
	if err != nil || made || string(k1) != string(k2) {
		t.Fatalf("second: made %v, same %v, %v", made, string(k1) == string(k2), err)
	}
	fi, _ := os.Stat(filepath.Join(p.Root, "settings", AlertsKeyName))
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("mode %v", fi.Mode().Perm())
	}
}
