package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/cookiejar"
	"strings"
	"time"

	"github.com/framelake/framelake/client"
)

// teamOfPeople makes the team's annotators people, as a real team is: an
// annotator account each, a member of the project, holding one job of the
// task's frames (jobs of per frames, handed out round-robin), and signed in
// as the web app is (session cookie and CSRF token). Each save then goes
// through the session, membership and job checks a person's does. It needs
// an admin's key; it answers each annotator's client and frames.
func teamOfPeople(ctx context.Context, admin *client.Client, url, pid, taskID string, n, per int) ([]*client.Client, [][]string, error) {
	stamp := time.Now().UTC().Format("150405.000")
	stamp = strings.ReplaceAll(stamp, ".", "")
	names := make([]string, n)
	const password = "load-annotator-pw"
	for a := range n {
		names[a] = fmt.Sprintf("annotator-%s-%02d", stamp, a)
		if _, err := admin.CreateUser(ctx, names[a], password, "annotator"); err != nil {
			return nil, nil, fmt.Errorf("people: %w", err)
		}
		if _, err := admin.PutMember(ctx, pid, names[a], "annotator"); err != nil {
			return nil, nil, fmt.Errorf("people: %w", err)
		}
	}
	jobs, err := admin.CreateLabelJobs(ctx, taskID, client.JobPlan{Size: per, Assignees: names})
	if err != nil {
		return nil, nil, fmt.Errorf("people: %w", err)
	}
	frames := make([][]string, n)
	for _, j := range jobs {
		full, err := admin.LabelJob(ctx, taskID, j.Number)
		if err != nil {
			return nil, nil, fmt.Errorf("people: %w", err)
		}
		for a, name := range names {
			if full.Assignee != nil && *full.Assignee == name {
				for _, f := range full.Frames {
					frames[a] = append(frames[a], f.UniqueName)
				}
			}
		}
	}
	clients := make([]*client.Client, n)
	for a, name := range names {
		if len(frames[a]) == 0 {
			return nil, nil, fmt.Errorf("people: %s holds no job", name)
		}
		if clients[a], err = signIn(ctx, url, name, password); err != nil {
			return nil, nil, err
		}
	}
	return clients, frames, nil
}

// signIn signs a person in as the web app does and answers a client that
// sends their session cookie, and its CSRF token with every request.
func signIn(ctx context.Context, url, name, password string) (*client.Client, error) {
	jar, _ := cookiejar.New(nil) // no options: never fails
	hc := &http.Client{Timeout: 60 * time.Second, Jar: jar}
	body, _ := json.Marshal(map[string]string{"name": name, "password": password})
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, strings.TrimSuffix(url, "/")+"/api/v1/session", bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	res, err := hc.Do(req)
	if err != nil {
		return nil, fmt.Errorf("sign in %s: %w", name, err)
	}
	defer res.Body.Close()
	var sess struct {
		CSRF string `json:"csrfToken"`
	}
	if err := json.NewDecoder(res.Body).Decode(&sess); err != nil || res.StatusCode != http.StatusOK || sess.CSRF == "" {
		return nil, fmt.Errorf("sign in %s: status %d, %v", name, res.StatusCode, err)
	}
	hc.Transport = csrfTransport{token: sess.CSRF, next: &http.Transport{MaxIdleConnsPerHost: 4}}
	return client.New(url, "", "", client.WithHTTPClient(hc)), nil
}

// csrfTransport adds a session's CSRF token to every request.
type csrfTransport struct {
	token string
	next  http.RoundTripper
}

func (t csrfTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("X-CSRF-Token", t.token)
	return t.next.RoundTrip(r)
}
