package web

import (
	"net/http"
	"strconv"

	"github.com/labstack/echo/v5"

	"github.com/framelake/framelake/errs"
	"github.com/framelake/framelake/lake"
)

// What every delete route shares (the routes are with their resources:
// lake_files.go, lake_collections.go, projects.go, datasets.go). Each delete
// answers what it removed and what it kept (lake.Deleted); deleting needs a
// write key (roleByMethod). The semantics are the domain packages' (lake,
// dataset, annotate package comments).

// withFiles reads the files query parameter of the deletes that take one.
func withFiles(c *echo.Context) (bool, error) {
	raw := c.QueryParam("files")
	if raw == "" {
		return false, nil
	}
	v, err := strconv.ParseBool(raw)
	if err != nil {
		return false, errs.Invalid("files", "files must be true or false, got %q", raw)
	}
	return v, nil
}

// answerDelete sends a delete's counts, or its error.
func answerDelete(c *echo.Context) func(lake.Deleted, error) error {
	return func(d lake.Deleted, err error) error {
		if err != nil {
			return err
		}
		return c.JSON(http.StatusOK, d)
	}
}
