"""framelake's Python client: the client functions of the interface as methods.

Standard library only, so it works in offline labs:

    from framelake import Client
    client = Client("http://127.0.0.1:8080", key, secret)
    items = client.get_item_list_from_datalake("image", query="annotation.label=dog", page_size=50)

Every client function of the interface is a method, POST /api/v1/client/<name>
with its parameters as JSON; a parameter left at None is left out, so the
server applies the interface's default. A few REST operations are methods too
(upload_files, the metadata patches, list_projects, the deletes); get, post and
delete reach any other. Errors raise FramelakeError with the server's code,
message and field.
"""

from __future__ import annotations

import base64
import io
import json
import os
import tarfile
import tempfile
import time
import urllib.error
import urllib.parse
import urllib.request
import uuid
import zipfile
from typing import Any, Optional, Union

from ._selection import SelectionMixin
from .evaluation import EvaluationFunctions
from .workspace import WorkspaceMethods
from .curate import Curation
from .team import TeamMethods

__all__ = ["Client", "FramelakeError"]


class FramelakeError(Exception):
    """An error response: status, code (e.g. "invalid_argument"), message and field."""

    def __init__(self, status: int, code: str, message: str, field: str = ""):
        super().__init__(f"{message} ({status} {code}{' field ' + field if field else ''})")
        self.status, self.code, self.message, self.field = status, code, message, field
        self.body: dict = {}


class Client(SelectionMixin, EvaluationFunctions, WorkspaceMethods, Curation, TeamMethods):
    """A framelake server reached with one API key."""

    def __init__(self, base_url: str, key: str, secret: str, timeout: float = 600):
        self.base_url = base_url.rstrip("/")
        auth = base64.b64encode(f"{key}:{secret}".encode()).decode()
        self._headers = {"Authorization": "Basic " + auth}
        self.timeout = timeout

    # -- transport -----------------------------------------------------------

    def _request(self, path: str, body: bytes, content_type: str, method: str = "POST",
                 headers: Optional[dict] = None):
        req = urllib.request.Request(self.base_url + path, data=body, method=method,
                                     headers={**self._headers, "Content-Type": content_type, **(headers or {})})
        try:
            return urllib.request.urlopen(req, timeout=self.timeout)
        except urllib.error.HTTPError as e:
            raw = e.read()
            try:
                parsed = json.loads(raw)
                err = parsed["error"]
            except (ValueError, KeyError, TypeError):
                raise FramelakeError(e.code, "unknown", raw.decode(errors="replace") or e.reason) from None
            fe = FramelakeError(e.code, err.get("code", ""), err.get("message", ""), err.get("field", ""))
            fe.body = parsed  # a 409 of a frame edit holds the frame as it is in body["current"]
            raise fe from None

    def call(self, function: str, **params: Any) -> Any:
        """Calls any client function by name; None parameters are left out."""
        body = json.dumps({k: v for k, v in params.items() if v is not None}).encode()
        with self._request("/api/v1/client/" + function, body, "application/json") as resp:
            return json.load(resp)

    def get(self, path: str) -> Any:
        """GET a REST path (e.g. "/api/v1/jobs/<id>") and decode its JSON."""
        with self._request(path, None, "application/json", method="GET") as resp:
            return json.load(resp)

    def post(self, path: str, body: Any = None) -> Any:
        """POST body as JSON to a REST path (e.g. "/api/v1/projects") and decode the answer."""
        with self._request(path, json.dumps({} if body is None else body).encode(), "application/json") as resp:
            return json.load(resp)

    def delete(self, path: str) -> Any:
        """DELETE a REST path and decode the answer (what was removed)."""
        with self._request(path, None, "application/json", method="DELETE") as resp:
            return json.load(resp)

    def wait_job(self, job_id: str, timeout: float = 3600) -> dict:
        """Polls a job until it completes, fails or is cancelled."""
        deadline, delay = time.monotonic() + timeout, 0.05
        while True:
            job = self.get("/api/v1/jobs/" + job_id)
            if job["status"] in ("completed", "failed", "cancelled") or time.monotonic() > deadline:
                return job
            time.sleep(delay)
            delay = min(delay * 2, 1.0)

    def retry_job(self, job_id: str) -> dict:
        """Runs a failed job again (POST /api/v1/jobs/<id>/retry) and returns it as queued.

        A failed import kept its archive, and its retry skips the files already in the lake.
        A job that is not failed raises FramelakeError 409 (failed_precondition).
        """
        return self.post("/api/v1/jobs/" + job_id + "/retry")

    # -- lake ----------------------------------------------------------------

    def upload_files(self, paths: list[str], collection_name: Optional[str] = None,
                     metadata: Optional[dict] = None, collection_metadata: Optional[dict] = None) -> dict:
        """Uploads files into the lake (POST /api/v1/lake/files).

        metadata is stored on every file; collection_metadata is merged into the
        collection's metadata (as patch_collection_metadata) with the files.
        """
        fields = {}
        if collection_name:
            fields["collectionName"] = collection_name
        if metadata is not None:
            fields["metadata"] = json.dumps(metadata)
        if collection_metadata is not None:
            fields["collectionMetadata"] = json.dumps(collection_metadata)
        files = [("files", os.path.basename(p), _read(p)) for p in paths]
        body, ctype = _multipart(fields, files)
        with self._request("/api/v1/lake/files", body, ctype) as resp:
            return json.load(resp)

    def patch_file_metadata(self, unique_name: str, patch: dict) -> dict:
        """Merges patch into a file's custom metadata (JSON merge patch, RFC 7396).

        Keys replace stored ones, nested dicts merge, a None value removes its key.
        Returns {"id", "uniqueName", "name", "metadata", "updatedAt"} after the merge.
        """
        return self._patch("/api/v1/lake/files/" + urllib.parse.quote(unique_name, safe="") + "/metadata", patch)

    def patch_collection_metadata(self, collection_id: str, patch: dict) -> dict:
        """Merges patch into a collection's custom metadata, as patch_file_metadata.

        Returns {"id", "name", "contentType", "metadata", "updatedAt"} after the merge.
        """
        return self._patch("/api/v1/lake/collections/" + urllib.parse.quote(collection_id, safe="") + "/metadata",
                           patch)

    def _patch(self, path: str, patch: dict) -> dict:
        with self._request(path, json.dumps(patch).encode(), "application/merge-patch+json", method="PATCH") as resp:
            return json.load(resp)

    def get_file_details(self, unique_name: str, fields_filter: Optional[dict] = None) -> dict:
        return self.call("get_file_details", unique_name=unique_name, fields_filter=fields_filter)

    def get_collection_details(self, collection_id: str, fields_filter: Optional[dict] = None) -> dict:
        return self.call("get_collection_details", collection_id=collection_id, fields_filter=fields_filter)

    def get_item_list_from_datalake(self, item_type: str = "image", query: Optional[str] = None,
                                    filter: Optional[dict] = None, page_index: int = 0, page_size: int = 20,
                                    sort_order: Optional[dict] = None) -> list:
        return self.call("get_item_list_from_datalake", item_type=item_type, query=query, filter=filter,
                         page_index=page_index, page_size=page_size, sort_order=sort_order)

    def get_item_list_from_collection(self, collection_id: str, query: Optional[str] = None,
                                      filter: Optional[dict] = None, page_index: int = 0, page_size: int = 20,
                                      sort_order: Optional[dict] = None) -> list:
        return self.call("get_item_list_from_collection", collection_id=collection_id, query=query,
                         filter=filter, page_index=page_index, page_size=page_size, sort_order=sort_order)

    def get_item_count_from_lake(self, item_type: str = "image", query: Optional[str] = None,
                                 filter: Optional[dict] = None) -> list:
        return self.call("get_item_count_from_lake", item_type=item_type, query=query, filter=filter)

    def get_item_count_from_collection(self, collection_id: str, query: Optional[str] = None,
                                       filter: Optional[dict] = None) -> list:
        return self.call("get_item_count_from_collection", collection_id=collection_id, query=query, filter=filter)

    # -- embeddings ----------------------------------------------------------

    def insert_image_embeddings_batch(self, embedding_list: list, model_name: str,
                                      vector_dimension: Union[int, list], session_id: str = "") -> dict:
        """Stores fewer than 100 vectors in one transaction; vector_dimension is 512 or [512]."""
        return self.call("insert_image_embeddings_batch", embedding_list=embedding_list, model_name=model_name,
                         vector_dimension=_dimension(vector_dimension), session_id=session_id or None)

    # The most numbers (vectors x dimensions) one insert_image_embeddings request carries.
    embedding_numbers_per_request = 262_144

    def insert_image_embeddings(self, embedding_list: list, model_name: str,
                                vector_dimension: Union[int, list]) -> dict:
        """Stores any number of vectors (vector_dimension 512 or [512]), sent in requests of at most
        embedding_numbers_per_request numbers (and at least one vector) each.

        Returns {"success": True, "upsertCount": N} summed over the requests, as
        one request returns it. Each request commits on its own: if one fails,
        the FramelakeError raised carries upsert_count, what earlier ones stored.
        """
        total = 0
        for batch in _number_batches(embedding_list, self.embedding_numbers_per_request):
            try:
                out = self.call("insert_image_embeddings", embedding_list=batch, model_name=model_name,
                                vector_dimension=_dimension(vector_dimension))
            except FramelakeError as e:
                e.upsert_count = total
                raise
            total += out["upsertCount"]
        return {"success": True, "upsertCount": total}

    def get_embedding_vector(self, unique_names: list, model_name: str) -> dict:
        return self.call("get_embedding_vector", unique_names=unique_names, model_name=model_name)

    def find_similar(self, model_name: Optional[str] = None, unique_name: Optional[str] = None, vector: Optional[list] = None,
                     k: int = 10, query: Optional[str] = None, filter: Optional[dict] = None) -> dict:
        return self.call("find_similar", model_name=model_name, unique_name=unique_name, vector=vector, k=k,
                         query=query, filter=filter)
    # model_name left out searches the default embedding model.

    # -- analysis --------------------------------------------------------------
    # model_id is the interface's other name for model_name (give one); either
    # left out, or "default", picks the application's system default model.

    def register_model(self, path: str, model_name: Optional[str] = None, application: Optional[str] = None,
                       model_id: Optional[str] = None, replace: bool = False) -> dict:
        """Packs the model folder at path as .tar.gz and registers it (admin key).

        application is auto_tagging, auto_annotation or embedding. A taken name is
        a 409 unless replace is true, which puts the new package in its place.
        Returns {"success": True, "modelName", "application"}.
        """
        buf = io.BytesIO()
        with tarfile.open(fileobj=buf, mode="w:gz") as tar:
            tar.add(path, arcname=".")
        fields = {k: v for k, v in (("model_name", model_name), ("model_id", model_id),
                                    ("application", application)) if v is not None}
        if replace:
            fields["replace"] = "true"
        body, ctype = _multipart(fields, [("package", "model.tar.gz", buf.getvalue())])
        with self._request("/api/v1/client/register_model", body, ctype) as resp:
            return json.load(resp)

    def auto_tag_collection(self, collection_id: str, model_name: Optional[str] = None,
                            input_resolution: Optional[tuple] = None, confidence_threshold: Optional[float] = None,
                            query: Optional[str] = None, filter: Optional[dict] = None,
                            inference_platform: Optional[str] = None, model_id: Optional[str] = None) -> dict:
        """Tags a collection's images and videos; returns {"jobId", "runId"} (follow with wait_job)."""
        return self.call("auto_tag_collection", collection_id=collection_id, model_name=model_name,
                         model_id=model_id, input_resolution=_list(input_resolution),
                         confidence_threshold=confidence_threshold, query=query, filter=filter,
                         inference_platform=inference_platform)

    def generate_auto_tags_to_lake(self, content_type: str, model_name: Optional[str] = None,
                                   input_resolution: Optional[tuple] = None,
                                   confidence_threshold: Optional[float] = None, query: Optional[str] = None,
                                   filter: Optional[dict] = None, inference_platform: Optional[str] = None,
                                   model_id: Optional[str] = None) -> dict:
        return self.call("generate_auto_tags_to_lake", content_type=content_type, model_name=model_name,
                         model_id=model_id, input_resolution=_list(input_resolution),
                         confidence_threshold=confidence_threshold, query=query, filter=filter,
                         inference_platform=inference_platform)

    def generate_embeddings_for_collection(self, collection_id: str, model_name: Optional[str] = None,
                                           query: Optional[str] = None, filter: Optional[dict] = None,
                                           inference_platform: Optional[str] = None,
                                           model_id: Optional[str] = None) -> dict:
        return self.call("generate_embeddings_for_collection", collection_id=collection_id, model_name=model_name,
                         model_id=model_id, query=query, filter=filter, inference_platform=inference_platform)

    def generate_embeddings_to_lake(self, content_type: str, model_name: Optional[str] = None,
                                    query: Optional[str] = None, filter: Optional[dict] = None,
                                    inference_platform: Optional[str] = None, model_id: Optional[str] = None) -> dict:
        return self.call("generate_embeddings_to_lake", content_type=content_type, model_name=model_name,
                         model_id=model_id, query=query, filter=filter, inference_platform=inference_platform)

    def auto_annotate_collection(self, collection_id: str, prompts: list, model_name: Optional[str] = None,
                                 input_resolution: Optional[tuple] = None,
                                 confidence_threshold: Optional[float] = None, query: Optional[str] = None,
                                 filter: Optional[dict] = None, inference_platform: Optional[str] = None,
                                 model_id: Optional[str] = None) -> dict:
        """Boxes the prompts ([{"label", "description"}]) on a collection's files."""
        return self.call("auto_annotate_collection", collection_id=collection_id, prompts=prompts,
                         model_name=model_name, model_id=model_id, input_resolution=_list(input_resolution),
                         confidence_threshold=confidence_threshold, query=query, filter=filter,
                         inference_platform=inference_platform)

    def generate_auto_annotations_to_lake(self, content_type: str, prompts: list, model_name: Optional[str] = None,
                                          input_resolution: Optional[tuple] = None,
                                          confidence_threshold: Optional[float] = None, query: Optional[str] = None,
                                          filter: Optional[dict] = None, inference_platform: Optional[str] = None,
                                          model_id: Optional[str] = None) -> dict:
        return self.call("generate_auto_annotations_to_lake", content_type=content_type, prompts=prompts,
                         model_name=model_name, model_id=model_id, input_resolution=_list(input_resolution),
                         confidence_threshold=confidence_threshold, query=query, filter=filter,
                         inference_platform=inference_platform)

    # -- datasets --------------------------------------------------------------
    # The create and update functions return {"datasetId", "versionId",
    # "versionNo", "jobId"}; the version can be downloaded once wait_job says
    # its build completed.

    def create_dataset_from_collection(self, dataset_name: str, collection_id: str, split_info: dict, labels: list,
                                       export_types: Optional[list] = None, query: Optional[str] = None,
                                       filter: Optional[dict] = None, operation_list: Any = None,
                                       augmentation_list: Optional[dict] = None) -> dict:
        return self.call("create_dataset_from_collection", dataset_name=dataset_name, collection_id=collection_id,
                         split_info=split_info, labels=labels, export_types=export_types, query=query,
                         filter=filter, operation_list=operation_list, augmentation_list=augmentation_list)

    def create_dataset_from_datalake(self, dataset_name: str, split_info: dict, labels: list,
                                     export_types: Optional[list] = None, item_type: str = "image",
                                     query: Optional[str] = None, filter: Optional[dict] = None,
                                     operation_list: Any = None, augmentation_list: Optional[dict] = None,
                                     keep_duplicates_together: bool = False,
                                     keep_identical_together: bool = True) -> dict:
        # keep_duplicates_together: each near-duplicate group (find_duplicates) lands in its keeper's split.
        # keep_identical_together (the default): byte-identical files land in one split; False lets them part.
        return self.call("create_dataset_from_datalake", dataset_name=dataset_name, split_info=split_info,
                         labels=labels, export_types=export_types, item_type=item_type, query=query, filter=filter,
                         operation_list=operation_list, augmentation_list=augmentation_list,
                         keep_duplicates_together=keep_duplicates_together or None,
                         keep_identical_together=None if keep_identical_together else False)

    # The update functions name the source version as dataset_version_id or,
    # as the interface's parameter table does, as version_id with dataset_id
    # (its dataset, checked by the server) optional.

    def update_dataset_version_from_collection(self, dataset_version_id: Optional[str] = None,
                                               collection_id: Optional[str] = None,
                                               split_info: Optional[dict] = None, labels: Optional[list] = None,
                                               export_types: Optional[list] = None, query: Optional[str] = None,
                                               filter: Optional[dict] = None,
                                               is_new_version_required: Optional[bool] = None,
                                               operation_list: Any = None, augmentation_list: Optional[dict] = None,
                                               dataset_id: Optional[str] = None,
                                               version_id: Optional[str] = None) -> dict:
        return self.call("update_dataset_version_from_collection", dataset_version_id=dataset_version_id,
                         dataset_id=dataset_id, version_id=version_id, collection_id=collection_id,
                         split_info=split_info, labels=labels, export_types=export_types, query=query,
                         filter=filter, is_new_version_required=is_new_version_required,
                         operation_list=operation_list, augmentation_list=augmentation_list)

    def update_dataset_version_from_datalake(self, dataset_version_id: Optional[str] = None,
                                             split_info: Optional[dict] = None, labels: Optional[list] = None,
                                             export_types: Optional[list] = None, item_type: str = "image",
                                             query: Optional[str] = None, filter: Optional[dict] = None,
                                             is_new_version_required: Optional[bool] = None,
                                             operation_list: Any = None, augmentation_list: Optional[dict] = None,
                                             dataset_id: Optional[str] = None,
                                             version_id: Optional[str] = None) -> dict:
        return self.call("update_dataset_version_from_datalake", dataset_version_id=dataset_version_id,
                         dataset_id=dataset_id, version_id=version_id, split_info=split_info, labels=labels,
                         export_types=export_types, item_type=item_type, query=query, filter=filter,
                         is_new_version_required=is_new_version_required, operation_list=operation_list,
                         augmentation_list=augmentation_list)

    # Bytes read from the response and written to disk at a time: the archive
    # never sits in memory, whatever its size.
    download_chunk_bytes = 1 << 20

    def download_dataset(self, version_id: str, export_type: str, custom_download_path: str = "",
                         is_media_include: bool = True, only_with_boxes: bool = False) -> str:
        """Downloads a version's archive and unpacks it into custom_download_path
        (default: the current folder); returns the folder it made,
        "<dataset>-<version>-<format>" under that path, as the Go client does.
        only_with_boxes leaves out the frames without a box.

        The archive streams to a temporary file in that path, removed after unpacking.
        """
        base = custom_download_path or "."
        os.makedirs(base, exist_ok=True)
        req = {"version_id": version_id, "export_type": export_type, "is_media_include": is_media_include}
        if only_with_boxes:
            req["only_with_boxes"] = True
        body = json.dumps(req).encode()
        with tempfile.TemporaryFile(dir=base, prefix=".framelake-download-", suffix=".zip") as tmp:
            with self._request("/api/v1/client/download_dataset", body, "application/json") as resp:
                name = resp.headers.get_filename() or ""
                while True:
                    chunk = resp.read(self.download_chunk_bytes)
                    if not chunk:
                        break
                    tmp.write(chunk)
            tmp.seek(0)
            with zipfile.ZipFile(tmp) as z:
                root = _unzip(z, base, os.path.basename(name).removesuffix(".zip"))
        return os.path.normpath(os.path.join(base, root))

    # -- projects and deletes (REST) ----------------------------------------------
    # Each delete answers what it removed and what it kept ({"removed": {...},
    # "kept": {...}}). Dataset versions are immutable: deleting a lake file
    # leaves the versions that hold it whole.

    def list_projects(self, page_index: int = 0, page_size: Optional[int] = None) -> dict:
        """Pages through the annotation projects: {"projectCount", "projectList"}."""
        q = {"pageIndex": page_index, **({"pageSize": page_size} if page_size is not None else {})}
        return self.get("/api/v1/projects?" + urllib.parse.urlencode(q))

    def get_project(self, project_id: str) -> dict:
        """A project with its labels and what each declares (attributes, keypoints, skeleton, ...)."""
        return self.get("/api/v1/projects/" + urllib.parse.quote(project_id, safe=""))

    def put_label(self, project_id: str, label_name: str, description: Optional[str] = None,
                  attributes: Optional[list] = None, keypoints: Optional[list] = None,
                  skeleton: Optional[list] = None, flip_pairs: Optional[list] = None,
                  sigmas: Optional[list] = None) -> dict:
        """Declares a project's label (docs/shapes.md, "Declaring labels") and returns it as stored.

        attributes: [{"name", "type": "text"|"number"|"boolean"|"select", "min", "max", "values",
        "required"}]; keypoints: point names in order, skeleton and flip_pairs: pairs of names, sigmas:
        one per point. What is left out declares none (description stays unless given); a label the
        project lacks is added. A bad declaration raises FramelakeError 400; another project's other
        skeleton for the name, 409.
        """
        body = {"labelDescription": description, "attributes": attributes, "keypoints": keypoints,
                "skeleton": skeleton, "flipPairs": flip_pairs, "sigmas": sigmas}
        path = ("/api/v1/projects/" + urllib.parse.quote(project_id, safe="") + "/labels/"
                + urllib.parse.quote(label_name, safe=""))
        data = json.dumps({k: v for k, v in body.items() if v is not None}).encode()
        with self._request(path, data, "application/json", method="PUT") as resp:
            return json.load(resp)

    def delete_file(self, unique_name: str) -> dict:
        """Removes a file from the lake, its collections, tags, annotations and embeddings."""
        return self._delete("/api/v1/lake/files/", unique_name)

    def delete_collection(self, collection_id: str, files: bool = False) -> dict:
        """Deletes a collection; files=True deletes its files too, otherwise they stay in the lake."""
        return self._delete("/api/v1/lake/collections/", collection_id, files)

    def delete_dataset(self, dataset_id: str) -> dict:
        """Deletes a dataset (group) with all its versions."""
        return self._delete("/api/v1/datasets/", dataset_id)

    def delete_dataset_version(self, version_id: str) -> dict:
        """Deletes a dataset version, cancelling its build if one is queued or running."""
        return self._delete("/api/v1/dataset-versions/", version_id)

    def delete_project(self, project_id: str, files: bool = False) -> dict:
        """Deletes a project with its tasks; files=True deletes its frames' lake files too."""
        return self._delete("/api/v1/projects/", project_id, files)

    def _delete(self, prefix: str, id: str, files: bool = False) -> dict:
        return self.delete(prefix + urllib.parse.quote(id, safe="") + ("?files=true" if files else ""))


def _unzip(z: zipfile.ZipFile, base: str, fallback: str) -> str:
    """Unpacks z under base and returns the folder holding its files, relative
    to base: the archive's single root folder, or fallback when it has none.
    Entries that would land outside base are refused before anything is written."""
    names = z.namelist()
    firsts = {n.lstrip("/").split("/", 1)[0] for n in names}
    shared = len(firsts) == 1 and all("/" in n.lstrip("/") or n.endswith("/") for n in names)
    root = firsts.pop() if shared else (fallback if fallback not in ("", ".") else "dataset")
    dest = base if shared else os.path.join(base, root)
    real = os.path.realpath(base)
    for n in names:
        target = os.path.realpath(os.path.join(dest, n))
        if not target.startswith(real + os.sep):
            raise FramelakeError(0, "invalid_argument", f"archive entry {n!r} leaves the download folder")
    z.extractall(dest)
    return root


def _number_batches(records: list, limit: int):
    """Splits records into runs whose vectors hold at most limit numbers in all,
    each run at least one record; an empty list is one empty run, so the server
    still answers it."""
    batch, numbers = [], 0
    for r in records:
        n = len(r.get("embeddings") or ()) if isinstance(r, dict) else 0
        if batch and numbers + n > limit:
            yield batch
            batch, numbers = [], 0
        batch.append(r)
        numbers += n
    if batch or not records:
        yield batch


def _read(path: str) -> bytes:
    with open(path, "rb") as f:
        return f.read()


def _dimension(d: Union[int, list]) -> list:
    """The interface types vector_dimension as a list of integers; its examples pass an int."""
    return [d] if isinstance(d, int) else list(d)


def _list(t: Optional[tuple]) -> Optional[list]:
    return list(t) if t is not None else None


def _multipart(fields: dict, files: list) -> tuple[bytes, str]:
    boundary = uuid.uuid4().hex
    out = io.BytesIO()
    for name, value in fields.items():
        out.write(f'--{boundary}\r\nContent-Disposition: form-data; name="{name}"\r\n\r\n{value}\r\n'.encode())
    for name, filename, data in files:
        out.write(f'--{boundary}\r\nContent-Disposition: form-data; name="{name}"; filename="{filename}"\r\n'
                  f'Content-Type: application/octet-stream\r\n\r\n'.encode())
        out.write(data)
        out.write(b"\r\n")
    out.write(f"--{boundary}--\r\n".encode())
    return out.getvalue(), "multipart/form-data; boundary=" + boundary
