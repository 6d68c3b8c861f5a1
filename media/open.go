package media

import "context"

// OpenStore opens the store for a media location in the local folder dir: the
// folder itself for "" or "local", else the bucket an s3:// URL names
// (CanonicalURL), with dir for temp files, journals and staged copies
// (bounded by stageBytes; DefaultStageBytes when not positive). It clears
// the temp files a crash left and picks up its placing journals.
func OpenStore(ctx context.Context, dir, url string, stageBytes int64) (Blobs, error) {
	t, err := openStaging(dir)
	if err != nil {
		return nil, err
	}
	canon, err := CanonicalURL(url)
	if err != nil || canon == "" {
		return &Disk{staging: t}, err
	}
	b, err := openBucket(ctx, canon)
	if err != nil {
		return nil, err
	}
	return newS3(t, b, stageBytes)
}

// OpenView opens the store for reading and for what a tool that holds the data
// folder alone does (check, repair, migrate: Put, Remove): nothing in dir
// is cleared, no journal is taken, and CreateTemp and Write are not for it.
func OpenView(ctx context.Context, dir, url string) (Blobs, error) {
	t := &staging{root: dir, tmp: tmpDir(dir)}
	canon, err := CanonicalURL(url)
	if err != nil || canon == "" {
		return &Disk{staging: t}, err
	}
	b, err := openBucket(ctx, canon)
	if err != nil {
		return nil, err
	}
	return &S3{staging: t, b: b}, nil
}

// The two homes of blobs, each a Blobs.
var (
	_ Blobs = (*Disk)(nil)
	_ Blobs = (*S3)(nil)
)
