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

// SetChangeLog turns the writer's change log (anchors_log.go) on or off and
// returns the function that puts it back: off, a deep page after a write
// walks to its anchors.
func SetChangeLog(on bool) (restore func()) {
	old := noChangeLog
	noChangeLog = !on
	return func() { noChangeLog = old }
}

// AnchorWork is how many anchor sets the change log moved to a later
// generation, and how many anchors walks found, since the lake opened.
func (l *Lake) AnchorWork() (moves, steps int64) {
	return l.anchors.moves.Load(), l.anchors.steps.Load()
}
