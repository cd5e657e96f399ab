package redisstore

import (
	"strconv"
	"strings"
)

// streamID is a position in a stream: its entries' ids, ms-seq, ordered by ms then seq.
type streamID struct{ ms, seq uint64 }

// parseStreamID reads the whole form, ms-seq, in decimal.
func parseStreamID(s string) (id streamID, ok bool) {
	ms, seq, ok := strings.Cut(s, "-")
	if !ok {
		return id, false
	}
	var err1, err2 error
	id.ms, err1 = strconv.ParseUint(ms, 10, 64)
	id.seq, err2 = strconv.ParseUint(seq, 10, 64)
	return id, err1 == nil && err2 == nil
}

func (a streamID) less(b streamID) bool { return a.ms < b.ms || (a.ms == b.ms && a.seq < b.seq) }

func (a streamID) String() string {
	return strconv.FormatUint(a.ms, 10) + "-" + strconv.FormatUint(a.seq, 10)
}
