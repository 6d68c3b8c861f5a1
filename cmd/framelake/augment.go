package main

import (
	"context"
	"errors"
)

// cmdAugment is written by the augment work; until then it says so.
func cmdAugment(ctx context.Context, args []string) error {
	return errors.New("not built yet")
}
