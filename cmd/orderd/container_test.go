package main

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// needDockerEnv, set to 1 (as .ci/run does once it has started dockerd), turns the container
// test's skip, when no engine answers, into a failure.
const needDockerEnv = "ORDERD_TEST_NEED_DOCKER"

// TestContainerImage builds the Dockerfile's final stage on scratch around a static binary
// built here (BINARY=prebuilt), and runs the image as an operator would, with host networking
// only: import and keys create into a named volume as the image's own non-root user, serve,
// a list with the key, docker stop (the service drains: /readyz turns 503, then it stops and
// exits 0), and version, which reports the version stamped into the binary.
func TestContainerImage(t *testing.T) {
	if testing.Short() {
		t.Skip("container test skipped in -short mode")
	}
	docker := dockerClient(t)
	name := "orderd-test-" + randomHex(t)

	// A static binary, stamped as make build stamps it, alone in the build context.
	context := t.TempDir()
	const stampedVersion, stampedCommit = "v0.0.0-container.test", "0123456789abcdef0123456789abcdef01234567"
	build := exec.Command("go", "build", "-trimpath", "-o", filepath.Join(context, "orderd"),
		"-ldflags", "-X main.version="+stampedVersion+" -X main.commit="+stampedCommit, ".")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	docker.run(t, "build", "-q", "-t", name, "-f", "../../Dockerfile",
		"--build-arg", "BASE_IMAGE=scratch", "--build-arg", "BINARY=prebuilt", context)
	t.Cleanup(func() { docker.output("rmi", "-f", name) })
	if user := docker.run(t, "image", "inspect", "-f", "{{.Config.User}}", name); user != "65532:65532" {
		t.Fatalf("the image runs as %q; want 65532:65532 (non-root)", user)
	}

	docker.run(t, "volume", "create", name)
	t.Cleanup(func() { docker.output("volume", "rm", "-f", name) })
	demo, err := filepath.Abs("../../testdata/demo")
	if err != nil {
		t.Fatal(err)
	}
	// Each command runs as the image's user, with no --user: the volume must take the
	// image's /data and its owner, or the non-root import cannot write the file.
	runImage := func(args ...string) string {
		return docker.run(t, append([]string{"run", "--rm", "--network", "host", "-v", name + ":/data",
			"-v", demo + ":/demo:ro", name}, args...)...)
	}
	runImage("import", "--orders", "/demo/orders.json", "--pets", "/demo/pets.json")
	key := runImage("keys", "create", "--plan", "pro", "--name", "container")

	// serve in the foreground of `docker run`, which passes the container's log through.
	serve := exec.Command(docker.path, "run", "--rm", "--name", name, "--network", "host",
		"-v", name+":/data", name, "serve", "--addr", "127.0.0.1:0", "--shutdown-delay", "2s")
	serve.Env = docker.env
	t.Cleanup(func() { docker.output("rm", "-f", name) })
	base, records := startLogging(t, serve)
	if got := listed(t, base, key); len(got) != 21 || got[2]["status"] != "pending" {
		t.Fatalf("the list from the container: %d orders, order 2 %v; want the 21 demo orders", len(got), got[2])
	}

	// docker stop sends SIGTERM to orderd, PID 1 in the container: it drains, then stops.
	stopped := make(chan error, 1)
	go func() {
		_, err := docker.output("stop", "-t", "30", name)
		stopped <- err
	}()
	awaitRecord(t, records, "draining: readiness 503")
	if status, body := get(t, base+"/readyz"); status != 503 {
		t.Errorf("/readyz after docker stop: %d %s; want 503 while draining", status, body)
	}
	if status, body := request(t, "GET", base, "/v1/store/orders", key); status != 200 {
		t.Errorf("a list after docker stop: %d %s; want it served while draining", status, body)
	}
	if msgs, want := logMessages(records)(t), []string{"shutting down", "stopped"}; !slices.Equal(msgs, want) {
		t.Errorf("after draining, the container logged %q; want %q", msgs, want)
	}
	if err := <-stopped; err != nil {
		t.Fatalf("docker stop: %v", err)
	}
	if err := serve.Wait(); err != nil {
		t.Fatalf("serve after docker stop: %v; want exit 0", err)
	}

	if v := runImage("version"); !strings.HasPrefix(v, "orderd "+stampedVersion+" (commit "+stampedCommit+",") {
		t.Fatalf("version in the image: %q; want the stamped %s and %s", v, stampedVersion, stampedCommit)
	}
}

// awaitRecord reads records until one whose msg is msg, and fails if the log ends first.
func awaitRecord(t *testing.T, records <-chan map[string]any, msg string) {
	t.Helper()
	timeout := time.After(30 * time.Second)
	for {
		select {
		case rec, ok := <-records:
			if !ok {
				t.Fatalf("the log ended before %q", msg)
			}
			if rec["msg"] == msg {
				return
			}
		case <-timeout:
			t.Fatalf("no %q in the log within 30s", msg)
		}
	}
}

// docker is a client of a container engine that builds with BuildKit.
type docker struct {
	path string
	env  []string
}

// run runs the client with args and returns its trimmed stdout; the test fails unless it
// exits 0.
func (d docker) run(t *testing.T, args ...string) string {
	t.Helper()
	cmd := exec.Command(d.path, args...)
	cmd.Env = d.env
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("docker %s: %v\n%s", strings.Join(args, " "), err, stderr.Bytes())
	}
	return strings.TrimSpace(string(out))
}

// dockerClient finds a docker client whose engine answers and builds with BuildKit, which the
// prebuilt build needs: the older builder runs every stage, the build stage's Go image too.
// Docker's own clients since 23.0 build with BuildKit through the buildx plugin; Debian's
// docker.io (20.10) builds with the engine's BuildKit under DOCKER_BUILDKIT=1. Without one,
// the test skips and says why, unless ORDERD_TEST_NEED_DOCKER=1.
func dockerClient(t *testing.T) docker {
	t.Helper()
	var tried []string
	for _, c := range []string{"docker", "/usr/bin/docker"} {
		path, err := exec.LookPath(c)
		if err != nil {
			tried = append(tried, c+": not installed")
			continue
		}
		d := docker{path: path, env: append(os.Environ(), "DOCKER_BUILDKIT=1")}
		engineVersion, err := d.output("version", "--format", "{{.Server.Version}}")
		if err != nil {
			tried = append(tried, path+": no engine answers: "+firstLine(engineVersion, ""))
			continue
		}
		// A build of nothing on scratch: what fails here is the builder itself.
		probe := exec.Command(path, "build", "-q", "-")
		probe.Env, probe.Stdin = d.env, strings.NewReader("FROM scratch\nLABEL orderd-test-probe=1\n")
		out, err := probe.CombinedOutput()
		if err != nil {
			tried = append(tried, path+": cannot build with BuildKit: "+firstLine(string(out), ""))
			continue
		}
		d.output("rmi", strings.TrimSpace(string(out)))
		t.Logf("docker client %s, engine %s", path, engineVersion)
		return d
	}
	why := "no container engine that builds with BuildKit (" + strings.Join(tried, "; ") + ")"
	if os.Getenv(needDockerEnv) == "1" {
		t.Fatal(why + "; " + needDockerEnv + "=1 requires one")
	}
	t.Skip("container test skipped: " + why + "; .ci/run installs docker.io and starts dockerd")
	return docker{}
}

// output runs the client with args and returns its combined, trimmed output.
func (d docker) output(args ...string) (string, error) {
	cmd := exec.Command(d.path, args...)
	cmd.Env = d.env
	out, err := cmd.CombinedOutput()
	return strings.TrimSpace(string(out)), err
}

// randomHex is 8 random hex digits, to name what the test makes in the engine.
func randomHex(t *testing.T) string {
	b := make([]byte, 4)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(b)
}
