// Package trackio reads and writes the files that carry video tracks: MOT
// Challenge's gt.txt (docs/tracks.md). It turns lines into lake tracks and
// tracks back into lines; the lake checks the shapes against the video.
package trackio

import "fmt"

// MaxLineBytes bounds one line of a tracks file.
const MaxLineBytes = 4096

// LineError is a problem with one line of a file: which line, and what.
type LineError struct {
	Line int
	Msg  string
}

func (e *LineError) Error() string { return fmt.Sprintf("line %d: %s", e.Line, e.Msg) }
