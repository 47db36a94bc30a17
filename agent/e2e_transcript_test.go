package agent_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rogpeppe/go-internal/txtar"

	"wicket/node/nodetest"
)

var update = flag.Bool("update", false, "rewrite the testdata/transcripts golden output")

// Transcript tests replay JSON-RPC exchanges from testdata/transcripts/*.txtar
// against the real binary, over stdio and over Streamable HTTP, and compare
// the responses with the file's "out" section (ids kept, session ids,
// tokens, times and versions normalised). `go test -run Transcript -update`
// rewrites the out sections.
//
// Sections: "flags" (one mcp flag per line; "@node" starts a nodetest
// node and passes --node; "@demo" seeds demo bars and a strategy "mine"),
// "in" (one message per line; a line starting "#async " is sent without
// waiting for its response, "#sleep 200ms" pauses; "#listen " sends a
// 2026-07-28 subscriptions/listen whose stream's notifications are kept,
// sorted, after the answers, and which is ended (never answered) when the
// input is done; "#await TEXT" waits until a kept notification mentions
// TEXT; $NAME in a message is the last value the volatile rule NAME
// masked, raw), "out".
func TestTranscripts(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "transcripts", "*.txtar"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no transcripts: %v", err)
	}
	for _, file := range files {
		t.Run(strings.TrimSuffix(filepath.Base(file), ".txtar"), func(t *testing.T) {
			ar, err := txtar.ParseFile(file)
			if err != nil {
				t.Fatal(err)
			}
			sec := map[string]string{}
			for _, f := range ar.Files {
				sec[f.Name] = string(f.Data)
			}
			var outs []string
			for _, tr := range []string{"stdio", "http"} {
				env, proj, flags := transcriptSetup(t, sec["flags"])
				var got []string
				if tr == "stdio" {
					got = replayStdio(t, env, proj, flags, sec["in"])
				} else {
					got = replayHTTP(t, env, proj, flags, sec["in"])
				}
				outs = append(outs, strings.Join(got, "\n")+"\n")
			}
			if outs[0] != outs[1] {
				t.Errorf("stdio and HTTP answered differently:\n--- stdio\n%s--- http\n%s", outs[0], outs[1])
			}
			if *update {
				for i := range ar.Files {
					if ar.Files[i].Name == "out" {
						ar.Files[i].Data = []byte(outs[0])
					}
				}
				if _, ok := sec["out"]; !ok {
					ar.Files = append(ar.Files, txtar.File{Name: "out", Data: []byte(outs[0])})
				}
				if err := os.WriteFile(file, txtar.Format(ar), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			if outs[0] != sec["out"] {
				t.Errorf("transcript differs (rerun with -update to accept):\n--- got\n%s--- want\n%s", outs[0], sec["out"])
			}
		})
	}
}

func transcriptSetup(t *testing.T, flags string) (env []string, proj string, args []string) {
	proj = newProject(t)
	for _, f := range strings.Fields(flags) {
		switch f {
		case "@node":
			n := nodetest.NewServer(t)
			env = nodeEnv(n)
			args = append(args, "--node", n.Addr)
		case "@demo":
			runWicket(t, nil, "--project", proj, "data", "seed-demo")
			runWicket(t, nil, "--project", proj, "strategy", "new", "mine", "--from", "sma_cross")
		default:
			args = append(args, f)
		}
	}
	return env, proj, args
}

// transcriptLines splits the "in" section into directives and messages.
func transcriptLines(in string) []string {
	var out []string
	for _, l := range strings.Split(in, "\n") {
		if strings.TrimSpace(l) != "" && !strings.HasPrefix(l, "//") {
			out = append(out, l)
		}
	}
	return out
}

// requestID is a message's id when it is a request ("" otherwise; a batch
// is keyed "batch").
func requestID(line string) string {
	if strings.HasPrefix(strings.TrimSpace(line), "[") {
		return "batch"
	}
	var m struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
	}
	if json.Unmarshal([]byte(line), &m) != nil {
		return "garbage"
	}
	if m.Method == "" || len(m.ID) == 0 || string(m.ID) == "null" {
		return ""
	}
	return string(m.ID)
}

// listenNotes are the notifications of the transcript's listen streams,
// kept as they arrive (normalised); await waits for one.
type listenNotes struct {
	mu      sync.Mutex
	got     []string
	arrived chan struct{}
}

func newListenNotes() *listenNotes { return &listenNotes{arrived: make(chan struct{}, 1)} }

func (n *listenNotes) add(l string) {
	n.mu.Lock()
	n.got = append(n.got, normalize(l))
	n.mu.Unlock()
	select {
	case n.arrived <- struct{}{}:
	default:
	}
}

func (n *listenNotes) has(text string) bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	for _, l := range n.got {
		if strings.Contains(l, text) {
			return true
		}
	}
	return false
}

func (n *listenNotes) sorted() []string {
	n.mu.Lock()
	defer n.mu.Unlock()
	out := append([]string(nil), n.got...)
	sort.Strings(out)
	return out
}

// listenID is the subscription a listen stream's notification names in
// its _meta (the listen request's id, as sent), or "".
func listenID(l string) string {
	var m struct {
		Params struct {
			Meta map[string]json.RawMessage `json:"_meta"`
		} `json:"params"`
	}
	if !isNotification(l) || json.Unmarshal([]byte(l), &m) != nil {
		return ""
	}
	return string(m.Params.Meta["io.modelcontextprotocol/subscriptionId"])
}

func replayStdio(t *testing.T, env []string, proj string, flags []string, in string) []string {
	cmd := exec.Command(wicketBin, append([]string{"--project", proj, "mcp"}, flags...)...)
	cmd.Env = append(append(os.Environ(), cleanEnv...), env...)
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	cmd.Stderr = testWriter{t}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	lines := make(chan string, 1000)
	go func() {
		sc := bufio.NewScanner(stdout)
		sc.Buffer(make([]byte, 1<<20), 1<<26)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	var (
		got, async []string
		caps       captured
		notes      = newListenNotes()
		listening  = map[string]bool{} // the open listen requests' ids
	)
	// take files one line read from stdout; it reports whether the line
	// is an answer (not a notification) and its response key.
	take := func(l string) (string, bool) {
		if isNotification(l) {
			if listening[listenID(l)] {
				notes.add(l)
			}
			return "", false
		}
		caps.keep(l)
		return responseKey(l), true
	}
	next := func(wantID string) {
		for {
			select {
			case l, ok := <-lines:
				if !ok {
					t.Fatalf("stdout closed while waiting for id %s", wantID)
				}
				id, answer := take(l)
				if !answer {
					continue
				}
				if id == wantID || ((wantID == "batch" || wantID == "garbage") && (strings.HasPrefix(l, "[") || id == "null")) {
					got = append(got, normalize(l))
					return
				}
				if !listening[id] {
					async = append(async, normalize(l)) // an async call's answer
				}
			case <-time.After(60 * time.Second):
				t.Fatalf("no response for id %s", wantID)
			}
		}
	}
	await := func(text string) {
		deadline := time.After(60 * time.Second)
		for !notes.has(text) {
			select {
			case l, ok := <-lines:
				if !ok {
					t.Fatalf("stdout closed while awaiting %q", text)
				}
				if id, answer := take(l); answer && !listening[id] {
					async = append(async, normalize(l))
				}
			case <-deadline:
				t.Fatalf("no listen notification mentions %q", text)
			}
		}
	}
	for _, l := range transcriptLines(in) {
		if d, ok := strings.CutPrefix(l, "#sleep "); ok {
			dur, _ := time.ParseDuration(d)
			time.Sleep(dur)
			continue
		}
		if text, ok := strings.CutPrefix(l, "#await "); ok {
			await(text)
			continue
		}
		msg, isListen := strings.CutPrefix(l, "#listen ")
		msg, isAsync := strings.CutPrefix(msg, "#async ")
		msg = caps.expand(msg)
		fmt.Fprintln(stdin, msg)
		if isListen {
			listening[requestID(msg)] = true
			continue
		}
		if id := requestID(msg); id != "" && !isAsync && !strings.HasPrefix(id, "\"nowait") {
			next(id)
		}
	}
	for id := range listening {
		fmt.Fprintf(stdin, `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":%s}}`+"\n", id)
	}
	stdin.Close()
	for l := range lines {
		if id, answer := take(l); answer && !listening[id] {
			async = append(async, normalize(l))
		}
	}
	_ = cmd.Wait()
	sort.Strings(async)
	return append(append(got, async...), notes.sorted()...)
}

func replayHTTP(t *testing.T, env []string, proj string, flags []string, in string) []string {
	h := startHTTP(t, env, proj, append([]string{"--no-auth"}, flags...)...)
	var (
		sid    string
		mu     sync.Mutex
		async  []string
		wg     sync.WaitGroup
		got    []string
		caps   captured
		notes  = newListenNotes()
		listen sync.WaitGroup
	)
	ctx, endListens := context.WithCancel(context.Background())
	defer endListens()
	newPost := func(ctx context.Context, msg string) *http.Request {
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, h.url, strings.NewReader(msg))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		modernHeaders(req.Header, msg) // e2e_2026_http_test.go
		mu.Lock()
		if sid != "" {
			req.Header.Set("Mcp-Session-Id", sid)
		}
		mu.Unlock()
		return req
	}
	post := func(msg string) []string {
		res, err := http.DefaultClient.Do(newPost(context.Background(), msg))
		if err != nil {
			t.Errorf("POST: %v", err)
			return nil
		}
		defer res.Body.Close()
		if id := res.Header.Get("Mcp-Session-Id"); id != "" {
			mu.Lock()
			sid = id
			mu.Unlock()
		}
		body, _ := io.ReadAll(res.Body)
		var out []string
		if strings.HasPrefix(res.Header.Get("Content-Type"), "text/event-stream") {
			for _, l := range strings.Split(string(body), "\n") {
				if d, ok := strings.CutPrefix(l, "data: "); ok && !isNotification(d) {
					caps.keep(d)
					out = append(out, normalize(d))
				}
			}
		} else if b := bytes.TrimSpace(body); len(b) > 0 {
			caps.keep(string(b))
			out = append(out, normalize(string(b)))
		}
		return out
	}
	// stream keeps a listen stream's notifications until the input is done.
	stream := func(msg string) {
		defer listen.Done()
		res, err := http.DefaultClient.Do(newPost(ctx, msg))
		if err != nil {
			if ctx.Err() == nil {
				t.Errorf("listen POST: %v", err)
			}
			return
		}
		defer res.Body.Close()
		sc := bufio.NewScanner(res.Body)
		sc.Buffer(make([]byte, 1<<20), 1<<24)
		for sc.Scan() {
			if d, ok := strings.CutPrefix(sc.Text(), "data: "); ok && listenID(d) != "" {
				notes.add(d)
			}
		}
	}
	for _, l := range transcriptLines(in) {
		if d, ok := strings.CutPrefix(l, "#sleep "); ok {
			dur, _ := time.ParseDuration(d)
			time.Sleep(dur)
			continue
		}
		if text, ok := strings.CutPrefix(l, "#await "); ok {
			deadline := time.After(60 * time.Second)
			for !notes.has(text) {
				select {
				case <-notes.arrived:
				case <-deadline:
					t.Fatalf("no listen notification mentions %q", text)
				}
			}
			continue
		}
		if msg, ok := strings.CutPrefix(l, "#listen "); ok {
			listen.Add(1)
			go stream(caps.expand(msg))
			continue
		}
		msg, isAsync := strings.CutPrefix(l, "#async ")
		msg = caps.expand(msg)
		if isAsync || strings.HasPrefix(requestID(msg), "\"nowait") {
			wg.Add(1)
			go func() {
				defer wg.Done()
				r := post(msg)
				mu.Lock()
				async = append(async, r...)
				mu.Unlock()
			}()
			continue
		}
		got = append(got, post(msg)...)
	}
	wg.Wait()
	endListens()
	listen.Wait()
	sort.Strings(async)
	return append(append(got, async...), notes.sorted()...)
}

func isNotification(l string) bool {
	var m struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
	}
	return json.Unmarshal([]byte(l), &m) == nil && m.Method != "" && len(m.ID) == 0
}

func responseKey(l string) string {
	var m struct {
		ID json.RawMessage `json:"id"`
	}
	if json.Unmarshal([]byte(l), &m) != nil {
		return ""
	}
	return string(m.ID)
}

// volatile are what differs run to run, each masked by one rule; a rule
// with a name also keeps the last raw value it masked, for $name in a
// later message (a preview's token, an input_required's requestState).
var volatile = []struct {
	name string
	re   *regexp.Regexp // the value is its first group, or the whole match
	with string
}{
	{"TOKEN", regexp.MustCompile(`"preview_token\\?":\\?"([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})`), ""},
	{"", regexp.MustCompile(`[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}`), "<uuid>"},
	{"STATE", regexp.MustCompile(`"requestState":"([^"]*)"`), `"requestState":"<requestState>"`},
	{"", regexp.MustCompile(`\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)`), "<time>"},
	{"", regexp.MustCompile(`\b\d\d:\d\d:\d\d UTC\b`), "<clock> UTC"},
	{"", regexp.MustCompile(`"version":"[^"]*"`), `"version":"<version>"`},
	{"", regexp.MustCompile(`pv_[A-Za-z0-9_-]+`), "<token>"},
	{"", regexp.MustCompile(`"ms":[0-9.]+`), `"ms":0`},
	{"", regexp.MustCompile(`(seconds\\?"):[0-9.e-]+`), `$1:0`},
	{"", regexp.MustCompile(`(\\?)"transport\\?":\\?"[^"\\]*\\?"`), `$1"transport$1":$1"<transport>$1"`},
	{"", regexp.MustCompile(`127\.0\.0\.1:\d+`), "<addr>"},
}

// captured holds the named rules' last raw values.
type captured struct {
	mu   sync.Mutex
	vals map[string]string
}

// keep records what the named rules match in a raw message.
func (c *captured) keep(raw string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, v := range volatile {
		if v.name == "" {
			continue
		}
		if m := v.re.FindStringSubmatch(raw); m != nil {
			if c.vals == nil {
				c.vals = map[string]string{}
			}
			c.vals[v.name] = m[len(m)-1]
		}
	}
}

// expand puts the kept values in place of $NAME in a message to send.
func (c *captured) expand(msg string) string {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, v := range volatile {
		if val, ok := c.vals[v.name]; ok && v.name != "" {
			msg = strings.ReplaceAll(msg, "$"+v.name, val)
		}
	}
	return msg
}

// normalize rewrites what differs run to run: keys sorted (numbers keep
// their digits), a batch's replies sorted by id (they are answered
// concurrently), and ids, tokens, times and versions replaced.
func normalize(l string) string {
	dec := json.NewDecoder(strings.NewReader(l))
	dec.UseNumber()
	var v any
	if dec.Decode(&v) == nil {
		if elems, ok := v.([]any); ok {
			sort.Slice(elems, func(i, j int) bool { return fmt.Sprint(idOf(elems[i])) < fmt.Sprint(idOf(elems[j])) })
		}
		var b bytes.Buffer
		enc := json.NewEncoder(&b)
		enc.SetEscapeHTML(false)
		if enc.Encode(v) == nil {
			l = strings.TrimSpace(b.String())
		}
	}
	for _, v := range volatile {
		if v.with != "" {
			l = v.re.ReplaceAllString(l, v.with)
		}
	}
	return l
}

func idOf(v any) any {
	if m, ok := v.(map[string]any); ok {
		return m["id"]
	}
	return nil
}
