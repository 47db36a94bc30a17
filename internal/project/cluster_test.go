package project

import (
	"strings"
	"testing"
)

func TestResearchClusterConfig(t *testing.T) {
	for _, tt := range []struct{ text, want string }{
		{`cluster = "http://h:4222"`, "must be nats:// or tls://"},
		{`cluster = "nats://user:pw@h:4222"`, "has credentials in it"},
		{`cluster = "nats://"`, "must be a URL like nats://host:4222"},
		{`cluster = "nats://h:4222/x"`, "must be just scheme://host:port"},
	} {
		_, err := ParseConfig("wicket.toml", []byte("[research]\n"+tt.text+"\n"))
		if err == nil || !strings.Contains(err.Error(), tt.want) || !strings.Contains(err.Error(), "research.cluster") {
			t.Errorf("%s: err = %v, want mention of %q", tt.text, err, tt.want)
		}
		if err != nil && strings.Contains(err.Error(), "pw") {
			t.Errorf("%s: the error shows the password: %v", tt.text, err)
		}
	}
	for _, ok := range []string{"nats://127.0.0.1:4222", "tls://nats.example.com:4222", "nats://[::1]:4222"} {
		cfg, err := ParseConfig("wicket.toml", []byte("[research]\ncluster = \""+ok+"\"\n"))
		if err != nil || cfg.Research.Cluster != ok {
			t.Errorf("%s: %v, %q", ok, err, cfg.Research.Cluster)
		}
	}
	if cfg, err := ParseConfig("wicket.toml", []byte("[research]\n")); err != nil || cfg.Research.Cluster != "" {
		t.Errorf("no cluster: %v %q", err, cfg.Research.Cluster)
	}

	for _, tt := range []struct{ text, want string }{
		{"cluster = \"nats://h:4222\"\ncluster_ca = \"ca.pem\"", "write it as tls://h:4222"},
		{"cluster_ca = \" ca.pem\"", "is not a file name"},
	} {
		_, err := ParseConfig("wicket.toml", []byte("[research]\n"+tt.text+"\n"))
		if err == nil || !strings.Contains(err.Error(), tt.want) || !strings.Contains(err.Error(), "research.cluster_ca") {
			t.Errorf("%s: err = %v, want mention of %q", tt.text, err, tt.want)
		}
	}
	for _, ok := range []string{"cluster = \"tls://h:4222\"\ncluster_ca = \"settings/nats-ca.pem\"", "cluster_ca = \"/etc/nats/ca.pem\""} {
		if _, err := ParseConfig("wicket.toml", []byte("[research]\n"+ok+"\n")); err != nil {
			t.Errorf("%s: %v", ok, err)
		}
	}
}
