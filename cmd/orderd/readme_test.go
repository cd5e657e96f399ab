package main

import (
	"bufio"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// readmeStep is one command of the README's curl session and the answer it shows.
type readmeStep struct {
	command        string
	status         string            // "HTTP/1.1 200 OK"; empty when the step shows no answer
	headers        map[string]string // canonical name → value, as shown
	headersOmitted bool              // a line "…" among the headers: the answer may carry others
	body           string            // a JSON object, or a stream's fields (sseField), when shown
}

// The README's curl sessions, in the order they run: the second continues the first.
var readmeSessions = []struct {
	heading    string
	minAnswers int // the answers the test expects it to show, at least
}{
	{"## Version 1: list and cancel", 7},  // 200, 304, 204, 409, 404, 405, 401
	{"## Version 2: a page at a time", 5}, // pages, a refused token, one order, ...
	{"## Order events", 2},                // a page of events, a stream
}

// readmeSession reads the first console block under heading in README.md: each "$ " line is
// a command, and the lines after it are the answer it shows.
func readmeSession(t *testing.T, heading string) []readmeStep {
	t.Helper()
	text, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	s := string(text)
	i := strings.Index(s, "\n"+heading+"\n")
	if i < 0 {
		t.Fatalf("README.md has no %q", heading)
	}
	s = s[i:]
	i = strings.Index(s, "\n```console\n")
	if i < 0 {
		t.Fatalf("no console block under %q in the README", heading)
	}
	s = s[i+len("\n```console\n"):]
	s = s[:strings.Index(s, "\n```")]
	var steps []readmeStep
	inBody := false
	for _, line := range strings.Split(s, "\n") {
		switch {
		case strings.HasPrefix(line, "$ "):
			steps = append(steps, readmeStep{command: strings.TrimPrefix(line, "$ "), headers: map[string]string{}})
			inBody = false
		case len(steps) == 0:
			t.Fatalf("answer before any command: %q", line)
		case strings.HasPrefix(line, "HTTP/"):
			steps[len(steps)-1].status = line
		case line == "":
			inBody = steps[len(steps)-1].status != ""
		case line == "…" && !inBody:
			steps[len(steps)-1].headersOmitted = true
		case inBody:
			if st := &steps[len(steps)-1]; shownBodyLine(line) {
				st.body = strings.TrimPrefix(st.body+"\n"+line, "\n")
			}
		default:
			name, value, ok := strings.Cut(line, ": ")
			if !ok {
				t.Fatalf("not a header: %q", line)
			}
			steps[len(steps)-1].headers[name] = value
		}
	}
	return steps
}

// TestReadmeCurlSessionReplays runs the README's curl session, as written, with bash and
// curl against a fresh instance made as `make run` makes it (the real program, a new --db
// with the demo data imported, a free key), and checks each answer's status, the headers
// shown and an Error object's body. The key is the one line it replaces: the README's is
// an example. An Etag shown stands for $ETAG, which the session takes from the first answer;
// as the session starts on the demo data before any change, it is also the literal shown.
func TestReadmeCurlSessionReplays(t *testing.T) {
	for _, prog := range []string{"bash", "curl"} {
		if _, err := exec.LookPath(prog); err != nil {
			t.Fatalf("the README's session needs %s: %v", prog, err)
		}
	}
	var steps []readmeStep
	for _, session := range readmeSessions {
		shown := readmeSession(t, session.heading)
		answers := 0
		for _, st := range shown {
			if st.status != "" {
				answers++
			}
		}
		if answers < session.minAnswers {
			t.Fatalf("%q shows %d answers; the test expects at least %d", session.heading, answers, session.minAnswers)
		}
		steps = append(steps, shown...)
	}
	db := filepath.Join(t.TempDir(), "orderd.db")
	orderdProcess(t, "import", "--db", db, "--orders", "../../testdata/demo/orders.json", "--pets", "../../testdata/demo/pets.json")
	key := firstLine(orderdProcess(t, "keys", "create", "--plan", "free", "--name", "demo-free", "--db", db))
	base, _ := serveProcess(t, "--db", db)

	var script strings.Builder
	script.WriteString("set -e\n")
	for i, st := range steps {
		cmd := strings.ReplaceAll(st.command, "http://127.0.0.1:8080", base)
		if strings.HasPrefix(cmd, "KEY=") {
			cmd = "KEY=" + key
		}
		fmt.Fprintf(&script, "echo '@@step %d'\n%s\n", i, cmd)
	}
	script.WriteString("echo \"@@etag $ETAG\"\n")
	// curl's progress meter goes to stderr when it is not a terminal: only stdout is the
	// session's answers.
	var stderr strings.Builder
	session := exec.Command("bash", "-c", script.String())
	session.Stderr = &stderr
	out, err := session.Output()
	if err != nil {
		t.Fatalf("the session failed: %v\n%s%s", err, out, stderr.String())
	}
	got := map[int]string{}
	etag, step := "", -1
	sc := bufio.NewScanner(strings.NewReader(string(out)))
	for sc.Scan() {
		line := strings.TrimSuffix(sc.Text(), "\r")
		if _, err := fmt.Sscanf(line, "@@step %d", &step); err == nil {
			continue
		}
		if v, ok := strings.CutPrefix(line, "@@etag "); ok {
			etag = v
			continue
		}
		got[step] += line + "\n"
	}
	if !regexp.MustCompile(`^W/"[^"]+"$`).MatchString(etag) {
		t.Fatalf("ETAG is %q after the session; want the list's weak ETag", etag)
	}
	for i, st := range steps {
		if st.status == "" {
			continue
		}
		answer := got[i]
		head, body, _ := strings.Cut(answer, "\n\n")
		lines := strings.Split(head, "\n")
		if lines[0] != st.status {
			t.Errorf("$ %s\nanswered %q, the README shows %q\n%s", st.command, lines[0], st.status, answer)
			continue
		}
		headers := map[string]string{}
		for _, l := range lines[1:] {
			if name, value, ok := strings.Cut(l, ": "); ok {
				headers[strings.ToLower(name)] = value
			}
		}
		for name := range headers {
			if _, shown := st.headers[http.CanonicalHeaderKey(name)]; !shown && !st.headersOmitted {
				t.Errorf("$ %s\nanswered header %s, which the README neither shows nor marks as left out (…)", st.command, name)
			}
		}
		for name, want := range st.headers {
			if strings.EqualFold(name, "Etag") && want != etag {
				t.Errorf("$ %s\nEtag: the README shows %s, the demo data's is %s", st.command, want, etag)
			}
			if v, ok := headers[strings.ToLower(name)]; !ok || !shownMatches(want, v) {
				t.Errorf("$ %s\n%s: %q, the README shows %q\n%s", st.command, name, v, want, answer)
			}
		}
		var bodyShown []string // as the README shows a body: its object, or a stream's fields
		for _, l := range strings.Split(body, "\n") {
			if shownBodyLine(l) {
				bodyShown = append(bodyShown, l)
			}
		}
		if got := strings.Join(bodyShown, "\n"); st.body != "" && !shownMatches(st.body, got) {
			t.Errorf("$ %s\nbody %q, the README shows %q", st.command, got, st.body)
		}
	}
}

// shownBodyLine reports whether a line of a body is one the README's answers are checked by:
// a JSON object on one line, or a field of a server-sent event.
func shownBodyLine(line string) bool {
	for _, prefix := range []string{"{", "[", "retry: ", "id: ", "event: ", "data: "} {
		if strings.HasPrefix(line, prefix) {
			return true
		}
	}
	return false
}

// shownMatches reports whether got is what the README shows: the same text, where each "…"
// in shown stands for any run of characters (a page token, the fields of an order left out).
func shownMatches(shown, got string) bool {
	parts := strings.Split(shown, "…")
	if len(parts) == 1 {
		return shown == got
	}
	first, last := parts[0], parts[len(parts)-1]
	if !strings.HasPrefix(got, first) || !strings.HasSuffix(got[len(first):], last) {
		return false
	}
	got = got[len(first) : len(got)-len(last)]
	for _, p := range parts[1 : len(parts)-1] {
		i := strings.Index(got, p)
		if i < 0 {
			return false
		}
		got = got[i+len(p):]
	}
	return true
}
