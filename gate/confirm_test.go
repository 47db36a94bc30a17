package gate_test

import (
	"bytes"
	"encoding/json"
	"testing"

	"wicket/gate"
)

func TestConfirmation(t *testing.T) {
	const tok = "3f2b8c1e-9d4a-4e7b-8a6c-0123456789ab"
	tests := []struct {
		name    string
		args    string // a tool call's arguments, as JSON
		wantTok string
		confirm bool
	}{
		{"boolean true and token", `{"confirm": true, "preview_token": "` + tok + `"}`, tok, true},
		{"any non-empty token string confirms; Take judges it", `{"confirm": true, "preview_token": " "}`, " ", true},
		{"string true", `{"confirm": "true", "preview_token": "` + tok + `"}`, tok, false},
		{"string TRUE", `{"confirm": "TRUE", "preview_token": "` + tok + `"}`, tok, false},
		{"number 1", `{"confirm": 1, "preview_token": "` + tok + `"}`, tok, false},
		{"number 1.0", `{"confirm": 1.0, "preview_token": "` + tok + `"}`, tok, false},
		{"yes", `{"confirm": "yes", "preview_token": "` + tok + `"}`, tok, false},
		{"null", `{"confirm": null, "preview_token": "` + tok + `"}`, tok, false},
		{"false", `{"confirm": false, "preview_token": "` + tok + `"}`, tok, false},
		{"array", `{"confirm": [true], "preview_token": "` + tok + `"}`, tok, false},
		{"object", `{"confirm": {"value": true}, "preview_token": "` + tok + `"}`, tok, false},
		{"confirm absent", `{"preview_token": "` + tok + `"}`, tok, false},
		{"Confirm capitalised", `{"Confirm": true, "preview_token": "` + tok + `"}`, tok, false},
		{"token absent", `{"confirm": true}`, "", false},
		{"token empty", `{"confirm": true, "preview_token": ""}`, "", false},
		{"token null", `{"confirm": true, "preview_token": null}`, "", false},
		{"token a number", `{"confirm": true, "preview_token": 12345}`, "", false},
		{"token an array", `{"confirm": true, "preview_token": ["` + tok + `"]}`, "", false},
		{"both absent", `{"symbol": "BTC-USD"}`, "", false},
		{"empty object", `{}`, "", false},
		{"last duplicate key wins", `{"confirm": true, "confirm": false, "preview_token": "` + tok + `"}`, tok, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var args map[string]any
			if err := json.Unmarshal([]byte(tt.args), &args); err != nil {
				t.Fatal(err)
			}
			gotTok, confirmed := gate.Confirmation(args)
			if gotTok != tt.wantTok || confirmed != tt.confirm {
				t.Errorf("Confirmation(%s) = (%q, %v), want (%q, %v)", tt.args, gotTok, confirmed, tt.wantTok, tt.confirm)
			}
		})
	}
	if tok, ok := gate.Confirmation(nil); tok != "" || ok {
		t.Errorf("Confirmation(nil) = (%q, %v), want a preview", tok, ok)
	}
}

// FuzzConfirmation decodes arbitrary JSON the way the MCP layer does and
// checks Confirmation against the rule stated on the raw JSON: confirmed
// exactly when "confirm" is the literal true and "preview_token" a non-empty
// string.
func FuzzConfirmation(f *testing.F) {
	for _, s := range []string{
		`{"confirm": true, "preview_token": "3f2b8c1e-9d4a-4e7b-8a6c-0123456789ab"}`,
		`{"confirm": "true", "preview_token": "x"}`,
		`{"confirm": 1, "preview_token": "x"}`,
		`{"confirm": true, "preview_token": ""}`,
		`{"confirm": true}`,
		`{"confirm": null, "preview_token": null}`,
		`{"confirm": true, "confirm": false, "preview_token": "x"}`,
		`{"confirm": false, "confirm": true, "preview_token": "x"}`,
		`{"confirm":  true , "preview_token": "\u0000"}`,
		`[]`, `null`, `"confirm"`, `{`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var args map[string]any
		if err := json.Unmarshal(data, &args); err != nil {
			return
		}
		tok, confirmed := gate.Confirmation(args)

		var raw map[string]json.RawMessage
		if err := json.Unmarshal(data, &raw); err != nil {
			t.Fatalf("decodes into map[string]any but not into raw messages: %v", err)
		}
		isTrue := bytes.Equal(bytes.TrimSpace(raw["confirm"]), []byte("true"))
		var s string
		isString := raw["preview_token"] != nil && json.Unmarshal(raw["preview_token"], &s) == nil &&
			bytes.HasPrefix(bytes.TrimSpace(raw["preview_token"]), []byte(`"`))
		if want := isTrue && isString && s != ""; confirmed != want {
			t.Fatalf("Confirmation(%s) confirmed = %v, want %v", data, confirmed, want)
		}
		if isString && tok != s || !isString && tok != "" {
			t.Fatalf("Confirmation(%s) token = %q, want %q (a string: %v)", data, tok, s, isString)
		}
	})
}
