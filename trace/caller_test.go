package trace

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
)

// TestCaller: the caller survives a round trip, is omitted when empty,
// and Filter.Caller selects by exact name.
func TestCaller(t *testing.T) {
	e := Entry{TS: time.Date(2026, 5, 14, 9, 0, 0, 0, time.UTC), Session: "s1", Caller: "desk", Seq: 1, Tool: "list_series", Profile: "full", Verdict: OK}
	b, err := json.Marshal(e)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), `"session":"s1","caller":"desk","seq":1`) {
		t.Errorf("line %s", b)
	}
	var back Entry
	if err := json.Unmarshal(b, &back); err != nil || back.Caller != "desk" {
		t.Fatalf("round trip: %+v %v", back, err)
	}
	e.Caller = ""
	if b, _ := json.Marshal(e); strings.Contains(string(b), "caller") {
		t.Errorf("an empty caller is written: %s", b)
	}
	if !(Filter{Caller: "desk"}).Match(back) || (Filter{Caller: "des"}).Match(back) || (Filter{Caller: "desk"}).Match(e) {
		t.Error("Filter.Caller does not select by exact name")
	}
	if s := Summarize([]Entry{back}); len(s.Sessions) != 1 || s.Sessions[0].Caller != "desk" {
		t.Errorf("stats sessions: %+v", s.Sessions)
	}
}
