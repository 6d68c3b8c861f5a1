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

	"github.com/framelake/framelake/internal/auth"
)

// cmdUsers manages the people who sign in (docs/team.md). Passwords are
// read from standard input, never from a flag, so they stay out of shell
// history and the process list.
func cmdUsers(ctx context.Context, args []string) error {
	if len(args) == 0 {
		return errors.New("usage: framelake users create|list|passwd|disable|enable|role [flags] [NAME]")
	}
	fs := flag.NewFlagSet("users "+args[0], flag.ContinueOnError)
	data := fs.String("data", envOr("FRAMELAKE_DATA", "./framelake-data"), "data folder (env FRAMELAKE_DATA)")
	asJSON := fs.Bool("json", false, "print JSON")
	role := fs.String("role", "read", "create, role: admin, write or read")
	want := 1
	if args[0] == "list" {
		want = 0
	}
	if err := parse(fs, args[1:], want); err != nil {
		return fmt.Errorf("usage: framelake users %s --data DIR [--role R] %s: %w", args[0], strings.Repeat("NAME", want), err)
	}
	name := fs.Arg(0)
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
			return fmt.Errorf("unknown users command %q: use create, list, passwd, disable, enable or role", args[0])
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
