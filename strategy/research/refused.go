package research

import "fmt"

// refusedWarning is the warning for the answers a research cluster
// refused during a run (worker.SweepChunkResult.Refused): answers whose
// signature did not verify, forged by a client of the NATS server that
// lacks the cluster key, or altered on the way. Each chunk's genuine
// answer was used; "" when none was refused.
func refusedWarning(n int) string {
	if n == 0 {
		return ""
	}
	s := "s"
	if n == 1 {
		s = ""
	}
	return fmt.Sprintf("the research cluster refused %d forged or altered chunk answer%s (a signature that does not verify with the cluster key) and used each chunk's genuine answer: a client of the NATS server is not one of yours; restrict who may connect to it", n, s)
}
