package trackio

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/framelake/framelake/format"
	"github.com/framelake/framelake/lake"
)

// MOTClasses are MOT17's class ids (the 8th column of gt.txt), named as
// MOTChallenge's devkit names them; a file's other ids become "class <id>".
var MOTClasses = map[int]string{1: "pedestrian", 2: "person_on_vehicle", 3: "car", 4: "bicycle", 5: "motorbike",
	6: "non_mot_vehicle", 7: "static_person", 8: "distractor", 9: "occluder", 10: "occluder_on_ground",
	11: "occluder_full", 12: "reflection", 13: "crowd"}

// MOT's columns past the box are kept as keyframe attributes, so a file
// reads back as written.
const (
	AttrConf       = "mot_conf"   // 7th column: GT's "consider" flag, or a tracker's score
	AttrVisibility = "visibility" // 9th column, GT only
)

// motRow is one line; it holds no pointer, so the garbage collector does
// not walk a million of them.
type motRow struct {
	frame, id  int
	box        [4]float64
	conf       float64
	class      int
	hasVis     bool
	visibility float64
}

// ReadMOT reads a MOT Challenge gt.txt or tracker result: lines of frame,
// id, bb_left, bb_top, bb_width, bb_height, conf[, class, visibility[, ...]].
// Frames and pixel coordinates in MOT count from 1; the lake counts both from
// 0, so frame f becomes f-1 and (left, top) moves by -1. Each row is a
// keyframe; a frame missing between two rows of an id starts an outside
// span. Rows without a class (or -1) take defaultLabel.
func ReadMOT(r io.Reader, defaultLabel string) ([]lake.Track, error) {
	boxes, err := ReadMOTBoxes(r, defaultLabel)
	if err != nil {
		return nil, err
	}
	tracks := make([]lake.Track, len(boxes))
	for i, t := range boxes {
		tracks[i] = t.Track()
	}
	return tracks, nil
}

// ReadMOTBoxes is ReadMOT as box tracks, which lake.ImportBoxTracks writes
// without a lake.Box a keyframe (a MOT file is a million keyframes).
func ReadMOTBoxes(r io.Reader, defaultLabel string) ([]lake.BoxTrack, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 1024), MaxLineBytes) // the larger of the two bounds a line
	byID := map[int][]motRow{}
	n := 0
	for sc.Scan() {
		n++
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 {
			continue
		}
		row, err := parseMOTLine(line)
		if err != nil {
			return nil, &LineError{Line: n, Msg: err.Error()}
		}
		byID[row.id] = append(byID[row.id], row)
	}
	if err := sc.Err(); err != nil {
		if err == bufio.ErrTooLong {
			return nil, &LineError{Line: n + 1, Msg: fmt.Sprintf("longer than %d bytes", MaxLineBytes)}
		}
		return nil, err
	}
	ids := make([]int, 0, len(byID))
	for id := range byID {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	// The tracks are made on every core: filling 900,000 keyframes (most of
	// it the first writes to their fresh memory) was a third of a MOT read.
	tracks, errs := make([]lake.BoxTrack, len(ids)), make([]error, len(ids))
	next := make(chan int, len(ids))
	for i := range ids {
		next <- i
	}
	close(next)
	var wg sync.WaitGroup
	for range min(runtime.GOMAXPROCS(0), len(ids)) {
		wg.Go(func() {
			for i := range next {
				tracks[i], errs[i] = motTrack(ids[i], byID[ids[i]], defaultLabel)
			}
		})
	}
	wg.Wait()
	for _, err := range errs { // the first id's error, as one core found it
		if err != nil {
			return nil, err
		}
	}
	return tracks, nil
}

func parseMOTLine(line []byte) (motRow, error) {
	var num [10]float64 // MOT's 9 columns and one to tell "more" (ignored) from exactly 9
	n := 0
	for rest := line; ; n++ {
		field, tail, more := bytes.Cut(rest, []byte{','})
		if n < len(num) {
			v, err := format.ParseFloat(bytes.TrimSpace(field))
			if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
				return motRow{}, fmt.Errorf("value %d (%q) is not a finite number", n+1, field)
			}
			num[n] = v
		}
		if !more {
			n++
			break
		}
		rest = tail
	}
	if n < 7 {
		return motRow{}, fmt.Errorf("%d values: MOT lines have at least 7 (frame, id, left, top, width, height, conf)", n)
	}
	row := motRow{frame: int(num[0]), id: int(num[1]), box: [4]float64{num[2] - 1, num[3] - 1, num[4], num[5]},
		conf: num[6], class: -1}
	switch {
	case num[0] != math.Trunc(num[0]) || row.frame < 1:
		return row, fmt.Errorf("frame %v: MOT frames are whole numbers from 1", num[0])
	case num[1] != math.Trunc(num[1]) || row.id < 0 || row.id > math.MaxInt32:
		return row, fmt.Errorf("id %v: ids are whole numbers from 0", num[1])
	case num[4] <= 0 || num[5] <= 0:
		return row, fmt.Errorf("box %vx%v: width and height must be positive", num[4], num[5])
	}
	if n > 7 && num[7] != -1 {
		if num[7] != math.Trunc(num[7]) || num[7] < 0 {
			return row, fmt.Errorf("class %v: classes are whole numbers", num[7])
		}
		row.class = int(num[7])
	}
	if n > 8 && num[8] != -1 {
		row.hasVis, row.visibility = true, num[8]
	}
	return row, nil
}

func motTrack(id int, rows []motRow, defaultLabel string) (lake.BoxTrack, error) {
	slices.SortStableFunc(rows, func(a, b motRow) int { return a.frame - b.frame })
	t := lake.BoxTrack{Number: id, Label: motLabel(rows[0].class, defaultLabel), Outside: []int{},
		Keys: make([]lake.BoxKey, 0, len(rows))}
	var raw []byte
	var attrs string // the last keyframe's: most keyframes of a track share theirs, and then the string
	for i, r := range rows {
		if i > 0 && r.frame == rows[i-1].frame {
			return t, fmt.Errorf("id %d is on frame %d twice", id, r.frame)
		}
		if r.class != rows[0].class {
			if l := motLabel(r.class, defaultLabel); l != t.Label {
				return t, fmt.Errorf("id %d is a %s on frame %d and a %s on frame %d: a track keeps one class", id, t.Label,
					rows[0].frame, l, r.frame)
			}
		}
		if i > 0 && r.frame > rows[i-1].frame+1 {
			t.Outside = append(t.Outside, rows[i-1].frame) // lake frame of the first missing MOT frame
		}
		raw = append(raw[:0], `{"`+AttrConf+`":`...)
		raw = strconv.AppendFloat(raw, r.conf, 'g', -1, 64)
		if r.hasVis {
			raw = append(raw, `,"`+AttrVisibility+`":`...)
			raw = strconv.AppendFloat(raw, r.visibility, 'g', -1, 64)
		}
		raw = append(raw, '}')
		if string(raw) != attrs {
			attrs = string(raw)
		}
		t.Keys = append(t.Keys, lake.BoxKey{Frame: r.frame - 1, X: r.box[0], Y: r.box[1], W: r.box[2], H: r.box[3],
			Attributes: attrs})
	}
	return t, nil
}

func motLabel(class int, defaultLabel string) string {
	if class < 0 {
		return defaultLabel
	}
	if name, ok := MOTClasses[class]; ok {
		return name
	}
	return "class " + strconv.Itoa(class)
}

// motClass is the class id of a label: MOT17's, "class <id>" read back, or
// -1 for any other label.
func motClass(label string) int {
	for id, name := range MOTClasses {
		if name == label {
			return id
		}
	}
	if s, ok := strings.CutPrefix(label, "class "); ok {
		if id, err := strconv.Atoi(s); err == nil && id >= 0 {
			return id
		}
	}
	return -1
}

// WriteMOT writes tracks as gt.txt lines: every frame each track is in
// view, interpolated frames included, ordered by id then frame as
// MOTChallenge's files are. Shapes other than boxes are written as their box.
func WriteMOT(w io.Writer, tracks []lake.Track) error {
	bw := bufio.NewWriterSize(w, 256<<10)
	order := make([]int, len(tracks))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return tracks[a].Number - tracks[b].Number })
	var line []byte
	for _, i := range order {
		t := &tracks[i]
		class := motClass(t.Label)
		for frame := t.FirstFrame; frame <= t.LastFrame; frame++ {
			s, ok := t.At(frame)
			if !ok {
				continue
			}
			conf, vis := motAttrs(s.Attributes)
			line = line[:0]
			line = strconv.AppendInt(line, int64(frame+1), 10)
			line = append(line, ',')
			line = strconv.AppendInt(line, int64(t.Number), 10)
			for _, v := range []float64{s.X + 1, s.Y + 1, s.W, s.H, conf, float64(class), vis} {
				line = append(line, ',')
				line = strconv.AppendFloat(line, lake.RoundCoord(v), 'f', -1, 64)
			}
			line = append(line, '\n')
			if _, err := bw.Write(line); err != nil {
				return err
			}
		}
	}
	return bw.Flush()
}

// motAttrs reads back the conf and visibility columns (1 and -1 when absent:
// a drawn box is considered, its visibility unknown).
func motAttrs(raw json.RawMessage) (conf, vis float64) {
	conf, vis = 1, -1
	// What ReadMOT wrote reads without a JSON decoder: a million lines.
	if rest, ok := strings.CutPrefix(string(raw), `{"`+AttrConf+`":`); ok {
		c, rest, _ := strings.Cut(rest, ",")
		if v, err := strconv.ParseFloat(strings.TrimSuffix(c, "}"), 64); err == nil {
			conf = v
			if strings.HasSuffix(c, "}") && rest == "" {
				return conf, vis
			}
			if num, ok := strings.CutPrefix(rest, `"`+AttrVisibility+`":`); ok {
				if v, err := strconv.ParseFloat(strings.TrimSuffix(num, "}"), 64); err == nil && strings.HasSuffix(num, "}") {
					return conf, v
				}
			}
		}
		conf, vis = 1, -1
	}
	var a map[string]any
	if json.Unmarshal(raw, &a) != nil {
		return
	}
	if v, ok := a[AttrConf].(float64); ok {
		conf = v
	}
	if v, ok := a[AttrVisibility].(float64); ok {
		vis = v
	}
	return
}
