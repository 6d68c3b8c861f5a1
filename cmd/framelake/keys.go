package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"text/tabwriter"
	"time"

	"github.com/framelake/framelake/appliance"
	"github.com/framelake/framelake/internal/auth"
)

func cmdKeys(ctx context.Context, args []string) error {
	if len(args) == 0 {
		return errors.New("usage: framelake keys create|list|revoke|rotate-signing [flags]")
	}
	fs := flag.NewFlagSet("keys "+args[0], flag.ContinueOnError)
	data := fs.String("data", envOr("FRAMELAKE_DATA", "./framelake-data"), "data folder (env FRAMELAKE_DATA)")
	asJSON := fs.Bool("json", false, "print JSON")
	switch args[0] {
	case "create":
		name := fs.String("name", "", "name of the key (who or what uses it)")
		role := fs.String("role", "write", "admin, write or read")
		expires := fs.String("expires", "", "lifetime, e.g. 30d or 12h (default: never)")
		if err := parse(fs, args[1:], 0); err != nil {
			return err
		}
		return withKeys(ctx, *data, func(keys *auth.Keys) error { return createKey(ctx, keys, *name, *role, *expires, *asJSON) })
	case "list":
		if err := parse(fs, args[1:], 0); err != nil {
			return err
		}
		return withKeys(ctx, *data, func(keys *auth.Keys) error { return listKeys(ctx, keys, *asJSON) })
	case "revoke":
		if err := parse(fs, args[1:], 1); err != nil {
			return fmt.Errorf("usage: framelake keys revoke --data DIR KEY: %w", err)
		}
		return withKeys(ctx, *data, func(keys *auth.Keys) error {
			if err := keys.Revoke(ctx, fs.Arg(0)); err != nil {
				return err
			}
			fmt.Println("revoked", fs.Arg(0))
			return nil
		})
	case "rotate-signing":
		if err := parse(fs, args[1:], 0); err != nil {
			return err
		}
		if err := appliance.RotateSigningKey(*data); err != nil {
			return err
		}
		fmt.Println("url-signing.key replaced: media links signed before no longer work.")
		fmt.Println("A running server still signs and checks with the old key until it restarts.")
		return nil
	}
	return fmt.Errorf("unknown keys command %q: use create, list, revoke or rotate-signing", args[0])
}

func withKeys(ctx context.Context, data string, fn func(*auth.Keys) error) error {
	a, err := appliance.Open(ctx, appliance.Config{DataDir: data, JobWorkers: -1})
	if err != nil {
		return err
	}
	defer a.Close()
	return fn(a.Keys)
}

func createKey(ctx context.Context, keys *auth.Keys, name, role, expires string, asJSON bool) error {
	r, err := auth.ParseRole(role)
	if err != nil {
		return err
	}
	var ttl time.Duration
	if expires != "" {
		if ttl, err = parseDuration(expires); err != nil {
			return fmt.Errorf("--expires: %w", err)
		}
	}
	k, secret, err := keys.Create(ctx, name, r, ttl)
	if err != nil {
		return err
	}
	if asJSON {
		return json.NewEncoder(os.Stdout).Encode(map[string]string{"key": k.Key, "secret": secret})
	}
	fmt.Printf("key:    %s\nsecret: %s\nrole:   %s\n", k.Key, secret, k.Role)
	if k.ExpiresAt != nil {
		fmt.Printf("expires: %s\n", k.ExpiresAt.Format(time.RFC3339))
	}
	fmt.Println("The secret is shown only now; store it safely.")
	return nil
}

func listKeys(ctx context.Context, keys *auth.Keys, asJSON bool) error {
	list, err := keys.List(ctx)
	if err != nil {
		return err
	}
	if asJSON {
		if list == nil {
			list = []auth.Key{}
		}
		return json.NewEncoder(os.Stdout).Encode(list)
	}
	w := tabwriter.NewWriter(os.Stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(w, "KEY\tNAME\tROLE\tCREATED\tSTATE")
	for _, k := range list {
		state := "active"
		switch {
		case k.RevokedAt != nil:
			state = "revoked " + k.RevokedAt.Format(time.DateOnly)
		case k.ExpiresAt != nil && k.ExpiresAt.Before(time.Now()):
			state = "expired"
		case k.ExpiresAt != nil:
			state = "expires " + k.ExpiresAt.Format(time.DateOnly)
		}
		fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\n", k.Key, k.Name, k.Role, k.CreatedAt.Format(time.DateOnly), state)
	}
	return w.Flush()
}
