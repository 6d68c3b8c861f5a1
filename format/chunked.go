package format

// chunked is an append-only list kept in chunks of chunkLen: growing it
// never copies what it holds. A COCO file's million annotations held as one
// growing slice of records with pointers cost seconds of copying (each copy
// under the garbage collector's write barriers) before this.
type chunked[T any] struct {
	chunks [][]T
	n      int
}

const chunkLen = 1 << 12

func (c *chunked[T]) add(v T) {
	if c.n%chunkLen == 0 {
		c.chunks = append(c.chunks, make([]T, 0, chunkLen))
	}
	last := len(c.chunks) - 1
	c.chunks[last] = append(c.chunks[last], v)
	c.n++
}

func (c *chunked[T]) len() int { return c.n }

// at is the i-th element, in place.
func (c *chunked[T]) at(i int) *T { return &c.chunks[i/chunkLen][i%chunkLen] }
