package ratelimit

// Len is the number of callers remembered.
func (l *Memory) Len() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.callers)
}
