"""A labelling team's jobs, comments, members, people, history, statistics and agreement (docs/team.md)."""

from __future__ import annotations

import json
import urllib.parse
from typing import Any, Optional


def _q(s: str) -> str:
    return urllib.parse.quote(s, safe="")


class TeamMethods:
    """Methods of Client for a team's jobs, comments, members and people, the history of frames' shapes,
    people's statistics and agreement."""

    def _send(self, method: str, path: str, body: Any = None) -> Any:
        with self._request(path, json.dumps({} if body is None else body).encode(), "application/json",
                           method=method) as resp:
            raw = resp.read()
            return json.loads(raw) if raw else None

    # -- jobs (docs/team.md "Jobs", "Review") --------------------------------

    def create_jobs(self, task_id: str, size: int, assignees: Optional[list] = None, replace: bool = False,
                    overlap: Optional[dict] = None, seed: Optional[int] = None) -> list:
        """Cuts a task into jobs of size frames, given round-robin to assignees (none: they wait for next_job).
        overlap {"share": 0.1, "annotators": 2} gives a share of the frames to more annotators independently."""
        body = {"size": size, "assignees": assignees, "replace": replace or None, "overlap": overlap, "seed": seed}
        return self.post(f"/api/v1/tasks/{_q(task_id)}/jobs", {k: v for k, v in body.items() if v is not None})["jobs"]

    def list_jobs(self, task_id: str) -> list:
        """A task's jobs."""
        return self.get(f"/api/v1/tasks/{_q(task_id)}/jobs")["jobs"]

    def get_label_job(self, task_id: str, number: int) -> dict:
        """One job of a task, with its frames and events (get_job is a background job of the server)."""
        return self.get(f"/api/v1/tasks/{_q(task_id)}/jobs/{int(number)}")

    def reassign_job(self, task_id: str, number: int, **change: Optional[str]) -> dict:
        """Gives a job to another person: assignee= and/or reviewer=, a name or None for nobody; a field left
        out stays."""
        unknown = set(change) - {"assignee", "reviewer"}
        if unknown:
            raise TypeError(f"reassign_job takes assignee= and reviewer=, not {sorted(unknown)}")
        return self._send("PATCH", f"/api/v1/tasks/{_q(task_id)}/jobs/{int(number)}", change)

    def set_job_state(self, task_id: str, number: int, state: str, note: Optional[str] = None,
                      frames: Optional[dict] = None) -> dict:
        """Moves a job: submitted, in_review, accepted or rejected (note says why; frames judges frames by unique
        name, "accepted" or "rejected")."""
        body = {"state": state, "note": note, "frames": frames}
        return self.post(f"/api/v1/tasks/{_q(task_id)}/jobs/{int(number)}/state",
                         {k: v for k, v in body.items() if v is not None})

    def next_job(self, project_id: str) -> dict:
        """Takes the next unassigned job of a project (pull mode)."""
        return self.post(f"/api/v1/projects/{_q(project_id)}/jobs/next")

    def queue(self) -> list:
        """The caller's jobs, what to do next first."""
        return self.get("/api/v1/queue")["jobs"]

    # -- comments (docs/team.md "Comments") -----------------------------------

    def add_comment(self, project_id: str, unique_name: str, text: str, shape_id: Optional[str] = None,
                    frame: Optional[int] = None, job: Optional[int] = None) -> dict:
        """Pins a comment to a project's frame, or to one of its shapes (shape_id)."""
        body = {"text": text, "shapeId": shape_id, "frame": frame, "job": job}
        return self.post(f"/api/v1/projects/{_q(project_id)}/frames/{_q(unique_name)}/comments",
                         {k: v for k, v in body.items() if v is not None})

    def frame_comments(self, project_id: str, unique_name: str) -> list:
        """The comments on a project's frame."""
        return self.get(f"/api/v1/projects/{_q(project_id)}/frames/{_q(unique_name)}/comments")["comments"]

    def job_comments(self, task_id: str, number: int) -> list:
        """The comments on a job's frames."""
        return self.get(f"/api/v1/tasks/{_q(task_id)}/jobs/{int(number)}/comments")["comments"]

    def resolve_comment(self, comment_id: str, resolved: bool = True) -> dict:
        """Marks a comment resolved (or open again)."""
        return self._send("PATCH", f"/api/v1/comments/{_q(comment_id)}", {"resolved": resolved})

    # -- members and people (docs/team.md "Roles", "Managing people") ---------

    def list_members(self, project_id: str) -> list:
        """A project's members (curators)."""
        return self.get(f"/api/v1/projects/{_q(project_id)}/members")["members"]

    def put_member(self, project_id: str, name: str, role: Optional[str] = None) -> dict:
        """Makes a person a member of a project as annotator or reviewer (None: the person's own role)."""
        return self._send("PUT", f"/api/v1/projects/{_q(project_id)}/members/{_q(name)}",
                          {"role": role} if role else {})

    def delete_member(self, project_id: str, name: str) -> None:
        """Ends a person's membership of a project."""
        self._send("DELETE", f"/api/v1/projects/{_q(project_id)}/members/{_q(name)}")

    def list_users(self) -> list:
        """People (admins)."""
        return self.get("/api/v1/users")["users"]

    def create_user(self, name: str, password: str, role: str) -> dict:
        """Adds a person (admins): role admin, curator, viewer, annotator or reviewer; a password of at least
        10 characters."""
        return self.post("/api/v1/users", {"name": name, "password": password, "role": role})

    def update_user(self, name: str, role: Optional[str] = None, disabled: Optional[bool] = None,
                    password: Optional[str] = None) -> dict:
        """Changes a person (admins); None leaves a field. Disabling ends their sessions and stops their keys."""
        body = {"role": role, "disabled": disabled, "password": password}
        return self._send("PATCH", f"/api/v1/users/{_q(name)}", {k: v for k, v in body.items() if v is not None})

    def disable_user(self, name: str, disabled: bool = True) -> dict:
        """Disables a person (or enables them again)."""
        return self.update_user(name, disabled=disabled)

    def reset_password(self, name: str, password: str) -> dict:
        """Gives a person a new password (their sessions end)."""
        return self.update_user(name, password=password)

    def set_user_role(self, name: str, role: str) -> dict:
        """Gives a person another role."""
        return self.update_user(name, role=role)

    # -- history, statistics, agreement ---------------------------------------

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
