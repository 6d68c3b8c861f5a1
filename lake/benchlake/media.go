package benchlake

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"image"
	"image/color"
	"image/jpeg"
	"os"
	"path/filepath"
)

// mediaBlobs is how many distinct JPEGs a lake with Media shares among its files.
const mediaBlobs = 16

// JPEG returns generated image i: a small gradient JPEG, distinct for each i.
func JPEG(i int) ([]byte, error) {
	img := image.NewRGBA(image.Rect(0, 0, 64, 48))
	for y := 0; y < 48; y++ {
		for x := 0; x < 64; x++ {
			img.Set(x, y, color.RGBA{uint8(x * 4), uint8(y * 5), uint8(i * 37), 255})
		}
	}
	var b bytes.Buffer
	err := jpeg.Encode(&b, img, &jpeg.Options{Quality: 80})
	return b.Bytes(), err
}

// writeMedia stores the shared JPEGs where the lake's store keeps blobs
// (media/ab/cd/<sha256>.jpg) and returns their hashes.
func writeMedia(root string) ([]string, error) {
	var hashes []string
	for i := 0; i < mediaBlobs; i++ {
		b, err := JPEG(i)
		if err != nil {
			return nil, err
		}
		sum := sha256.Sum256(b)
		h := hex.EncodeToString(sum[:])
		dir := filepath.Join(root, h[0:2], h[2:4])
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return nil, err
		}
		if err := os.WriteFile(filepath.Join(dir, h+".jpg"), b, 0o644); err != nil {
			return nil, err
		}
		hashes = append(hashes, h)
	}
	return hashes, nil
}
