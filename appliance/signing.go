package appliance

import (
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
)

// SigningKeyFile is the data folder's key for signed media links.
const SigningKeyFile = "url-signing.key"

// RotateSigningKey replaces the data folder's URL-signing key with a new
// random one, atomically, so every media link signed before stops working.
// A running server keeps the key it read at start: restart it to apply.
func RotateSigningKey(dataDir string) error {
	if _, err := os.Stat(filepath.Join(dataDir, "framelake.db")); err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("%s is not a framelake data folder (no framelake.db)", dataDir)
		}
		return err
	}
	_, err := newSigningKey(filepath.Join(dataDir, SigningKeyFile))
	return err
}

// newSigningKey writes a new random key to path and returns it.
func newSigningKey(path string) ([]byte, error) {
	key := make([]byte, 32)
	if _, err := io.ReadFull(rand.Reader, key); err != nil {
		return nil, err
	}
	return key, WriteFileAtomic(path, key, 0o600)
}
