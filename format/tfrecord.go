package format

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"strings"
)

// tfWriter writes tf.Example records with the feature keys of the TF Object
// Detection API (create_pascal_tf_record.py) into shards named
// "<split>-NNNNN.tfrecord" (split folder names: train, valid, test) and a
// label_map.pbtxt with ids from 1.
//
// A shard holds at most tfShardRecords records or about tfShardBytes bytes.
// The total shard count is not known while streaming, so names carry no
// "-of-N"; the Object Detection API reads them with a glob such as
// "train-?????.tfrecord". Each split fills its own temp-file shard (frames of
// the splits arrive interleaved) that becomes an archive entry when full.
//
// Beyond the API's keys every example has image/augmented (int64, 1 for an
// augmented frame) and image/derived_from (its source's image/source_id,
// empty otherwise), so one parsing spec reads all records; the API's
// decoders ignore keys they do not ask for.
//
// Without media, image/encoded is left out and the rest is kept.
type tfWriter struct {
	a      *archive
	shards [3]tfShard
	table  *crc32.Table
	head   []byte
	rec    []byte
	boxes  [4][]float32
	labels []int64
	texts  []string
}

type tfShard struct {
	s       *spool
	records int
	index   int
}

const (
	tfShardRecords = 1000
	tfShardBytes   = 256 << 20
)

func newTFWriter(a *archive) (*tfWriter, error) {
	t := &tfWriter{a: a, table: crc32.MakeTable(crc32.Castagnoli)}
	for i := range t.shards {
		s, err := a.spool()
		if err != nil {
			return nil, err
		}
		t.shards[i].s = s
	}
	return t, nil
}

func (t *tfWriter) frame(fr *Frame) error {
	if err := needSize(fr); err != nil {
		return err
	}
	a, file := t.a, mediaFile(fr)
	var img []byte
	if a.media {
		var err error
		if img, err = a.readMedia(fr); err != nil {
			return err
		}
	}
	for i := range t.boxes {
		t.boxes[i] = t.boxes[i][:0]
	}
	t.labels, t.texts = t.labels[:0], t.texts[:0]
	w, h := float64(fr.Width), float64(fr.Height)
	for _, b := range fr.Boxes {
		r, ok := clip(b, fr.Width, fr.Height)
		if !ok {
			continue
		}
		for i, v := range [4]float64{r.x0 / w, r.x1 / w, r.y0 / h, r.y1 / h} {
			t.boxes[i] = append(t.boxes[i], float32(v))
		}
		t.labels = append(t.labels, int64(b.ClassID+1))
		t.texts = append(t.texts, a.ds.Labels[b.ClassID])
	}
	format := mediaExt(fr.Ext)
	if format == "jpg" {
		format = "jpeg"
	}
	b := t.rec[:0]
	b = appendInt64Feature(b, "image/height", int64(fr.Height))
	b = appendInt64Feature(b, "image/width", int64(fr.Width))
	b = appendBytesFeature(b, "image/filename", file)
	b = appendBytesFeature(b, "image/source_id", fr.UniqueName)
	b = appendBytesFeature(b, "image/format", format)
	augmented := int64(0)
	if fr.Augmented {
		augmented = 1
	}
	b = appendInt64Feature(b, "image/augmented", augmented)
	b = appendBytesFeature(b, "image/derived_from", fr.DerivedFrom)
	for i, k := range [4]string{"xmin", "xmax", "ymin", "ymax"} {
		b = appendFloatFeature(b, "image/object/bbox/"+k, t.boxes[i])
	}
	b = appendBytesFeature(b, "image/object/class/text", t.texts...)
	b = appendInt64Feature(b, "image/object/class/label", t.labels...)
	if a.media {
		b = appendBlobHeader(b, "image/encoded", len(img))
	}
	t.rec = b
	return t.write(splitIndex(fr.Split), b, img)
}

// write frames one record, Example{features: body ++ blob}, into the split's
// shard: length, masked CRC32C of the length, data, masked CRC32C of data.
func (t *tfWriter) write(split int, body, blob []byte) error {
	features := len(body) + len(blob)
	head := appendDelim(t.head[:0], pbField1, features)
	t.head = head
	var hdr [12]byte
	binary.LittleEndian.PutUint64(hdr[:8], uint64(len(head)+features))
	binary.LittleEndian.PutUint32(hdr[8:], maskCRC(crc32.Checksum(hdr[:8], t.table)))
	crc := crc32.Update(0, t.table, head)
	crc = crc32.Update(crc, t.table, body)
	crc = crc32.Update(crc, t.table, blob)
	var tail [4]byte
	binary.LittleEndian.PutUint32(tail[:], maskCRC(crc))

	sh := &t.shards[split]
	for _, p := range [][]byte{hdr[:], head, body, blob, tail[:]} {
		if _, err := sh.s.Write(p); err != nil {
			return err
		}
	}
	sh.records++
	if sh.records >= tfShardRecords || sh.s.n >= tfShardBytes {
		return t.flush(split)
	}
	return nil
}

// maskCRC is TensorFlow's masking, so a CRC over data holding CRCs stays
// informative.
func maskCRC(crc uint32) uint32 { return (crc>>15 | crc<<17) + 0xa282ead8 }

// flush turns the split's shard into an archive entry and starts the next.
func (t *tfWriter) flush(split int) error {
	sh := &t.shards[split]
	if sh.records == 0 {
		return nil
	}
	name := fmt.Sprintf("%s-%05d.tfrecord", splitDirs[split], sh.index)
	// Records with media are mostly JPEG bytes; deflate would only cost time.
	if err := t.a.spoolEntry(name, sh.s, !t.a.media); err != nil {
		return err
	}
	sh.index++
	sh.records = 0
	return sh.s.reset()
}

func (t *tfWriter) finish() error {
	for i := range t.shards {
		if err := t.flush(i); err != nil {
			return err
		}
	}
	var m strings.Builder
	for i, l := range t.a.ds.Labels {
		q := strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(l)
		fmt.Fprintf(&m, "item {\n  id: %d\n  name: \"%s\"\n}\n", i+1, q)
	}
	return t.a.z.bytesEntry(t.a.path("label_map.pbtxt"), []byte(m.String()))
}
