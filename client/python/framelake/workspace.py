"""Annotation tasks made of lake images and the frame edits of the web app's workspace."""

from __future__ import annotations

import json
import urllib.parse
from typing import Any, Optional


def _q(s: str) -> str:
    return urllib.parse.quote(s, safe="")


class WorkspaceMethods:
    """Methods of Client for tasks and frame edits (see web/openapi.yaml)."""

    def create_task(self, project_id: str, task_name: str = "", unique_names: Optional[list] = None,
                    query: Optional[str] = None, collection_id: Optional[str] = None,
                    start_from: Optional[str] = None) -> dict:
        """Makes a task of lake images: exactly one of unique_names, query, collection_id names its frames.

        start_from "lake" (the server's default) starts each frame from the image's human boxes with the
        project's labels that no project owns (they become the project's); "empty" starts with none.
        """
        body = {"taskName": task_name, "uniqueNames": unique_names, "query": query, "collectionId": collection_id,
                "startFrom": start_from}
        return self.post(f"/api/v1/projects/{_q(project_id)}/tasks", {k: v for k, v in body.items() if v})

    def rename_task(self, task_id: str, name: str) -> dict:
        return self._patch_task(task_id, {"taskName": name})

    def complete_task(self, task_id: str) -> dict:
        """Marks a task done (status 2); every frame must be annotated, else a 409."""
        return self._patch_task(task_id, {"status": 2})

    def reopen_task(self, task_id: str) -> dict:
        return self._patch_task(task_id, {"status": 1})

    def _patch_task(self, task_id: str, body: dict) -> dict:
        with self._request(f"/api/v1/tasks/{_q(task_id)}", json.dumps(body).encode(), "application/json",
                           method="PATCH") as resp:
            return json.load(resp)

    def task_workspace(self, task_id: str) -> dict:
        """A task with its project's labels and its frames in order."""
        return self.get(f"/api/v1/tasks/{_q(task_id)}/frames")

    def frame_annotations(self, project_id: str, unique_name: str) -> dict:
        """A frame's human boxes, its version and the model suggestions still open on it."""
        return self.get(f"/api/v1/projects/{_q(project_id)}/frames/{_q(unique_name)}/annotations")

    def replace_frame_annotations(self, project_id: str, unique_name: str, boxes: list,
                                  version: Optional[int] = None) -> dict:
        """Replaces a frame's human boxes ([] for "no objects").

        With version, only if nobody changed the frame since: else FramelakeError with status 409,
        whose body["current"] is the frame as it is.
        """
        return self._frame_edit("PUT", project_id, unique_name, "annotations", boxes, version)

    def decide_suggestions(self, project_id: str, unique_name: str, accept: bool, ids: Optional[list] = None,
                           min_confidence: Optional[float] = None, version: Optional[int] = None) -> dict:
        """Accepts (they become human boxes) or rejects suggestions by id or at least min_confidence sure."""
        body = {"action": "accept" if accept else "reject", "ids": ids or [], "minConfidence": min_confidence}
        return self._frame_edit("POST", project_id, unique_name, "suggestions", body, version)

    def _frame_edit(self, method: str, project_id: str, unique_name: str, what: str, body: Any,
                    version: Optional[int]) -> dict:
        headers = {"If-Match": f'"{version}"'} if version else None
        path = f"/api/v1/projects/{_q(project_id)}/frames/{_q(unique_name)}/{what}"
        with self._request(path, json.dumps(body).encode(), "application/json", method=method,
                           headers=headers) as resp:
            return json.load(resp)
