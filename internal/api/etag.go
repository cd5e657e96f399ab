package api

import (
	"encoding/binary"
	"hash/fnv"
	"strconv"
	"strings"

	"github.com/petstore/orderd/internal/order"
)

// etagOf is a weak tag of the list: weak, because the same list is sent plain or gzipped, and
// both are the same content. It hashes the fields, so it needs no encoding of the list.
func etagOf(orders []order.Order) string {
	h := fnv.New64a()
	var b [8 + 8 + 4 + 8 + 4 + 1]byte
	for i := range orders {
		o := &orders[i]
		binary.LittleEndian.PutUint64(b[0:], uint64(o.ID))
		binary.LittleEndian.PutUint64(b[8:], uint64(o.PetID))
		binary.LittleEndian.PutUint32(b[16:], uint32(o.Quantity))
		binary.LittleEndian.PutUint64(b[20:], uint64(o.ShipDate.Unix()))
		binary.LittleEndian.PutUint32(b[28:], uint32(o.ShipDate.Nanosecond()))
		b[32] = 0
		if o.Complete {
			b[32] = 1
		}
		h.Write(b[:])
		h.Write([]byte(o.Status))
		h.Write([]byte{0})
	}
	return `W/"` + strconv.FormatUint(h.Sum64(), 36) + `"`
}

// etagMatches is the weak comparison of If-None-Match (RFC 9110, 13.1.2): "*" or any listed
// tag whose opaque part equals that of current.
func etagMatches(ifNoneMatch, current string) bool {
	want := strings.TrimPrefix(current, "W/")
	for _, t := range strings.Split(ifNoneMatch, ",") {
		t = strings.TrimSpace(t)
		if t == "*" || strings.TrimPrefix(t, "W/") == want {
			return true
		}
	}
	return false
}
