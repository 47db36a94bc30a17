package nodetest

import "wicket/node/server"

// Local returns the running node's in-process connection acting as keyID
// (server.Server.Local): the same write path as Client, without HTTP. It
// is bound to the node as it runs now; after Restart ask for another. An
// unknown key id fails the test.
func (s *Server) Local(keyID string) *server.Local {
	s.t.Helper()
	l, err := s.node.Local(keyID)
	if err != nil {
		s.t.Fatalf("nodetest: %v", err)
	}
	return l
}
