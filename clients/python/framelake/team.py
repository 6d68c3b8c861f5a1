"""A labelling team's history, statistics and agreement (docs/team.md)."""

from __future__ import annotations

import json
import urllib.parse
from typing import Optional


def _q(s: str) -> str:
    return urllib.parse.quote(s, safe="")


class TeamMethods:
    """Methods of Client for the history of frames' shapes, people's statistics and agreement."""

    def history(self, unique_name: Optional[str] = None, frame: Optional[int] = None,
                project_id: Optional[str] = None, task_id: Optional[str] = None, job: Optional[int] = None,
                who: Optional[str] = None, since: Optional[str] = None, until: Optional[str] = None,
                limit: Optional[int] = None) -> list:
        """Changes of frames' shapes, newest first: of a file (and frame), a project, a task or a job of it
        (task_id and job), a person, a time range (RFC 3339 since/until); each with removed and added shapes."""
        params = {"uniqueName": unique_name, "frame": frame, "project": project_id, "task": task_id, "job": job,
                  "who": who, "since": since, "until": until, "limit": limit}
        query = urllib.parse.urlencode({k: v for k, v in params.items() if v is not None})
        return self.get("/api/v1/lake/history?" + query)["changes"]

    def change_shapes(self, change_id: str) -> list:
        """A frame's shapes (of the change's operation) as they were right after a change."""
        return self.get(f"/api/v1/lake/history/{_q(change_id)}/shapes")["shapes"]

    def restore_change(self, change_id: str, version: Optional[int] = None) -> dict:
        """Writes a frame's shapes back to their state right after a change, as a new change.

        With version (a project frame's), only if nobody changed the frame since: else FramelakeError with
        status 409, whose body["current"] is the frame as it is. The answer's "change" is the new change
        (None when the frame already was so) and "version" the frame's new version.
        """
        headers = {"If-Match": f'"{version}"'} if version else None
        with self._request(f"/api/v1/lake/history/{_q(change_id)}/restore", b"{}", "application/json",
                           headers=headers) as resp:
            return json.load(resp)

    def people_stats(self, date_from: Optional[str] = None, date_to: Optional[str] = None,
                     project_id: Optional[str] = None) -> list:
        """Per person per day (UTC): frames, shapes, active editing time (gaps over 5 minutes not counted),
        reviews, rejections and comments. Dates like "2026-11-29" (date_to included) or RFC 3339 times."""
        params = {"from": date_from, "to": date_to, "project": project_id}
        query = urllib.parse.urlencode({k: v for k, v in params.items() if v is not None})
        return self.get("/api/v1/stats/people?" + query)["people"]

    def agreement(self, project_id: str, threshold: Optional[float] = None, iou: Optional[float] = None) -> dict:
        """How far a project's annotators agree on the frames given to more than one: F1 overall, per label and
        per frame, kappa of classes, and the review queue (frames under threshold, default 0.8)."""
        params = {"threshold": threshold, "iou": iou}
        query = urllib.parse.urlencode({k: v for k, v in params.items() if v is not None})
        return self.get(f"/api/v1/projects/{_q(project_id)}/agreement?" + query)

    def accept_consensus(self, project_id: str, unique_name: str) -> dict:
        """Makes the consensus of a frame's answers the project's answer (a change in its history)."""
        return self.post(f"/api/v1/projects/{_q(project_id)}/frames/{_q(unique_name)}/consensus")
