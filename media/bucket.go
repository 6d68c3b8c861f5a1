package media

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"io"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"

	"github.com/framelake/framelake/errs"
)

// bucket is the client of an S3-compatible bucket that holds blobs under
// prefix/ab/cd/<sha256>.<ext> like the local folder. Credentials come from
// the usual AWS environment variables (AWS_ACCESS_KEY_ID, ...) or the shared
// credentials file, never from the URL, so the URL the lake records holds
// no secret.
type bucket struct {
	url    string // canonical media URL, as the lake records it
	name   string
	prefix string // "" or ending in "/"
	c      *minio.Client
}

// CanonicalURL checks a media location and returns it in the form the
// lake records: "" for the local folder (also for "local"), else
// s3://bucket[/prefix][?endpoint=...&region=...] with the query sorted.
func CanonicalURL(raw string) (string, error) {
	if raw == "" || raw == "local" {
		return "", nil
	}
	u, err := url.Parse(raw)
	if err != nil || u.Scheme != "s3" || u.Host == "" {
		return "", errs.Invalid("media", "media location %q is not local nor s3://bucket/prefix?endpoint=...&region=...", raw)
	}
	if u.User != nil {
		return "", errs.Invalid("media", "media location must not hold credentials: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY")
	}
	q := u.Query()
	for k := range q {
		if k != "endpoint" && k != "region" {
			return "", errs.Invalid("media", "media location: unknown parameter %q (endpoint and region are known)", k)
		}
	}
	prefix := strings.Trim(u.Path, "/")
	out := "s3://" + u.Host
	if prefix != "" {
		out += "/" + prefix
	}
	if len(q) > 0 {
		out += "?" + q.Encode()
	}
	return out, nil
}

// openBucket connects to the bucket a canonical s3:// media URL names and
// checks that it exists.
func openBucket(ctx context.Context, raw string) (*bucket, error) {
	canon, err := CanonicalURL(raw)
	if err != nil {
		return nil, err
	}
	u, _ := url.Parse(canon)
	q := u.Query()
	endpoint, secure := q.Get("endpoint"), true
	switch {
	case endpoint == "":
		endpoint = "s3.amazonaws.com"
	case strings.HasPrefix(endpoint, "http://"):
		endpoint, secure = strings.TrimPrefix(endpoint, "http://"), false
	default:
		endpoint = strings.TrimPrefix(endpoint, "https://")
	}
	c, err := minio.New(strings.TrimRight(endpoint, "/"), &minio.Options{Secure: secure, Region: q.Get("region"),
		Creds:        credentials.NewChainCredentials([]credentials.Provider{&credentials.EnvAWS{}, &credentials.FileAWSCredentials{}}),
		BucketLookup: minio.BucketLookupPath, TrailingHeaders: true}) // lets a put carry its SHA-256 (putOptions)
	if err != nil {
		return nil, fmt.Errorf("media bucket %s: %w", canon, err)
	}
	b := &bucket{url: canon, name: u.Host, prefix: strings.TrimPrefix(u.Path, "/"), c: c}
	if b.prefix != "" {
		b.prefix += "/"
	}
	ok, err := c.BucketExists(ctx, b.name)
	if err != nil {
		return nil, fmt.Errorf("media bucket %s: %w", canon, err)
	}
	if !ok {
		return nil, fmt.Errorf("media bucket %s: bucket %q does not exist", canon, b.name)
	}
	return b, nil
}

func (b *bucket) key(hash, ext string) string {
	return b.prefix + hash[0:2] + "/" + hash[2:4] + "/" + hash + "." + ext
}

// put stores the file at path as the blob.
func (b *bucket) put(ctx context.Context, hash, ext, path string) error {
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("media bucket: put %s.%s: %w", hash, ext, err)
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return fmt.Errorf("media bucket: put %s.%s: %w", hash, ext, err)
	}
	return b.putReader(ctx, hash, ext, f, info.Size())
}

// putBytes stores data as the blob.
func (b *bucket) putBytes(ctx context.Context, hash, ext string, data []byte) error {
	return b.putReader(ctx, hash, ext, bytes.NewReader(data), int64(len(data)))
}

// putReader stores size bytes from r as the blob with one PUT, so the
// object exists whole or not at all and the server checks the SHA-256 of
// all of it (minio-go would cut anything over 16 MiB into parts, and the
// whole object's checksum would not be the check).
func (b *bucket) putReader(ctx context.Context, hash, ext string, r io.Reader, size int64) error {
	opts, err := putOptions(hash)
	if err == nil {
		opts.DisableMultipart = true
		_, err = b.c.PutObject(ctx, b.name, b.key(hash, ext), r, size, opts)
	}
	if err != nil {
		return fmt.Errorf("media bucket: put %s.%s: %w", hash, ext, err)
	}
	return nil
}

// putOptions sends the blob's SHA-256, which names it, as the object's
// checksum: the server stores the object only if its bytes have that hash,
// so no object is ever under a wrong name. Signing the payload again
// (what minio-go does over plain HTTP) would hash the same bytes twice more.
func putOptions(hash string) (minio.PutObjectOptions, error) {
	sum, err := hex.DecodeString(hash)
	if err != nil || len(sum) != sha256.Size {
		return minio.PutObjectOptions{}, fmt.Errorf("not a SHA-256: %q", hash)
	}
	return minio.PutObjectOptions{ContentType: "application/octet-stream", DisableContentSha256: true,
		UserMetadata: map[string]string{"x-amz-checksum-sha256": base64.StdEncoding.EncodeToString(sum)}}, nil
}

// open returns a reader of the blob that seeks with ranged requests.
func (b *bucket) open(ctx context.Context, hash, ext string) (io.ReadSeekCloser, error) {
	o, err := b.c.GetObject(ctx, b.name, b.key(hash, ext), minio.GetObjectOptions{})
	if err == nil {
		_, err = o.Stat()
	}
	if err != nil {
		if o != nil {
			o.Close()
		}
		if notFound(err) {
			return nil, errs.NotFoundf("media %s.%s not in store", hash, ext)
		}
		return nil, fmt.Errorf("media bucket: get %s.%s: %w", hash, ext, err)
	}
	return o, nil
}

// get returns a reader of the whole blob from one GET: open's Stat costs a
// HEAD before it, which a reader that goes from start to end needs not.
func (b *bucket) get(ctx context.Context, hash, ext string) (io.ReadCloser, error) {
	rc, _, _, err := minio.Core{Client: b.c}.GetObject(ctx, b.name, b.key(hash, ext), minio.GetObjectOptions{})
	if notFound(err) {
		return nil, errs.NotFoundf("media %s.%s not in store", hash, ext)
	}
	if err != nil {
		return nil, fmt.Errorf("media bucket: get %s.%s: %w", hash, ext, err)
	}
	return rc, nil
}

// stat returns the blob's size, or ok false when it is absent.
func (b *bucket) stat(ctx context.Context, hash, ext string) (size int64, ok bool, err error) {
	info, err := b.c.StatObject(ctx, b.name, b.key(hash, ext), minio.StatObjectOptions{})
	if notFound(err) {
		return 0, false, nil
	}
	if err != nil {
		return 0, false, fmt.Errorf("media bucket: stat %s.%s: %w", hash, ext, err)
	}
	return info.Size, true, nil
}

func (b *bucket) remove(ctx context.Context, hash, ext string) error {
	err := b.c.RemoveObject(ctx, b.name, b.key(hash, ext), minio.RemoveObjectOptions{})
	if err != nil && !notFound(err) {
		return fmt.Errorf("media bucket: remove %s.%s: %w", hash, ext, err)
	}
	return nil
}

// list calls fn for every object under the prefix: blobs by "hash.ext",
// anything else with blob false and its key relative to the prefix.
func (b *bucket) list(ctx context.Context, fn func(name string, size int64, blob bool)) error {
	for o := range b.c.ListObjects(ctx, b.name, minio.ListObjectsOptions{Prefix: b.prefix, Recursive: true}) {
		if o.Err != nil {
			return fmt.Errorf("media bucket: list: %w", o.Err)
		}
		rel := strings.TrimPrefix(o.Key, b.prefix)
		name, ok := objectBlobName(rel)
		if ok {
			fn(name, o.Size, true)
		} else {
			fn(rel, o.Size, false)
		}
	}
	return nil
}

// objectBlobName reads "ab/cd/<sha256>.<ext>" as "<sha256>.<ext>".
func objectBlobName(rel string) (string, bool) {
	parts := strings.Split(rel, "/")
	if len(parts) != 3 {
		return "", false
	}
	hash, ext, ok := strings.Cut(parts[2], ".")
	if !ok || len(hash) != 64 || ext == "" || strings.Contains(ext, ".") ||
		parts[0] != hash[0:2] || parts[1] != hash[2:4] {
		return "", false
	}
	return parts[2], true
}

// presign returns a URL that reads the blob without credentials until ttl passes.
func (b *bucket) presign(ctx context.Context, hash, ext, name string, ttl time.Duration) (string, error) {
	q := url.Values{}
	if name != "" {
		q.Set("response-content-disposition", "inline; filename*=UTF-8''"+url.PathEscape(name))
	}
	u, err := b.c.PresignedGetObject(ctx, b.name, b.key(hash, ext), ttl, q)
	if err != nil {
		return "", fmt.Errorf("media bucket: presign: %w", err)
	}
	return u.String(), nil
}

func notFound(err error) bool {
	if err == nil {
		return false
	}
	code := minio.ToErrorResponse(err).Code
	return code == "NoSuchKey" || code == "NotFound"
}
