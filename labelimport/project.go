package labelimport

import (
	"context"
	"maps"
	"slices"

	"github.com/framelake/framelake/annotate"
	"github.com/framelake/framelake/format"
	"github.com/framelake/framelake/lake/shape"
)

// openSessions finds (or creates) the import's project with the labels it
// lacks, declares on them the keypoints the files give (skeletons, by
// label), and opens, or on a re-run resumes, one upload session per split:
// the collection's name, then "-" and the split when there is one. A
// declaration the project's labels refuse stops the import before any file.
func openSessions(ctx context.Context, ann *annotate.Service, opt Options, labels []string,
	skeletons map[string]shape.Skeleton, byPath map[string]format.Item) (*ProjectImport, map[string]*annotate.Session, error) {
	p, created, added, err := ann.ImportProject(ctx, opt.Project, labels)
	if err != nil {
		return nil, nil, err
	}
	if err := ann.DeclareSkeletons(ctx, p.ID, skeletons); err != nil {
		return nil, nil, err
	}
	perSplit := map[string]int{}
	for _, it := range byPath {
		perSplit[it.Split]++
	}
	out := &ProjectImport{ID: p.ID, Name: p.Name, Created: created, Labels: added, Sessions: []SessionImport{}}
	if out.Labels == nil {
		out.Labels = []string{}
	}
	sessions := map[string]*annotate.Session{}
	for _, split := range slices.Sorted(maps.Keys(perSplit)) {
		name := opt.Collection
		if split != "" {
			name += "-" + split
		}
		sess, err := ann.InitializeUpload(ctx, p.ID, name, max(perSplit[split], 1))
		if err != nil {
			return nil, nil, err
		}
		sessions[split] = &sess
		out.Sessions = append(out.Sessions, SessionImport{Split: split, Collection: name, UploadID: sess.ID,
			TaskID: sess.TaskID, Frames: perSplit[split]})
	}
	return out, sessions, nil
}
