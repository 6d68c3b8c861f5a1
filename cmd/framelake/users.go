package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/framelake/framelake/appliance"
	"github.com/framelake/framelake/internal/auth"
)

// cmdUsers manages the people who sign in (docs/team.md). Passwords are
// read from standard input, never from a flag, so they stay out of shell
// history and the process list.
func cmdUsers(ctx context.Context, args []string) error {
	if len(args) == 0 {
		return errors.New("usage: framelake users create|list|passwd|disable|enable|role|key|member|unmember|members [flags] [NAME]")
	}
	fs := flag.NewFlagSet("users "+args[0], flag.ContinueOnError)
	data := fs.String("data", envOr("FRAMELAKE_DATA", "./framelake-data"), "data folder (env FRAMELAKE_DATA)")
	asJSON := fs.Bool("json", false, "print JSON")
	role := fs.String("role", "viewer", "create, role: admin, curator, annotator, reviewer or viewer (write and read: curator and viewer); "+
		"member: annotator or reviewer (default the person's own)")
	project := fs.String("project", "", "member, unmember, members: the project's id")
	want := 1
	if args[0] == "list" || args[0] == "members" {
		want = 0
	}
	if err := parse(fs, args[1:], want); err != nil {
		return fmt.Errorf("usage: framelake users %s --data DIR [--role R] [--project ID] %s: %w", args[0], strings.Repeat("NAME", want), err)
	}
	name := fs.Arg(0)
	switch args[0] {
	case "member", "unmember", "members":
		if *project == "" {
			return fmt.Errorf("framelake users %s needs --project ID", args[0])
		}
		memberRole := ""
		if flagSet(fs, "role") {
			memberRole = *role
		}
		return withAppliance(ctx, *data, func(a *appliance.Appliance) error {
			return cmdMembers(ctx, a, args[0], *project, name, memberRole, *asJSON)
		})
	case "key":
		return withKeys(ctx, *data, func(keys *auth.Keys) error { return userKey(ctx, keys, name, *asJSON) })
	}
	return withKeys(ctx, *data, func(keys *auth.Keys) error {
		var u auth.User
		var err error
		switch args[0] {
		case "list":
			return listUsers(ctx, keys, *asJSON)
		case "create", "passwd":
			password, perr := readPassword(os.Stdin)
			if perr != nil {
				return perr
			}
			if args[0] == "create" {
				u, err = keys.CreateUser(ctx, name, password, auth.Role(*role))
			} else {
				u, err = keys.UpdateUser(ctx, name, auth.UserChange{Password: &password})
			}
		case "disable", "enable":
			off := args[0] == "disable"
			u, err = keys.UpdateUser(ctx, name, auth.UserChange{Disabled: &off})
		case "role":
			r := auth.Role(*role)
			u, err = keys.UpdateUser(ctx, name, auth.UserChange{Role: &r})
		default:
			return fmt.Errorf("unknown users command %q: use create, list, passwd, disable, enable, role, key, member, unmember or members", args[0])
		}
		if err != nil {
			return err
		}
		if *asJSON {
			return json.NewEncoder(os.Stdout).Encode(u)
		}
		fmt.Printf("%s: %s, %s\n", u.Name, u.Role, state(u))
		return nil
	})
}

// flagSet reports whether the command line gave the flag named name.
func flagSet(fs *flag.FlagSet, name string) bool {
	set := false
	fs.Visit(func(f *flag.Flag) { set = set || f.Name == name })
	return set
}

// withAppliance opens the data folder's appliance without its workers, for
// commands that need more than the keys (a project's existence).
func withAppliance(ctx context.Context, data string, fn func(*appliance.Appliance) error) error {
	a, err := appliance.Open(ctx, appliance.Config{DataDir: data, JobWorkers: -1})
	if err != nil {
		return err
	}
	defer a.Close()
	return fn(a)
}

// cmdMembers makes a person an annotator or reviewer of a project, ends it,
// or lists the project's members (docs/team.md "Roles").
func cmdMembers(ctx context.Context, a *appliance.Appliance, cmd, project, name, role string, asJSON bool) error {
	if _, err := a.Annotate.Project(ctx, project); err != nil {
		return err
	}
	switch cmd {
	case "members":
		ms, err := a.Keys.Members(ctx, project)
		if err != nil || asJSON {
			if err == nil {
				err = json.NewEncoder(os.Stdout).Encode(ms)
			}
			return err
		}
		w := tabwriter.NewWriter(os.Stdout, 0, 4, 2, ' ', 0)
		fmt.Fprintln(w, "NAME\tROLE\tSINCE")
		for _, m := range ms {
			fmt.Fprintf(w, "%s\t%s\t%s\n", m.Name, m.Role, m.CreatedAt.Format(time.DateOnly))
		}
		return w.Flush()
	case "unmember":
		if err := a.Keys.RemoveMember(ctx, project, name); err != nil {
			return err
		}
		fmt.Printf("%s: no longer a member of %s\n", name, project)
		return nil
	}
	m, err := a.Keys.SetMember(ctx, project, name, auth.Role(role))
	if err != nil || asJSON {
		if err == nil {
			err = json.NewEncoder(os.Stdout).Encode(m)
		}
		return err
	}
	fmt.Printf("%s: %s of %s\n", m.Name, m.Role, project)
	return nil
}

// userKey makes an API key that belongs to a person and acts with their
// role; the secret is printed once.
func userKey(ctx context.Context, keys *auth.Keys, name string, asJSON bool) error {
	k, secret, err := keys.CreateUserKey(ctx, name, name+"'s key", "", 0)
	if err != nil {
		return err
	}
	if asJSON {
		return json.NewEncoder(os.Stdout).Encode(map[string]string{"key": k.Key, "secret": secret, "user": k.User, "role": string(k.Role)})
	}
	fmt.Printf("key:    %s\nsecret: %s\nuser:   %s\nrole:   %s\n", k.Key, secret, k.User, k.Role)
	return nil
}

// readPassword takes the first line of r (a pipe or a typed line).
func readPassword(r io.Reader) (string, error) {
	line, err := bufio.NewReader(r).ReadString('\n')
	if err != nil && !errors.Is(err, io.EOF) {
		return "", err
	}
	p := strings.TrimRight(line, "\r\n")
	if p == "" {
		return "", errors.New("give the password on standard input: echo 'the password' | framelake users create NAME")
	}
	return p, nil
}

func state(u auth.User) string {
	if u.DisabledAt != nil {
		return "disabled " + u.DisabledAt.Format(time.DateOnly)
	}
	return "active"
}

func listUsers(ctx context.Context, keys *auth.Keys, asJSON bool) error {
	list, err := keys.Users(ctx)
	if err != nil {
		return err
	}
	if asJSON {
		return json.NewEncoder(os.Stdout).Encode(list)
	}
	w := tabwriter.NewWriter(os.Stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(w, "NAME\tROLE\tCREATED\tSTATE")
	for _, u := range list {
		fmt.Fprintf(w, "%s\t%s\t%s\t%s\n", u.Name, u.Role, u.CreatedAt.Format(time.DateOnly), state(u))
	}
	return w.Flush()
}
