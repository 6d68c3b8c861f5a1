package media

import (
	"os"
	"testing"

	"github.com/framelake/framelake/internal/tests3"
)

// TestMain stops the shared S3 server the bucket tests start.
func TestMain(m *testing.M) {
	code := m.Run()
	tests3.StopShared()
	os.Exit(code)
}
