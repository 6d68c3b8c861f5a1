package lake

// SetAnchorStep sets how many rows apart page anchors are and returns the
// function that puts the default back: tests page small lakes across many.
func SetAnchorStep(n int) (restore func()) {
	old := anchorStep
	anchorStep = n
	return func() { anchorStep = old }
}

// AnchorSets is how many anchored shapes the lake keeps anchors of, and
// the most anchors one of them has.
func (l *Lake) AnchorSets() (sets, most int) {
	l.anchors.mu.Lock()
	defer l.anchors.mu.Unlock()
	for _, s := range l.anchors.m {
		most = max(most, len(s.keys))
	}
	return len(l.anchors.m), most
}
