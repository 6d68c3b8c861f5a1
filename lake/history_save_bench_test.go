package lake

import (
	"context"
	"database/sql"
	"testing"
)

// benchSave saves a frame of 20 boxes, one moved each time, as the
// workspace does; people's saves (Human) are recorded in the history, a
// model's (Machine) are not, so the two differ by the history's cost.
func benchSave(b *testing.B, src Source) {
	l, seq := historyLake(b)
	ctx := WithActor(context.Background(), Actor{Who: "ana", Via: "web app"})
	boxes := make([]Box, 20)
	for i := range boxes {
		boxes[i] = Box{Label: "car", X: float64(i * 10), Y: 10, W: 8, H: 6}
	}
	i := 0
	for b.Loop() {
		boxes[i%20].X = float64((i * 7) % 500)
		i++
		if err := l.db.Tx(ctx, func(tx *sql.Tx) error {
			return ReplaceBoxes(ctx, tx, seq, src, "prj_1", 0, boxes)
		}); err != nil {
			b.Fatal(err)
		}
	}
}

// go test ./lake -run '^$' -bench 'SaveFrame' -benchtime 200x
func BenchmarkSaveFrameWithHistory(b *testing.B)    { benchSave(b, Human) }
func BenchmarkSaveFrameWithoutHistory(b *testing.B) { benchSave(b, Machine) }
