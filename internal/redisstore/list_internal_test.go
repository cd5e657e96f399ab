package redisstore

import (
	"context"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/petstore/orderd/internal/order"
	"github.com/petstore/orderd/internal/order/ordertest"
	"github.com/petstore/orderd/internal/redistest"
)

// TestListNeverSeesAChangeHalfDone: orders cancelled while Load reads its chunks are either
// all still pending in the list or all cancelled, never some of each: the View applies the
// events after Load's position, so the list is the orders after the cancels.
func TestListNeverSeesAChangeHalfDone(t *testing.T) {
	s := manyOrders(t, 2000)
	defer setListChunk(100)()
	ctx := context.Background()
	var pending []int64
	for _, o := range ordertest.Many(2000) {
		if o.Status == order.StatusPending {
			pending = append(pending, o.ID)
		}
	}
	rounds := 0
	s.afterChunk = func() {
		if rounds++; rounds == 1 { // after the first chunk of the first read
			for _, id := range pending {
				if _, _, err := s.Cancel(ctx, id); err != nil {
					t.Errorf("Cancel(%d): %v", id, err)
				}
			}
		}
	}
	list, err := ordertest.Viewed(s).List(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if rounds < 2000/100 {
		t.Fatalf("Load read in %d round trips; the test wants it read a chunk at a time", rounds)
	}
	byID := map[int64]order.Status{}
	for _, o := range list {
		byID[o.ID] = o.Status
	}
	if len(list) != 2000 {
		t.Fatalf("%d orders listed; want 2000", len(list))
	}
	stillPending := 0
	for _, id := range pending {
		if byID[id] == order.StatusPending {
			stillPending++
		}
	}
	if stillPending != 0 {
		t.Fatalf("%d of the %d orders cancelled during the list are listed pending: a mix of two versions", stillPending, len(pending))
	}
}

// TestListReadsInChunks: a list of many orders is read a chunk at a time (HSCAN of the
// status hash, then HMGET of the data of its fields), never with one command that reads a
// whole hash: the other requests of every instance would wait behind it (at a million
// orders, about a second). TestLoadHoldsRedisBriefly, tagged "million", measures the
// commands' time at that size.
func TestListReadsInChunks(t *testing.T) {
	const n = 20_000
	s := manyOrders(t, n)
	ctx := context.Background()
	s.rdb.ConfigResetStat(ctx)
	list, err := ordertest.Viewed(s).List(ctx)
	if err != nil || len(list) != n {
		t.Fatalf("List = %d orders, %v; want %d", len(list), err, n)
	}
	stats := s.rdb.Info(ctx, "commandstats").Val()
	const most = 5000 // fields a call may read: a few milliseconds of Redis
	for _, chunked := range []string{"hscan", "hmget"} {
		if calls := commandCalls(stats, chunked); calls < n/most {
			t.Errorf("%d %s calls for a hash of %d fields: more than %d fields a call", calls, strings.ToUpper(chunked), n, most)
		}
	}
	for _, whole := range []string{"hgetall", "hvals", "hkeys"} {
		if calls := commandCalls(stats, whole); calls > 0 {
			t.Errorf("%d calls of %s, which reads a whole hash", calls, strings.ToUpper(whole))
		}
	}
}

// TestLoadGivesOrdersInIDOrderOnceEach: HSCAN reads a hash in the order of its buckets, but
// Load gives the orders in id order, as the View's load wants them, each once.
func TestLoadGivesOrdersInIDOrderOnceEach(t *testing.T) {
	const n = 5000
	s := manyOrders(t, n)
	var ids []int64
	if _, err := s.Load(context.Background(), func(o order.Order) { ids = append(ids, o.ID) }); err != nil {
		t.Fatal(err)
	}
	want := make([]int64, 0, n)
	for _, o := range ordertest.Many(n) {
		want = append(want, o.ID)
	}
	slices.Sort(want)
	if !slices.Equal(ids, want) {
		t.Fatalf("Load gave %d orders, %v...; want the %d ids in order, %v...", len(ids), ids[:min(len(ids), 10)], n, want[:10])
	}
}

// commandCalls is the calls of cmd in INFO commandstats.
func commandCalls(info, cmd string) int {
	for line := range strings.Lines(info) {
		if rest, ok := strings.CutPrefix(line, "cmdstat_"+cmd+":calls="); ok {
			n, _ := strconv.Atoi(rest[:strings.IndexByte(rest, ',')])
			return n
		}
	}
	return 0
}

// manyOrders is a store of n orders, written straight into Redis in the layout (many
// fields per HSET): the import checks each order, which a test of the list
// need not wait for.
func manyOrders(t *testing.T, n int) *Orders {
	t.Helper()
	rdb := redis.NewClient(&redis.Options{Addr: redistest.Start(t).Addr, ReadTimeout: 5 * time.Second})
	t.Cleanup(func() { rdb.Close() })
	s, err := NewOrders(rdb, redistest.Prefix(t), time.Second)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	orders := ordertest.Many(n)
	p := rdb.Pipeline()
	for start := 0; start < n; start += 1000 {
		data, statuses := []any{}, []any{}
		for _, o := range orders[start:min(start+1000, n)] {
			id := strconv.FormatInt(o.ID, 10)
			data = append(data, id, `{"petId":`+strconv.FormatInt(o.PetID, 10)+`,"quantity":`+strconv.Itoa(int(o.Quantity))+
				`,"shipDate":"`+o.ShipDate.Format(time.RFC3339)+`","complete":`+strconv.FormatBool(o.Complete)+`}`)
			statuses = append(statuses, id, string(o.Status))
		}
		p.HSet(ctx, s.k.ordersData, data...)
		p.HSet(ctx, s.k.ordersStatus, statuses...)
	}
	p.Incr(ctx, s.k.ordersVersion[0])
	p.Set(ctx, s.k.ordersVersion[1], newGeneration(), 0)
	if _, err := p.Exec(ctx); err != nil {
		t.Fatal(err)
	}
	return s
}

func setListChunk(n int64) (restore func()) {
	was := listChunk
	listChunk = n
	return func() { listChunk = was }
}
