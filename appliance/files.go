package appliance

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"

	"github.com/framelake/framelake/errs"
	"github.com/framelake/framelake/internal/auth"
	"github.com/framelake/framelake/internal/id"
)

// WriteFileAtomic writes data to path through a synced temp file and a rename,
// so readers see the old file or the new one, never half of it.
func WriteFileAtomic(path string, data []byte, perm os.FileMode) error {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	defer os.Remove(tmp) // after a successful rename there is nothing left to remove
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	if err := f.Chmod(perm); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	if err := os.Rename(tmp, path); err != nil {
		return err
	}
	d, err := os.Open(filepath.Dir(path))
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}

// AdminKeyFile is where the first admin key's secret is left for the user.
const AdminKeyFile = "admin-key.json"

// EnsureAdminKey creates an admin key when the database has no key at all,
// writes it to AdminKeyFile in the data folder (mode 0600) and returns that
// file's path; it returns "" when keys already exist. The secret is never logged.
func (a *Appliance) EnsureAdminKey(ctx context.Context) (string, error) {
	n, err := a.Keys.Count(ctx)
	if err != nil || n > 0 {
		return "", err
	}
	// The first admin is a person too: the web app signs in with a name and
	// password (docs/team.md), and the key belongs to them.
	password := id.Token(16)
	if _, err := a.Keys.CreateUser(ctx, "admin", password, auth.Admin); errs.Is(err, errs.AlreadyExists) {
		// A start that died before its key: the password it wrote is lost.
		_, err = a.Keys.UpdateUser(ctx, "admin", auth.UserChange{Password: &password})
		if err != nil {
			return "", err
		}
	} else if err != nil {
		return "", err
	}
	k, secret, err := a.Keys.CreateUserKey(ctx, "admin", "admin (first start)", auth.Admin, 0)
	if err != nil {
		return "", err
	}
	b, _ := json.MarshalIndent(map[string]string{"key": k.Key, "secret": secret, "user": "admin", "password": password}, "", "  ")
	path := filepath.Join(a.cfg.DataDir, AdminKeyFile)
	return path, WriteFileAtomic(path, append(b, '\n'), 0o600)
}
