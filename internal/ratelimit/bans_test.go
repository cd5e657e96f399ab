package ratelimit_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/petstore/orderd/internal/order"
	"github.com/petstore/orderd/internal/ratelimit"
)

// TestBansHoldTheirLimitsAndEnd: a remembered ban answers only for the limits it was decided
// with, until its end; past its bound, a memory takes no more bans until one ends.
func TestBansHoldTheirLimitsAndEnd(t *testing.T) {
	now := time.Date(2026, 11, 23, 10, 0, 30, 0, time.UTC)
	limits := order.Limits{PerMinute: 5, PerDay: 50}
	b := ratelimit.NewBans(2)
	o := ratelimit.Outcome{MinuteCount: 5, DayCount: 7, BannedUntil: now.Add(time.Minute)}
	b.Remember("a", limits, o, now)
	if d, ok := b.Decision("a", limits, now.Add(time.Second)); !ok || !d.Banned || d.Binding.Remaining != 0 ||
		d.RetryAfter != 59*time.Second || d.Day.Remaining != 43 {
		t.Fatalf("during the ban: %+v, %v", d, ok)
	}
	// In the next minute the minute's count is zero, the day's is not.
	if d, _ := b.Decision("a", limits, now.Add(40*time.Second)); d.Minute.Remaining != 5 || d.Day.Remaining != 43 {
		t.Fatalf("in the next minute: %+v", d)
	}
	if _, ok := b.Decision("a", order.Limits{PerMinute: 6, PerDay: 50}, now); ok {
		t.Fatal("a ban answered for other limits")
	}
	if _, ok := b.Decision("a", limits, now.Add(time.Minute)); ok {
		t.Fatal("a ban answered at its end")
	}
	for i := range 3 {
		b.Remember(fmt.Sprint("c", i), limits, o, now)
	}
	if _, ok := b.Decision("c2", limits, now); ok {
		t.Fatal("a memory of 2 took a third ban")
	}
	// Once the two have ended, there is room again.
	later := now.Add(2 * time.Minute)
	b.Remember("d", limits, ratelimit.Outcome{BannedUntil: later.Add(time.Minute)}, later)
	if _, ok := b.Decision("d", limits, later); !ok {
		t.Fatal("no room after the remembered bans ended")
	}
	// No ban, or one already over, is not remembered.
	b.Remember("e", limits, ratelimit.Outcome{MinuteCount: 1}, later)
	b.Remember("f", limits, ratelimit.Outcome{BannedUntil: later}, later)
	for _, c := range []string{"e", "f"} {
		if _, ok := b.Decision(c, limits, later); ok {
			t.Fatalf("%s remembered without a running ban", c)
		}
	}
}
