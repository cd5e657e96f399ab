package gcpace

import (
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"testing"
	"time"
)

func TestPercent(t *testing.T) {
	const mib = 1 << 20
	for _, c := range []struct {
		live, headroom uint64
		want           int
	}{
		// A small heap: bounded by Go's minimum goal, which scales with GOGC, so the goal
		// is about live + headroom, not minHeap × GOGC/100.
		{1 * mib, 16 * mib, 425},   // goal max(1 × 5.25, 4 × 4.25) = 17 MiB
		{2 * mib, 16 * mib, 450},   // max(2 × 5.5, 4 × 4.5) = 18 MiB
		{8 * mib, 16 * mib, 200},   // 8 × 3 = 24 MiB
		{16 * mib, 16 * mib, 100},  // doubling is the headroom
		{200 * mib, 16 * mib, 100}, // a large heap: Go's default, never less
		{0, 16 * mib, 400},         // no heap measured yet: by the minimum alone
		{3 * mib, 0, goDefault},    // no headroom: Go's default
		{1, 1 << 40, 1 << 20},      // capped
	} {
		if got := Percent(c.live, c.headroom); got != c.want {
			t.Errorf("Percent(%d MiB, %d MiB) = %d, want %d", c.live/mib, c.headroom/mib, got, c.want)
		}
	}
}

// gogc is the GOGC in force, as the runtime reports it.
func gogc(t *testing.T) int {
	t.Helper()
	s := []metrics.Sample{{Name: "/gc/gogc:percent"}}
	metrics.Read(s)
	return int(s[0].Value.Uint64())
}

func liveNow() uint64 {
	s := []metrics.Sample{{Name: liveHeap}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}

// keep is live heap the test controls.
var keep [][]byte

// TestStartFollowsTheLiveHeap: after each collection GOGC is what Percent says for the heap
// that collection found live, as it grows and shrinks; stop gives the old GOGC back.
func TestStartFollowsTheLiveHeap(t *testing.T) {
	old := debug.SetGCPercent(100)
	defer debug.SetGCPercent(old)
	const headroom = 16 << 20
	stop := Start(func(string) string { return "" }, headroom)
	// waitFor runs collections until the pacer, whose finalizer runs after one, has set
	// the GOGC of the live heap now.
	waitFor := func(what string) {
		t.Helper()
		deadline := time.Now().Add(10 * time.Second)
		for {
			runtime.GC()
			want := Percent(liveNow(), headroom)
			if gogc(t) == want {
				t.Logf("%s: live %d KiB, GOGC %d", what, liveNow()>>10, want)
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s: GOGC is %d, want %d for a live heap of %d KiB", what, gogc(t), want, liveNow()>>10)
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	waitFor("small heap")
	if g := gogc(t); g <= 100 {
		t.Fatalf("GOGC %d with a small heap: not paced", g)
	}
	for range 64 {
		keep = append(keep, make([]byte, 1<<20)) // 64 MiB live
	}
	waitFor("64 MiB live")
	if g := gogc(t); g != 100 {
		t.Fatalf("GOGC %d with 64 MiB live, want Go's default", g)
	}
	keep = nil
	waitFor("small heap again")

	debug.SetGCPercent(Percent(0, headroom)) // something to see stop change
	stop()
	if g := gogc(t); g != 100 {
		t.Fatalf("after stop, GOGC is %d, want the 100 it had before Start", g)
	}
	runtime.GC()
	runtime.GC()
	time.Sleep(20 * time.Millisecond)
	if g := gogc(t); g != 100 {
		t.Fatalf("a collection after stop set GOGC to %d", g)
	}
}

// TestOperatorsGOGCWins: with GOGC in the environment, nothing is paced.
func TestOperatorsGOGCWins(t *testing.T) {
	old := debug.SetGCPercent(150)
	defer debug.SetGCPercent(old)
	stop := Start(func(k string) string {
		if k == "GOGC" {
			return "150"
		}
		return ""
	}, 16<<20)
	defer stop()
	for range 3 {
		runtime.GC()
		time.Sleep(5 * time.Millisecond)
	}
	if g := gogc(t); g != 150 {
		t.Fatalf("GOGC is %d, want the operator's 150", g)
	}
}

// TestOnePacerAProcess: a second Start while one runs changes nothing, and its stop does
// not stop the first.
func TestOnePacerAProcess(t *testing.T) {
	old := debug.SetGCPercent(100)
	defer debug.SetGCPercent(old)
	env := func(string) string { return "" }
	stop := Start(env, 16<<20)
	defer stop()
	second := Start(env, 1<<30)
	for range 3 {
		runtime.GC()
		time.Sleep(5 * time.Millisecond)
		if g, want := gogc(t), Percent(liveNow(), 16<<20); g != want {
			t.Fatalf("GOGC %d while a second pacer was started, want the first's %d", g, want)
		}
	}
	second()
	if g := gogc(t); g == 100 {
		t.Fatal("the second pacer's stop stopped the first")
	}
}
