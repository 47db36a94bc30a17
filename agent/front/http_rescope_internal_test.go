package front

import (
	"testing"

	"github.com/google/uuid"

	"wicket/agent"
	"wicket/internal/project"
	"wicket/trace"
)

// TestRescopeOnlyTheSameSubject: a session moves to a token of another
// scope only for the same OAuth subject; a bearer caller of the same name
// and another subject are refused, and the session is left as it was.
// Each move is one trace entry of the session's (issue 46): none for a
// refused move, one for a step-up however many requests carry it.
func TestRescopeOnlyTheSameSubject(t *testing.T) {
	var traced []trace.Entry
	tracer := tracerFunc(func(e trace.Entry) { traced = append(traced, e) })
	h, err := NewHTTP(agent.Options{Profile: agent.ProfileOffline, NewID: uuid.NewString}, agent.Backends{Config: project.Defaults()}, HTTPOptions{Addr: "127.0.0.1:0"})
	if err != nil {
		t.Fatal(err)
	}
	open := func(c Caller) *httpSession {
		srv, err := agent.New(agent.Options{Profile: c.Profile, Deny: c.Deny, Caller: c.Name, NewID: uuid.NewString, Trace: tracer}, agent.Backends{Config: project.Defaults()})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(srv.Close)
		return &httpSession{srv: srv, caller: c.Name, owner: c.owner()}
	}
	read := Caller{Name: "person-7", Profile: agent.ProfileReadOnly, grant: "wicket:read"}
	trade := Caller{Name: "person-7", Profile: agent.ProfileFull, grant: "wicket:trade"}
	other := Caller{Name: "person-8", Profile: agent.ProfileFull, grant: "wicket:trade"}
	bearer := Caller{Name: "person-7", Profile: agent.ProfileReadOnly}

	s := open(read)
	if h.rescope(s, s.owner, other) || s.owner != read.owner() || s.srv.(*agent.Server).Access().Served("submit_order") {
		t.Fatalf("another subject moved the session: owner %q", s.owner)
	}
	if h.rescope(s, s.owner, bearer) || s.owner != read.owner() {
		t.Fatalf("a bearer caller moved an OAuth session: owner %q", s.owner)
	}
	if len(traced) != 0 {
		t.Fatalf("refused moves were traced: %+v", traced)
	}
	before := s.owner
	if !h.rescope(s, s.owner, trade) || s.owner != trade.owner() || !s.srv.(*agent.Server).Access().Served("submit_order") {
		t.Fatalf("the step-up did not move the session: owner %q, submit_order served %v", s.owner, s.srv.(*agent.Server).Access().Served("submit_order"))
	}
	if !h.rescope(s, before, trade) { // a request with the new token that read the old owner
		t.Fatal("a second request of the step-up was refused")
	}
	if len(traced) != 1 || traced[0].Tool != agent.RescopeTool || traced[0].Caller != "person-7" || traced[0].Profile != agent.ProfileFull ||
		string(traced[0].Args) != `{"from":"read-only","scope":"wicket:trade","to":"full"}` {
		t.Fatalf("the step-up's trace: %+v", traced)
	}
	if !h.rescope(s, s.owner, read) || s.srv.(*agent.Server).Access().Served("submit_order") || !s.srv.(*agent.Server).Access().Served("list_series") {
		t.Fatal("a read token again did not narrow the session")
	}

	b := open(bearer)
	if h.rescope(b, b.owner, trade) || b.owner != bearer.owner() || b.srv.(*agent.Server).Access().Served("submit_order") {
		t.Fatalf("an OAuth token of the same name moved a bearer caller's session: owner %q", b.owner)
	}
}

// tracerFunc is an agent.Tracer.
type tracerFunc func(trace.Entry)

func (f tracerFunc) Write(e trace.Entry) { f(e) }
