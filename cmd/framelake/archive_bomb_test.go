package main_test

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"compress/flate"
	"context"
	"encoding/binary"
	"hash/crc32"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/framelake/framelake/client"
	"github.com/framelake/framelake/internal/testmedia"
)

// zeroDeflate is a raw deflate stream of mib MiB of zeros, made without
// compressing them: one MiB compressed and flushed (byte-aligned, its
// back-references within itself) repeated, then an empty final block.
func zeroDeflate(prefix []byte, mib int) []byte {
	var chunk, first bytes.Buffer
	fw, _ := flate.NewWriter(&chunk, flate.BestCompression)
	fw.Write(make([]byte, 1<<20))
	fw.Flush()
	if len(prefix) > 0 {
		pw, _ := flate.NewWriter(&first, flate.BestCompression)
		pw.Write(prefix)
		pw.Flush()
	}
	out := append(first.Bytes(), bytes.Repeat(chunk.Bytes(), mib)...)
	return append(out, 0x03, 0x00) // BFINAL, fixed Huffman, end of block
}

// zerosCRC is the CRC-32 of prefix and mib MiB of zeros after it.
func zerosCRC(prefix []byte, mib int) uint32 {
	crc, zeros := crc32.ChecksumIEEE(prefix), make([]byte, 1<<20)
	for range mib {
		crc = crc32.Update(crc, crc32.IEEETable, zeros)
	}
	return crc
}

// zipBomb is the bomb: a zip of about 4 MB holding a real JPEG and
// bomb.jpg, 4 GiB of zeros, with honest sizes and checksum.
func zipBomb(t *testing.T) []byte {
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	w, _ := zw.Create("images/ok.jpg")
	w.Write(testmedia.JPEG(64, 48, 1))
	const mib = 4 << 10
	body := zeroDeflate(nil, mib)
	w, err := zw.CreateRaw(&zip.FileHeader{Name: "images/bomb.jpg", Method: zip.Deflate, CRC32: zerosCRC(nil, mib),
		CompressedSize64: uint64(len(body)), UncompressedSize64: mib << 20})
	if err != nil {
		t.Fatal(err)
	}
	w.Write(body)
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// tarGzBomb is the same as a tar.gz: bomb.jpg's header, then 4 GiB of
// zeros (which end the tar too).
func tarGzBomb(t *testing.T) []byte {
	var hdr bytes.Buffer
	tw := tar.NewWriter(&hdr)
	if err := tw.WriteHeader(&tar.Header{Name: "images/bomb.jpg", Mode: 0o644, Size: 4 << 30, Typeflag: tar.TypeReg}); err != nil {
		t.Fatal(err)
	}
	const mib = 4<<10 + 1
	out := []byte{0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 0xff}
	out = append(out, zeroDeflate(hdr.Bytes(), mib)...)
	out = binary.LittleEndian.AppendUint32(out, zerosCRC(hdr.Bytes(), mib))
	return binary.LittleEndian.AppendUint32(out, uint32(len(hdr.Bytes())+mib<<20))
}

// TestArchiveBombRefused sends the zip bomb (4 GiB of zeros named
// bomb.jpg, about 4 MB) and its tar.gz twin to POST /api/v1/lake/imports of
// the real binary: each is refused at once with a 400 naming the entry and
// its compression, no job is queued, nothing stays in imports/, no file is
// in the lake, and the server's peak RSS stays far below the bomb.
func TestArchiveBombRefused(t *testing.T) {
	data := t.TempDir()
	srv := startServer(t, data)
	key, secret := writeKey(t, data)
	for name, body := range map[string][]byte{"zip": zipBomb(t), "tar.gz": tarGzBomb(t)} {
		t.Run(name, func(t *testing.T) {
			req, _ := http.NewRequest("POST", srv.base+"/api/v1/lake/imports?collection=bomb&name=bomb."+name, bytes.NewReader(body))
			req.SetBasicAuth(key, secret)
			req.Header.Set("Content-Type", "application/octet-stream")
			start := time.Now()
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			msg, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			took := time.Since(start)
			t.Logf("%d-byte %s refused in %v: %d %s", len(body), name, took.Round(time.Millisecond), resp.StatusCode, msg)
			if resp.StatusCode != http.StatusBadRequest || !strings.Contains(string(msg), `images/bomb.jpg`) ||
				!strings.Contains(string(msg), "compression allowed") {
				t.Errorf("answer %d %s; want 400 naming images/bomb.jpg and its compression", resp.StatusCode, msg)
			}
			if took > 10*time.Second {
				t.Errorf("refused after %v; want at once", took)
			}
		})
	}
	if left, _ := os.ReadDir(filepath.Join(data, "imports")); len(left) != 0 {
		t.Errorf("%d entries left in imports/", len(left))
	}
	req, _ := http.NewRequest("GET", srv.base+"/api/v1/jobs", nil)
	req.SetBasicAuth(key, secret)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !strings.Contains(string(b), `"jobCount":0`) {
		t.Errorf("GET /api/v1/jobs: %.300s; want no job", b)
	}
	cols, err := client.New(srv.base, key, secret).GetItemListFromDatalake(context.Background(), client.ItemQuery{})
	if err != nil || len(cols) != 0 {
		t.Errorf("collections after the refusals: %+v %v", cols, err)
	}
	if hwm := serverPeakRSS(t, srv.cmd.Process.Pid); hwm > 400<<20 {
		t.Errorf("server peak RSS %d MiB; want under 400", hwm>>20)
	} else {
		t.Logf("server peak RSS %d MiB", hwm>>20)
	}
}

// peakRSS is a process's VmHWM in bytes.
func serverPeakRSS(t *testing.T, pid int) int64 {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if f := strings.Fields(line); len(f) == 3 && f[0] == "VmHWM:" {
			kb, _ := strconv.ParseInt(f[1], 10, 64)
			return kb << 10
		}
	}
	t.Fatal("no VmHWM")
	return 0
}
