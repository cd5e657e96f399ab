package inmem

// lru is a list of caller states, most recently seen first, linked through the states
// themselves: a flood of new callers past the cap allocates nothing.
type lru struct {
	head, tail *callerState
	len        int
}

func (l *lru) pushFront(st *callerState) {
	st.prev, st.next = nil, l.head
	if l.head != nil {
		l.head.prev = st
	} else {
		l.tail = st
	}
	l.head = st
	l.len++
}

func (l *lru) remove(st *callerState) {
	if st.prev != nil {
		st.prev.next = st.next
	} else {
		l.head = st.next
	}
	if st.next != nil {
		st.next.prev = st.prev
	} else {
		l.tail = st.prev
	}
	st.prev, st.next = nil, nil
	l.len--
}

func (l *lru) moveToFront(st *callerState) {
	if l.head == st {
		return
	}
	l.remove(st)
	l.pushFront(st)
}

// removeOldest removes and returns the least recently seen state; the list is not empty.
func (l *lru) removeOldest() *callerState {
	st := l.tail
	l.remove(st)
	return st
}
