package web

import (
	"net/http"

	"github.com/labstack/echo/v5"
)

// retryJob queues a failed job again (POST /jobs/{id}/retry): 202 with the
// job as queued; a job that is not failed is a 409 (failed_precondition).
// An import keeps its archive while it is failed, so its retry finishes it,
// skipping the files already in the lake.
func (s *server) retryJob(c *echo.Context) error {
	j, err := s.Jobs.Retry(c.Request().Context(), c.Param("id"))
	if err != nil {
		return err
	}
	return c.JSON(http.StatusAccepted, viewJob(j))
}
