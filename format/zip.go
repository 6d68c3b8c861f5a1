package format

import (
	"bufio"
	"compress/flate"
	"encoding/binary"
	"hash"
	"hash/crc32"
	"io"
	"math"
)

// zipWriter writes a zip archive sequentially. archive/zip keeps every entry's
// header in memory until Close (hundreds of bytes per entry, 200,000 entries
// for 100,000 frames with labels); this one spools the central directory
// records to a temp file as entries finish and copies them out at the end, so
// its memory does not grow with the entry count. Zip64 records are added when
// counts, sizes or offsets need them, as archive/zip does.
type zipWriter struct {
	out     *countWriter
	cd      *spool // central directory records
	entries uint64
	fast    *flate.Writer // per-frame text: cheap to Reset
	best    *flate.Writer // aggregates written once
	crc     hash.Hash32
	hdr     []byte
}

const (
	zipStore   = 0
	zipDeflate = 8

	zipFlagDescriptor = 0x8
	zipFlagUTF8       = 0x800

	zipVersion20 = 20
	zipVersion45 = 45 // zip64
	zipCreator   = 3 << 8

	u16max = math.MaxUint16
	u32max = math.MaxUint32

	// Every entry carries the same time, 2000-01-01 00:00, so the same
	// version exports to the same bytes.
	zipDate = (2000-1980)<<9 | 1<<5 | 1
	zipTime = 0
)

type countWriter struct {
	w *bufio.Writer
	n uint64
}

func (c *countWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += uint64(n)
	return n, err
}

func newZipWriter(w io.Writer, cd *spool) *zipWriter {
	return &zipWriter{
		out: &countWriter{w: bufio.NewWriterSize(w, 64<<10)},
		cd:  cd,
		crc: crc32.NewIEEE(),
	}
}

// zipEntry describes one entry for its central directory record.
type zipEntry struct {
	name         string
	method       uint16
	flags        uint16
	crc          uint32
	csize, usize uint64
	offset       uint64
	dir          bool
}

// entry writes one file entry whose content fill produces. compress picks
// Deflate (text) over Store (media, PNG, anything already compressed); fast
// picks the quick deflate level for small per-frame files.
func (z *zipWriter) entry(name string, compress, fast bool, fill func(io.Writer) error) error {
	e := zipEntry{name: name, method: zipStore, flags: zipFlagDescriptor | zipFlagUTF8, offset: z.out.n}
	if compress {
		e.method = zipDeflate
	}
	if err := z.localHeader(&e); err != nil {
		return err
	}
	z.crc.Reset()
	start := z.out.n
	cw := &crcCounter{w: z.out, crc: z.crc}
	if compress {
		fw, err := z.flater(fast)
		if err != nil {
			return err
		}
		fw.Reset(z.out)
		cw.w = fw
		if err := fill(cw); err != nil {
			return err
		}
		if err := fw.Close(); err != nil {
			return err
		}
	} else if err := fill(cw); err != nil {
		return err
	}
	e.crc, e.usize, e.csize = z.crc.Sum32(), cw.n, z.out.n-start
	if err := z.descriptor(&e); err != nil {
		return err
	}
	return z.central(&e)
}

// bytesEntry writes a small in-memory file, deflating it only when that can
// pay for itself.
func (z *zipWriter) bytesEntry(name string, p []byte) error {
	return z.entry(name, len(p) >= 512, true, func(w io.Writer) error {
		_, err := w.Write(p)
		return err
	})
}

// dir writes a directory entry, for folders a reader needs even when empty.
func (z *zipWriter) dir(name string) error {
	e := zipEntry{name: name, flags: zipFlagUTF8, offset: z.out.n, dir: true}
	if err := z.localHeader(&e); err != nil {
		return err
	}
	return z.central(&e)
}

func (z *zipWriter) flater(fast bool) (*flate.Writer, error) {
	var err error
	if fast {
		if z.fast == nil {
			z.fast, err = flate.NewWriter(io.Discard, flate.BestSpeed)
		}
		return z.fast, err
	}
	if z.best == nil {
		z.best, err = flate.NewWriter(io.Discard, flate.DefaultCompression)
	}
	return z.best, err
}

func (z *zipWriter) localHeader(e *zipEntry) error {
	b := z.hdr[:0]
	b = binary.LittleEndian.AppendUint32(b, 0x04034b50)
	b = binary.LittleEndian.AppendUint16(b, zipVersion20)
	b = binary.LittleEndian.AppendUint16(b, e.flags)
	b = binary.LittleEndian.AppendUint16(b, e.method)
	b = binary.LittleEndian.AppendUint16(b, zipTime)
	b = binary.LittleEndian.AppendUint16(b, zipDate)
	b = append(b, make([]byte, 12)...) // crc and sizes: in the descriptor
	b = binary.LittleEndian.AppendUint16(b, uint16(len(e.name)))
	b = binary.LittleEndian.AppendUint16(b, 0)
	b = append(b, e.name...)
	z.hdr = b
	_, err := z.out.Write(b)
	return err
}

func (z *zipWriter) descriptor(e *zipEntry) error {
	b := z.hdr[:0]
	b = binary.LittleEndian.AppendUint32(b, 0x08074b50)
	b = binary.LittleEndian.AppendUint32(b, e.crc)
	if e.csize >= u32max || e.usize >= u32max {
		b = binary.LittleEndian.AppendUint64(b, e.csize)
		b = binary.LittleEndian.AppendUint64(b, e.usize)
	} else {
		b = binary.LittleEndian.AppendUint32(b, uint32(e.csize))
		b = binary.LittleEndian.AppendUint32(b, uint32(e.usize))
	}
	z.hdr = b
	_, err := z.out.Write(b)
	return err
}

// central appends the entry's central directory record to the spool.
func (z *zipWriter) central(e *zipEntry) error {
	zip64 := e.csize >= u32max || e.usize >= u32max || e.offset >= u32max
	version := uint16(zipVersion20)
	if zip64 {
		version = zipVersion45
	}
	attrs := uint32(0o100644) << 16
	if e.dir {
		attrs = uint32(0o40755)<<16 | 0x10
	}
	b := z.hdr[:0]
	b = binary.LittleEndian.AppendUint32(b, 0x02014b50)
	b = binary.LittleEndian.AppendUint16(b, zipCreator|version)
	b = binary.LittleEndian.AppendUint16(b, version)
	b = binary.LittleEndian.AppendUint16(b, e.flags)
	b = binary.LittleEndian.AppendUint16(b, e.method)
	b = binary.LittleEndian.AppendUint16(b, zipTime)
	b = binary.LittleEndian.AppendUint16(b, zipDate)
	b = binary.LittleEndian.AppendUint32(b, e.crc)
	extra := 0
	if zip64 {
		// All three fields move to the zip64 extra, as archive/zip writes them.
		b = binary.LittleEndian.AppendUint32(b, u32max)
		b = binary.LittleEndian.AppendUint32(b, u32max)
		extra = 28
	} else {
		b = binary.LittleEndian.AppendUint32(b, uint32(e.csize))
		b = binary.LittleEndian.AppendUint32(b, uint32(e.usize))
	}
	b = binary.LittleEndian.AppendUint16(b, uint16(len(e.name)))
	b = binary.LittleEndian.AppendUint16(b, uint16(extra))
	b = binary.LittleEndian.AppendUint16(b, 0) // comment
	b = binary.LittleEndian.AppendUint16(b, 0) // disk
	b = binary.LittleEndian.AppendUint16(b, 0) // internal attributes
	b = binary.LittleEndian.AppendUint32(b, attrs)
	b = binary.LittleEndian.AppendUint32(b, uint32(min(e.offset, u32max)))
	b = append(b, e.name...)
	if zip64 {
		b = binary.LittleEndian.AppendUint16(b, 0x0001)
		b = binary.LittleEndian.AppendUint16(b, 24)
		b = binary.LittleEndian.AppendUint64(b, e.usize)
		b = binary.LittleEndian.AppendUint64(b, e.csize)
		b = binary.LittleEndian.AppendUint64(b, e.offset)
	}
	z.hdr = b
	z.entries++
	_, err := z.cd.Write(b)
	return err
}

// close copies the central directory out and writes the end records.
func (z *zipWriter) close() error {
	start := z.out.n
	if err := z.cd.copyTo(z.out); err != nil {
		return err
	}
	end := z.out.n
	records, size, offset := z.entries, end-start, start
	b := z.hdr[:0]
	if records >= u16max || size >= u32max || offset >= u32max {
		b = binary.LittleEndian.AppendUint32(b, 0x06064b50)
		b = binary.LittleEndian.AppendUint64(b, 44) // size of the rest of this record
		b = binary.LittleEndian.AppendUint16(b, zipCreator|zipVersion45)
		b = binary.LittleEndian.AppendUint16(b, zipVersion45)
		b = binary.LittleEndian.AppendUint32(b, 0)
		b = binary.LittleEndian.AppendUint32(b, 0)
		b = binary.LittleEndian.AppendUint64(b, records)
		b = binary.LittleEndian.AppendUint64(b, records)
		b = binary.LittleEndian.AppendUint64(b, size)
		b = binary.LittleEndian.AppendUint64(b, offset)
		b = binary.LittleEndian.AppendUint32(b, 0x07064b50) // locator
		b = binary.LittleEndian.AppendUint32(b, 0)
		b = binary.LittleEndian.AppendUint64(b, end)
		b = binary.LittleEndian.AppendUint32(b, 1)
		records, size, offset = u16max, u32max, u32max
	}
	b = binary.LittleEndian.AppendUint32(b, 0x06054b50)
	b = binary.LittleEndian.AppendUint16(b, 0)
	b = binary.LittleEndian.AppendUint16(b, 0)
	b = binary.LittleEndian.AppendUint16(b, uint16(records))
	b = binary.LittleEndian.AppendUint16(b, uint16(records))
	b = binary.LittleEndian.AppendUint32(b, uint32(size))
	b = binary.LittleEndian.AppendUint32(b, uint32(offset))
	b = binary.LittleEndian.AppendUint16(b, 0)
	if _, err := z.out.Write(b); err != nil {
		return err
	}
	return z.out.w.Flush()
}

// crcCounter checksums and counts the uncompressed bytes of an entry.
type crcCounter struct {
	w   io.Writer
	crc hash.Hash32
	n   uint64
}

func (c *crcCounter) Write(p []byte) (int, error) {
	c.crc.Write(p)
	c.n += uint64(len(p))
	return c.w.Write(p)
}
