"""Tests of the Python client against a running server.

Run by the Go end-to-end test TestPythonClient (cmd/framelake), which starts the
real binary with the system default models, installs this package with pip into
a fresh virtual environment and sets FRAMELAKE_URL, FRAMELAKE_KEY and
FRAMELAKE_SECRET (a write key), FRAMELAKE_ADMIN_KEY and FRAMELAKE_ADMIN_SECRET,
FRAMELAKE_TEST_IMAGES (four small JPEGs) and FRAMELAKE_TEST_PHOTOS (dog.jpg and
person.jpg, real photos the default models find things in).
"""

import json
import os
import tempfile
import unittest

from framelake import Client, FramelakeError

# The client functions of docs/spec/interface.md 4.2; test_zz_every_interface_function_called
# checks that each reached the server.
INTERFACE_FUNCTIONS = {
    "get_file_details", "get_collection_details", "get_item_list_from_datalake", "get_item_list_from_collection",
    "get_item_count_from_lake", "get_item_count_from_collection", "register_model", "auto_tag_collection",
    "generate_auto_tags_to_lake", "generate_embeddings_for_collection", "generate_embeddings_to_lake",
    "insert_image_embeddings_batch", "insert_image_embeddings", "get_embedding_vector", "download_dataset",
    "create_dataset_from_collection", "create_dataset_from_datalake", "update_dataset_version_from_collection",
    "update_dataset_version_from_datalake", "auto_annotate_collection", "generate_auto_annotations_to_lake",
}
called = set()


class RecordingClient(Client):
    """Notes every client function it sends."""

    def _request(self, path, body, content_type, method="POST", **kw):
        if path.startswith("/api/v1/client/"):
            called.add(path.rsplit("/", 1)[1])
        return super()._request(path, body, content_type, method, **kw)


# An embedding package (docs/spec/interface.md 2.7, docs/spec/rest.md "Model package contract")
# whose vector is [request body length, 1]; its requirements.txt is empty, so
# registering it needs no index.
LENGTH_EMBEDDER = '''
def model_fn(model_dir):
    return 1.0

def input_fn(body, content_type):
    return body

def predict_fn(data, one):
    return [float(len(data)), one]

def output_fn(prediction, accept):
    return {"embedding": prediction}
'''

SPLIT = {"train": 50, "test": 25, "validation": 25}


class ClientTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        url = os.environ["FRAMELAKE_URL"]
        cls.client = RecordingClient(url, os.environ["FRAMELAKE_KEY"], os.environ["FRAMELAKE_SECRET"])
        cls.admin = RecordingClient(url, os.environ["FRAMELAKE_ADMIN_KEY"], os.environ["FRAMELAKE_ADMIN_SECRET"])
        cls.uploaded = cls.client.upload_files(_files("FRAMELAKE_TEST_IMAGES"), collection_name="py",
                                              metadata={"source": "python"},
                                              collection_metadata={"origin": "unittest"})
        cls.photos = {f["name"]: f["uniqueName"] for f in
                      cls.client.upload_files(_files("FRAMELAKE_TEST_PHOTOS"), collection_name="py-photos")["stored"]}
        cls.collection = cls.client.get_item_list_from_datalake("image_collection", query="name = py")[0]["id"]
        cls.photo_collection = cls.client.get_item_list_from_datalake("image_collection",
                                                                      query="name = py-photos")[0]["id"]

    def finished(self, started: dict) -> dict:
        """Waits for a started run or build and returns its job, which must have completed."""
        job = self.client.wait_job(started["jobId"], timeout=600)
        self.assertEqual(job["status"], "completed", job)
        return job

    def run_counts(self, started: dict) -> dict:
        self.finished(started)
        return self.client.get("/api/v1/runs/" + started["runId"])["counts"]

    def test_upload_list_count_details(self):
        stored = self.uploaded["stored"]
        self.assertEqual(len(stored), 4)
        self.assertEqual(self.client.get_item_count_from_lake("image", query="collection = py"), [{"count": 4}])
        items = self.client.get_item_list_from_datalake(
            query="metadata.source = python", page_size=2,
            sort_order={"sort_by_field": "name", "sort_order": "ASC"})
        self.assertEqual([i["name"] for i in items], ["img-00000.jpg", "img-00001.jpg"])
        items = self.client.get_item_list_from_collection(self.collection, query="name = img-00003.jpg")
        self.assertEqual([i["uniqueName"] for i in items], [stored[3]["uniqueName"]])
        self.assertEqual(self.client.get_item_count_from_collection(self.collection), [{"count": 4}])
        details = self.client.get_file_details(stored[0]["uniqueName"], {"resolution": True, "source": True})
        self.assertEqual(details["source"], "python")
        self.assertEqual(details["resolution"], {"width": 32, "height": 24})

    def test_embeddings(self):
        names = [f["uniqueName"] for f in self.uploaded["stored"]]
        records = [{"uniqueName": n, "embeddings": [1.0 if j == i else 0.1 for j in range(4)]}
                   for i, n in enumerate(names)]
        self.assertEqual(self.client.insert_image_embeddings_batch(records, "py-model", [4])["upsertCount"], 4)
        got = self.client.get_embedding_vector(names[:1] + ["missing-file"], "py-model")
        self.assertEqual(got["missing"], ["missing-file"])
        near = self.client.find_similar("py-model", vector=[1, 0.1, 0.1, 0.1], k=1)["results"]
        self.assertEqual(near[0]["uniqueName"], names[0])
        # The README's form: the dimension as an int, as well as the interface's list.
        self.assertEqual(self.client.insert_image_embeddings(records, "py-int", 4), {"success": True, "upsertCount": 4})
        self.assertEqual(self.client.insert_image_embeddings_batch(records[:1], "py-int", 4)["upsertCount"], 1)
        got = self.client.get_embedding_vector(names, "py-int")["embeddings"]
        self.assertEqual(len(got), 4)

    def test_insert_embeddings_in_batches(self):
        names = [f["uniqueName"] for f in self.uploaded["stored"]]
        records = [{"uniqueName": n, "embeddings": [float(i + 1), 0.5, 0.25]} for i, n in enumerate(names)]
        self.assertEqual(Client.embedding_numbers_per_request, 262_144)
        sent = []
        request = self.client._request

        def spy(path, body, content_type, method="POST"):
            if path.endswith("/insert_image_embeddings"):
                sent.append(len(json.loads(body)["embedding_list"]))
            return request(path, body, content_type, method)

        self.client._request = spy
        try:
            for limit, batches in ((262_144, [4]), (7, [2, 2]), (6, [2, 2]), (2, [1, 1, 1, 1])):
                sent.clear()
                self.client.embedding_numbers_per_request = limit
                got = self.client.insert_image_embeddings(records, "py-batched", [3])
                self.assertEqual(got, {"success": True, "upsertCount": 4}, limit)
                self.assertEqual(sent, batches, limit)
            with self.assertRaises(FramelakeError) as cm:
                self.client.insert_image_embeddings(records[:2] + [{"uniqueName": "no-such-file",
                                                                     "embeddings": [1, 2, 3]}], "py-batched", [3])
            self.assertEqual((cm.exception.code, cm.exception.upsert_count), ("not_found", 2))
        finally:
            del self.client._request
            del self.client.embedding_numbers_per_request
        got = self.client.get_embedding_vector(names, "py-batched")
        self.assertEqual(sorted(e["embeddings"][0] for e in got["embeddings"]), [1.0, 2.0, 3.0, 4.0])

    def test_metadata_merge_patch(self):
        name = self.uploaded["stored"][1]["uniqueName"]
        got = self.client.patch_file_metadata(name, {"lens": {"kind": "wide", "mm": 24}, "shift": 2})
        self.assertEqual(got["metadata"], {"source": "python", "lens": {"kind": "wide", "mm": 24}, "shift": 2})
        got = self.client.patch_file_metadata(name, {"lens": {"mm": None}, "shift": None})
        self.assertEqual(got["metadata"], {"source": "python", "lens": {"kind": "wide"}})
        details = self.client.get_file_details(name, {"lens": True, "shift": True})
        self.assertEqual((details["lens"], details["shift"]), ({"kind": "wide"}, None))
        self.assertEqual(self.client.get_item_count_from_lake("image", query="collection = py AND metadata.shift = 2"),
                         [{"count": 0}])
        got = self.client.patch_collection_metadata(self.collection, {"site": "lab"})
        self.assertEqual((got["contentType"], got["metadata"]), ("image_collection", {"origin": "unittest", "site": "lab"}))
        self.assertEqual(self.client.get_collection_details(self.collection, {"site": True})["site"], "lab")
        self.assertEqual(self.client.get_item_count_from_lake("image_collection", query="metadata.site = lab"),
                         [{"count": 1}])
        with self.assertRaises(FramelakeError) as cm:
            self.client.patch_collection_metadata(self.collection, ["site"])
        self.assertEqual((cm.exception.status, cm.exception.field), (400, "metadata"))
        with self.assertRaises(FramelakeError) as cm:
            self.client.patch_file_metadata("no-such-file", {"a": 1})
        self.assertEqual(cm.exception.status, 404)

    def test_register_model_and_embed_with_it(self):
        with tempfile.TemporaryDirectory() as pkg:
            os.mkdir(os.path.join(pkg, "code"))
            _write(os.path.join(pkg, "code", "inference.py"), LENGTH_EMBEDDER)
            _write(os.path.join(pkg, "code", "requirements.txt"), "")
            with self.assertRaises(FramelakeError) as cm:
                self.client.register_model(pkg, "py-lengths", "embedding")
            self.assertEqual(cm.exception.status, 403)  # registering takes the admin key
            got = self.admin.register_model(pkg, model_id="py-lengths", application="embedding")
            with self.assertRaises(FramelakeError) as cm:
                self.admin.register_model(pkg, "py-lengths", "embedding")
            self.assertEqual(cm.exception.status, 409)  # a taken name is replaced only when asked
            again = self.admin.register_model(pkg, "py-lengths", "embedding", replace=True)
        self.assertEqual(got, {"success": True, "modelName": "py-lengths", "application": "embedding"})
        self.assertEqual(again["modelName"], "py-lengths")

        started = self.client.generate_embeddings_for_collection(self.collection, model_id="py-lengths")
        self.assertEqual(self.run_counts(started)["embeddings"], 4)
        names = [f["uniqueName"] for f in self.uploaded["stored"]]
        got = self.client.get_embedding_vector(names, "py-lengths")
        self.assertEqual(len(got["embeddings"]), 4)
        for e in got["embeddings"]:
            self.assertGreater(e["embeddings"][0], 0)  # the JPEG's length
            self.assertEqual(e["embeddings"][1], 1.0)
        started = self.client.generate_embeddings_to_lake("image", model_name="py-lengths",
                                                          query="collection = py-photos")
        self.assertEqual(self.run_counts(started)["embeddings"], 2)
        with self.assertRaises(FramelakeError) as cm:
            self.client.generate_embeddings_to_lake("image", model_name="py-lengths", model_id="default")
        self.assertEqual((cm.exception.status, cm.exception.field), (400, "model_name"))

    def test_default_models(self):
        started = self.client.auto_tag_collection(self.photo_collection, input_resolution=(416, 416))
        self.assertGreater(self.run_counts(started)["tags"], 0)
        tags = self.client.get_file_details(self.photos["dog.jpg"], {"Tags": True})["Tags"]
        self.assertIn("dog", tags)
        started = self.client.generate_auto_tags_to_lake("image", model_id="default", confidence_threshold=0.4,
                                                         query="collection = py-photos")
        self.assertEqual(self.run_counts(started)["items"], 2)
        self.assertIn("person", self.client.get_file_details(self.photos["person.jpg"], {"Tags": True})["Tags"])

        started = self.client.auto_annotate_collection(self.photo_collection,
                                                       [{"label": "puppy", "description": "a young dog"}])
        self.assertGreater(self.run_counts(started)["boxes"], 0)
        boxed = self.client.get_item_list_from_datalake(query="annotation.label = puppy")
        self.assertIn(self.photos["dog.jpg"], [i["uniqueName"] for i in boxed])
        started = self.client.generate_auto_annotations_to_lake(
            "image", [{"label": "person", "description": "a person"}], query="collection = py-photos")
        self.assertGreater(self.run_counts(started)["boxes"], 0)

        started = self.client.generate_embeddings_to_lake("image", query="collection = py-photos")
        self.assertEqual(self.run_counts(started)["embeddings"], 2)

    def test_dataset_create_update_download(self):
        created = self.client.create_dataset_from_collection("py-set", self.collection, SPLIT, ["dog"])
        self.assertEqual(created["versionNo"], "1.0")
        self.finished(created)
        with tempfile.TemporaryDirectory() as tmp:
            out = os.path.join(tmp, "out")
            folder = self.client.download_dataset(created["versionId"], "RAW", out)
            self.assertEqual(folder, os.path.join(out, "py-set-1.0-raw"))
            self.assertEqual(os.listdir(out), ["py-set-1.0-raw"])  # no doubled folder, no temporary archive left
            self.assertEqual(len(_walk(folder, ".jpg")), 4)
            self.assertTrue(_walk(folder, "dataset.json"))
            # Annotations only, into the current folder by default, named as the Go client names it.
            cwd = os.getcwd()
            os.chdir(tmp)
            try:
                folder = self.client.download_dataset(created["versionId"], "YOLO Darknet", is_media_include=False)
            finally:
                os.chdir(cwd)
            self.assertEqual(folder, "py-set-1.0-yolo-darknet")
            self.assertEqual(_walk(os.path.join(tmp, folder), ".jpg"), [])
            self.assertTrue(_walk(os.path.join(tmp, folder), ".txt"))

        # A new version from a collection, named by the parameter table's dataset_id + version_id.
        updated = self.client.update_dataset_version_from_collection(
            dataset_id=created["datasetId"], version_id=created["versionId"], collection_id=self.photo_collection,
            split_info=SPLIT, labels=["dog"], is_new_version_required=True)
        self.assertEqual((updated["datasetId"], updated["versionNo"]), (created["datasetId"], "2.0"))
        self.finished(updated)
        with self.assertRaises(FramelakeError) as cm:
            self.client.update_dataset_version_from_collection(
                dataset_id="dsg_other", version_id=created["versionId"], collection_id=self.photo_collection,
                split_info=SPLIT, labels=["dog"])
        self.assertEqual((cm.exception.status, cm.exception.field), (400, "dataset_id"))

        # From the lake, then updated in place from the lake.
        lake = self.client.create_dataset_from_datalake("py-lake-set", SPLIT, ["dog", "person"],
                                                        export_types=["YOLO Darknet"], query="collection = py-photos")
        self.finished(lake)
        again = self.client.update_dataset_version_from_datalake(lake["versionId"], SPLIT, ["dog", "person"],
                                                                 query="collection = py")
        self.assertEqual((again["versionId"], again["versionNo"]), (lake["versionId"], "1.0"))
        self.finished(again)
        version = self.client.get("/api/v1/dataset-versions/" + lake["versionId"])
        self.assertEqual(version["stats"]["totalFrames"], 6)
        with tempfile.TemporaryDirectory() as tmp:
            folder = self.client.download_dataset(lake["versionId"], "YOLO Darknet", tmp, is_media_include=True)
            self.assertEqual(folder, os.path.join(tmp, "py-lake-set-1.0-yolo-darknet"))
            self.assertEqual(len(_walk(folder, ".jpg")), 6)

    def test_download_streams_in_chunks(self):
        created = self.client.create_dataset_from_collection("py-stream", self.collection, SPLIT, ["dog"])
        self.finished(created)
        reads = []
        request = self.client._request

        def spy(path, body, content_type, method="POST"):
            resp = request(path, body, content_type, method)
            read = resp.read

            def counted(n=-1):
                reads.append(n)
                return read(n)
            resp.read = counted
            return resp

        self.client._request = spy
        self.client.download_chunk_bytes = 512
        try:
            with tempfile.TemporaryDirectory() as tmp:
                folder = self.client.download_dataset(created["versionId"], "RAW", tmp)
                size = sum(os.path.getsize(p) for p in _walk(folder, ".jpg"))
        finally:
            del self.client._request
            del self.client.download_chunk_bytes
        self.assertGreater(size, 2048)
        self.assertTrue(reads and all(n == 512 for n in reads), reads)  # never the whole body at once
        self.assertGreater(len(reads), size // 512)

    def test_errors_carry_code_and_field(self):
        with self.assertRaises(FramelakeError) as cm:
            self.client.get_item_list_from_datalake(page_size=5000)
        self.assertEqual((cm.exception.status, cm.exception.code, cm.exception.field),
                         (400, "invalid_argument", "page_size"))
        with self.assertRaises(FramelakeError) as cm:
            self.client.get_file_details("no-such-file")
        self.assertEqual(cm.exception.code, "not_found")

    # -- listing and deleting (issue 25's fixed routes) ---------------------------

    def test_list_and_delete_project(self):
        project = self.client.post("/api/v1/projects", {"projectName": "py-doomed", "contentType": 2,
                                                        "labels": [{"labelName": "dog", "labelDescription": ""}]})
        pid = project["projectId"]

        def listed():
            return [p["projectId"] for p in self.client.list_projects(page_size=1000)["projectList"]]
        self.assertIn(pid, listed())
        self.assertEqual(self.client.delete_project(pid)["removed"]["projects"], 1)
        self.assertNotIn(pid, listed())
        with self.assertRaises(FramelakeError) as cm:
            self.client.delete_project(pid)
        self.assertEqual(cm.exception.status, 404)

    def test_declared_labels(self):
        pid = self.client.post("/api/v1/projects", {"projectName": "py-declared", "contentType": 2, "labels": [
            {"labelName": "car", "labelDescription": "",
             "attributes": [{"name": "occluded", "type": "boolean", "required": True}]}]})["projectId"]
        label = self.client.put_label(pid, "face", keypoints=["nose", "left_eye", "right_eye"],
                                      skeleton=[["nose", "left_eye"]], flip_pairs=[["left_eye", "right_eye"]])
        self.assertEqual(label["keypoints"], ["nose", "left_eye", "right_eye"])
        labels = self.client.get_project(pid)["labels"]
        self.assertEqual([l["labelName"] for l in labels], ["car", "face"])
        self.assertEqual(labels[0]["attributes"], [{"name": "occluded", "type": "boolean", "required": True}])
        self.assertEqual(labels[1]["flipPairs"], [["left_eye", "right_eye"]])
        with self.assertRaises(FramelakeError) as cm:
            self.client.put_label(pid, "car", attributes=[{"name": "speed", "type": "number", "min": 5, "max": 1}])
        self.assertEqual(cm.exception.status, 400)
        self.assertIn("min 5 is above max 1", str(cm.exception))
        self.client.delete_project(pid)

    def test_task_of_lake_images(self):
        stored = self.client.upload_files(_files("FRAMELAKE_TEST_IMAGES")[:2], collection_name="py-task-src")["stored"]
        pid = self.client.post("/api/v1/projects", {"projectName": "py-task", "contentType": 2,
                                                    "labels": [{"labelName": "dog", "labelDescription": ""}]})["projectId"]
        task = self.client.create_task(pid, "py-task", unique_names=[f["uniqueName"] for f in stored])
        self.assertEqual((task["status"], task["frameCount"]), (0, 2))
        frames = self.client.task_workspace(task["id"])["frames"]
        first = frames[0]["uniqueName"]
        box = {"label": "dog", "x": 1, "y": 1, "width": 5, "height": 5}
        edit = self.client.replace_frame_annotations(pid, first, [box], version=1)
        self.assertEqual((edit["version"], edit["task"]["status"]), (2, 1))
        with self.assertRaises(FramelakeError) as cm:
            self.client.replace_frame_annotations(pid, first, [], version=1)
        self.assertEqual(cm.exception.status, 409)
        self.assertEqual(cm.exception.body["current"]["annotations"][0]["label"], "dog")
        self.client.replace_frame_annotations(pid, frames[1]["uniqueName"], [])
        self.assertEqual(self.client.complete_task(task["id"])["status"], 2)
        self.assertEqual(self.client.reopen_task(task["id"])["status"], 1)
        self.assertEqual(self.client.frame_annotations(pid, first)["version"], 2)
        with self.assertRaises(FramelakeError) as cm:
            self.client.create_task(pid, "py-task-2", unique_names=[first], start_from="somewhere")
        self.assertEqual((cm.exception.status, cm.exception.field), (400, "startFrom"))

    def test_history_restore_and_stats(self):
        stored = self.client.upload_files(_files("FRAMELAKE_TEST_IMAGES")[:1], collection_name="py-history")["stored"]
        pid = self.client.post("/api/v1/projects", {"projectName": "py-history", "contentType": 2,
                                                    "labels": [{"labelName": "dog", "labelDescription": ""}]})["projectId"]
        name = stored[0]["uniqueName"]
        self.client.create_task(pid, "py-history-task", unique_names=[name], start_from="empty")
        dog = {"label": "dog", "x": 1, "y": 1, "width": 5, "height": 5}
        v = self.client.replace_frame_annotations(pid, name, [dog], version=1)["version"]
        v = self.client.replace_frame_annotations(pid, name, [dog, {**dog, "x": 10}], version=v)["version"]
        changes = self.client.history(project_id=pid)
        self.assertEqual(len(changes), 2)
        first = changes[-1]["id"]
        self.assertEqual(len(self.client.change_shapes(first)), 1)
        with self.assertRaises(FramelakeError) as cm:
            self.client.restore_change(first, version=v - 1)
        self.assertEqual(cm.exception.status, 409)
        restored = self.client.restore_change(first, version=v)
        self.assertEqual((restored["version"], restored["change"]["via"]), (v + 1, "restore of " + first))
        self.assertEqual(len(self.client.frame_annotations(pid, name)["annotations"]), 1)
        people = self.client.people_stats(project_id=pid)
        self.assertEqual([(p["frames"], p["changes"]) for p in people], [(1, 3)])
        self.assertEqual(self.client.agreement(pid)["measuredFrames"], 0)

    def test_team_jobs_comments_members_users(self):
        stored = self.client.upload_files(_files("FRAMELAKE_TEST_IMAGES")[:2], collection_name="py-team")["stored"]
        pid = self.client.post("/api/v1/projects", {"projectName": "py-team", "contentType": 2,
                                                    "labels": [{"labelName": "dog", "labelDescription": ""}]})["projectId"]
        names = [f["uniqueName"] for f in stored]
        task = self.client.create_task(pid, "py-team-task", unique_names=names, start_from="empty")
        # People are an admin's: a curator is refused.
        with self.assertRaises(FramelakeError) as cm:
            self.client.create_user("py-nope", "a long enough password", "annotator")
        self.assertEqual(cm.exception.status, 403)
        for name, role in (("py-ann", "annotator"), ("py-ann2", "annotator"), ("py-rev", "reviewer")):
            self.assertEqual(self.admin.create_user(name, "a long enough password", role)["role"], role)
            self.assertEqual(self.client.put_member(pid, name)["role"], role)
        self.assertEqual([m["name"] for m in self.client.list_members(pid)], ["py-ann", "py-ann2", "py-rev"])
        self.client.delete_member(pid, "py-ann2")
        self.assertEqual([m["name"] for m in self.client.list_members(pid)], ["py-ann", "py-rev"])
        self.assertEqual(self.admin.set_user_role("py-ann2", "reviewer")["role"], "reviewer")
        self.admin.reset_password("py-ann2", "another long password")
        self.assertIn("disabledAt", self.admin.disable_user("py-ann2"))
        self.assertNotIn("disabledAt", self.admin.disable_user("py-ann2", False))
        self.assertIn("py-ann2", [u["name"] for u in self.admin.list_users()])

        jobs = self.client.create_jobs(task["id"], 1, assignees=["py-ann"])
        self.assertEqual([(j["number"], j["assignee"]) for j in jobs], [(1, "py-ann"), (2, "py-ann")])
        self.assertEqual(self.client.reassign_job(task["id"], 2, assignee=None, reviewer="py-rev")["reviewer"], "py-rev")
        self.assertEqual([j["assignee"] for j in self.client.list_jobs(task["id"])], ["py-ann", None])
        self.assertEqual(self.client.get_label_job(task["id"], 1)["frames"][0]["uniqueName"], names[0])
        taken = self.client.next_job(pid)  # the unassigned job 2, to this key's holder
        self.assertEqual(taken["number"], 2)
        self.assertEqual([j["number"] for j in self.client.queue()], [2])
        self.assertEqual(self.client.set_job_state(task["id"], 1, "submitted")["state"], "submitted")
        comment = self.client.add_comment(pid, names[0], "missed the second dog")
        self.assertEqual([c["id"] for c in self.client.frame_comments(pid, names[0])], [comment["id"]])
        self.assertEqual(len(self.client.job_comments(task["id"], 1)), 1)
        self.assertTrue(self.client.resolve_comment(comment["id"])["resolved"])
        self.assertEqual(self.client.set_job_state(task["id"], 1, "in_review")["state"], "in_review")
        judged = self.client.set_job_state(task["id"], 1, "rejected", note="see the comment")
        self.assertEqual(judged["state"], "rejected")

    def test_delete_file_and_collection(self):
        stored = self.client.upload_files(_files("FRAMELAKE_TEST_IMAGES")[:3], collection_name="py-doomed")["stored"]
        doomed = self.client.get_item_list_from_datalake("image_collection", query="name = py-doomed")[0]["id"]
        self.assertEqual(self.client.delete_file(stored[0]["uniqueName"])["removed"]["files"], 1)
        with self.assertRaises(FramelakeError) as cm:
            self.client.get_file_details(stored[0]["uniqueName"])
        self.assertEqual(cm.exception.status, 404)
        self.assertEqual(self.client.get_item_count_from_collection(doomed), [{"count": 2}])
        removed = self.client.delete_collection(doomed, files=True)["removed"]
        self.assertEqual((removed["collections"], removed["files"]), (1, 2))
        with self.assertRaises(FramelakeError) as cm:
            self.client.get_collection_details(doomed)
        self.assertEqual(cm.exception.status, 404)
        with self.assertRaises(FramelakeError) as cm:
            self.client.get_file_details(stored[1]["uniqueName"])
        self.assertEqual(cm.exception.status, 404)
        # The same bytes uploaded elsewhere stay.
        self.assertEqual(self.client.get_item_count_from_lake("image", query="collection = py"), [{"count": 4}])

        kept = self.client.upload_files(_files("FRAMELAKE_TEST_IMAGES")[:1], collection_name="py-emptied")["stored"]
        emptied = self.client.get_item_list_from_datalake("image_collection", query="name = py-emptied")[0]["id"]
        self.assertEqual(self.client.delete_collection(emptied)["removed"].get("files", 0), 0)
        self.assertEqual(self.client.get_file_details(kept[0]["uniqueName"])["uniqueName"], kept[0]["uniqueName"])

    def test_delete_dataset_and_version(self):
        created = self.client.create_dataset_from_collection("py-doomed", self.collection, SPLIT, ["dog"])
        self.finished(created)
        second = self.client.update_dataset_version_from_collection(
            created["versionId"], self.collection, SPLIT, ["dog"], is_new_version_required=True)
        self.finished(second)
        self.assertEqual(self.client.delete_dataset_version(second["versionId"])["removed"]["versions"], 1)
        with self.assertRaises(FramelakeError) as cm:
            self.client.get("/api/v1/dataset-versions/" + second["versionId"])
        self.assertEqual(cm.exception.status, 404)
        self.assertEqual(self.client.delete_dataset(created["datasetId"])["removed"]["datasets"], 1)
        self.assertNotIn(created["datasetId"], [g["id"] for g in self.client.get("/api/v1/datasets")])
        with self.assertRaises(FramelakeError) as cm:
            self.client.download_dataset(created["versionId"], "RAW", tempfile.gettempdir())
        self.assertEqual(cm.exception.status, 404)

    def test_select_samples_uniqueness_and_version_diff(self):
        names = [f["uniqueName"] for f in self.uploaded["stored"]]
        # Three clusters: the first two files nearly alike, the third at 90°, the last opposite the first.
        vectors = [[1.0, 0.0], [0.99, 0.1], [0.0, 1.0], [-1.0, 0.0]]
        self.client.insert_image_embeddings([{"uniqueName": n, "embeddings": v} for n, v in zip(names, vectors)],
                                            "py-select", 2)
        picks = []
        for _ in range(2):
            started = self.client.select_samples(3, "diversity", query="collection = py", model_name="py-select",
                                                 seed=7, tag="py-next")
            picks.append(self.finished(started)["result"]["uniqueNames"])
        self.assertEqual(picks[0], picks[1])
        self.assertEqual(len(set(picks[0]) & set(names[:2])), 1, picks[0])
        kept = self.finished(self.client.select_samples(4, "diversity", query="collection = py",
                                                        model_name="py-select", keep_duplicates=True))
        self.assertEqual(kept["result"]["skippedDuplicates"], 0)
        self.assertEqual(self.client.get_item_count_from_lake("image", query="Tags = py-next"), [{"count": 3}])
        with self.assertRaises(FramelakeError) as cm:
            self.client.select_samples(3, "uncertainty")
        self.assertEqual((cm.exception.status, cm.exception.field), (400, "run_id"))
        # With 4 files every file's 3 nearest are the others: the last is 2, 1.995 and 1 away.
        self.finished(self.client.compute_uniqueness("py-select", query="collection = py"))
        unique = self.client.get_item_list_from_datalake(query="uniqueness > 1.5 AND collection = py")
        self.assertEqual([i["uniqueName"] for i in unique], [names[3]])

        first = self.client.create_dataset_from_datalake("py-diff", SPLIT, ["dog"],
                                                         query="collection = py AND name != img-00003.jpg")
        self.finished(first)
        second = self.client.update_dataset_version_from_datalake(first["versionId"], SPLIT, ["dog"],
                                                                  query="name = img-00003.jpg",
                                                                  is_new_version_required=True)
        self.finished(second)
        diff = self.client.diff_dataset_versions(first["versionId"], second["versionId"])
        self.assertEqual(diff["frames"], {"added": 1, "removed": 0, "moved": 0, "kept": 3, "boxesChanged": 0})
        self.assertEqual(diff["addedNames"], [names[3]])
        self.assertEqual((diff["from"]["stats"]["totalFrames"], diff["to"]["stats"]["totalFrames"]), (3, 4))

    def test_readme_evaluation(self):
        # README's Python example of evaluations, line for line between the markers (evaluate's
        # TestReadmeEvaluationExamples checks that README and these lines agree).
        client, street, dog = self.client, self.photo_collection, self.photos["dog.jpg"]
        # README evaluation example begins
        found = client.auto_annotate_collection(street, [{"label": "dog", "description": "a dog"}])
        self.assertEqual(client.wait_job(found["jobId"])["status"], 'completed')
        self.assertEqual(client.set_lake_annotations("import:review", [{"uniqueName": dog, "annotations": [
            {"label": "dog", "x": 0, "y": 0, "width": 4, "height": 4}]}]), {'changed': 1, 'unchanged': 0})
        job = client.evaluate_detections(found["runId"], "nanodet_py", gt_operations=["import:review"])
        ev = client.wait_job(job["jobId"])["result"]
        self.assertEqual((ev["truth"]["operations"], ev["truth"]["files"], ev["labels"]["dog"]["fn"]), (['import:review'], 1, 1))
        self.assertEqual(client.get_item_count_from_lake("image", query="eval.nanodet_py.fn > 0"), [{'count': 1}])
        self.assertEqual(client.delete_evaluation("nanodet_py"), {'success': True})
        # README evaluation example ends
        client.set_lake_annotations("import:review", [{"uniqueName": dog, "annotations": []}])

    def test_evaluation(self):
        dog = self.photos["dog.jpg"]
        started = self.client.auto_annotate_collection(self.photo_collection, [{"label": "dog", "description": "a dog"}])
        self.finished(started)
        run_id = started["runId"]
        boxes = self.client.get(f"/api/v1/lake/files/{dog}/annotations?operation={run_id}")["annotations"]
        self.assertTrue(boxes)
        # People drew what the model saw, and one dog more that it missed.
        truth = [{k: b[k] for k in ("label", "x", "y", "width", "height")} for b in boxes]
        truth.append({"label": "dog", "x": 0, "y": 0, "width": 4, "height": 4})
        body = json.dumps({"operation": "import:py-truth", "files": [{"uniqueName": dog, "annotations": truth}]})
        self.client._request("/api/v1/lake/annotations", body.encode(), "application/json", method="PUT").close()

        job = self.finished(self.client.evaluate_detections(run_id, "pyeval", gt_operations=["import:py-truth"]))
        ev = job["result"]
        self.assertEqual(ev, self.client.get_evaluation("pyeval"))
        dogs = ev["labels"]["dog"]
        self.assertEqual((dogs["tp"], dogs["fp"], dogs["fn"]), (len(boxes), 0, 1))
        self.assertEqual(ev["confusion"]["labels"], ["dog", "background"])
        self.assertAlmostEqual(ev["AP50"], len(boxes) / (len(boxes) + 1), delta=0.01)
        self.assertEqual(self.client.get_item_count_from_lake("image", query="eval.pyeval.fn > 0"), [{"count": 1}])
        self.assertEqual(self.client.get_file_details(dog, {"evaluations": True})["evaluations"],
                         {"pyeval": {"tp": len(boxes), "fp": 0, "fn": 1}})
        outcomes = self.client.get_evaluation("pyeval", unique_name=dog)["boxes"]
        self.assertEqual(sorted(o["outcome"] for o in outcomes), ["fn"] + ["tp"] * (2 * len(boxes)))
        self.assertIn("pyeval", [e["key"] for e in self.client.list_evaluations()["evaluations"]])
        cmp = self.client.compare_evaluations("pyeval", "pyeval")
        self.assertEqual([l["label"] for l in cmp["labels"]], ["dog"])

        job = self.finished(self.client.find_label_disagreements(run_id, query="collection = py-photos"))
        self.assertEqual((job["result"]["missed"], job["result"]["extra"], job["result"]["mismatched"]), (1, 0, 0))
        self.assertEqual(self.client.get_item_count_from_lake("image", query="disagreement.count > 0"), [{"count": 1}])
        self.client.delete_evaluation("pyeval")
        with self.assertRaises(FramelakeError) as cm:
            self.client.get_evaluation("pyeval")
        self.assertEqual(cm.exception.status, 404)

    def test_shapes(self):
        """Shapes beside boxes (docs/shapes.md): written as dicts, read back with their derived box and area."""
        dog = self.photos["dog.jpg"]
        shapes = [{"label": "dog", "type": "polygon", "polygon": [[10, 10, 30, 10, 30, 30, 10, 30]]},
                  {"label": "night", "type": "class"}]
        self.client.set_lake_annotations("import:py-shapes", [{"uniqueName": dog, "annotations": shapes}])
        got = self.client.get(f"/api/v1/lake/files/{dog}/annotations?operation=import:py-shapes")["annotations"]
        self.assertEqual([(a["type"], a["label"]) for a in got], [("polygon", "dog"), ("class", "night")])
        self.assertEqual((got[0]["x"], got[0]["y"], got[0]["width"], got[0]["height"], got[0]["area"]), (10, 10, 20, 20, 400))
        self.assertEqual(self.client.get_item_count_from_lake("image", query="annotation.type = polygon AND class = night"),
                         [{"count": 1}])
        bad = [{"label": "dog", "type": "polygon", "polygon": [[1, 1, 5, 5]]}]
        with self.assertRaises(FramelakeError) as cm:
            self.client.set_lake_annotations("import:py-shapes", [{"uniqueName": dog, "annotations": bad}])
        self.assertEqual(cm.exception.status, 400)
        self.assertIn("needs at least 3", str(cm.exception))

    def test_curation(self):
        # Uploads are scored at ingest: compute_quality has nothing left to do.
        self.assertEqual(self.client.get_item_count_from_lake("image", query="quality.sharpness > 0 AND collection = py-photos"),
                         [{"count": 2}])
        job = self.finished(self.client.compute_quality("collection = py-photos"))
        self.assertEqual(job["result"], {"scored": 0, "skipped": 0})
        items = self.client.get_item_list_from_datalake(query="collection = py-photos",
                                                        sort_order={"sort_by_field": "quality.brightness", "sort_order": "ASC"})
        bright = [self.client.get_file_details(i["uniqueName"], {"quality": True})["quality"]["brightness"] for i in items]
        self.assertEqual(bright, sorted(bright))
        # dog.jpg and person.jpg are no near duplicates of each other.
        job = self.finished(self.client.find_duplicates("collection = py-photos", threshold=10))
        self.assertEqual((job["result"]["files"], job["result"]["groups"], job["result"]["groupList"]), (2, 0, []))
        with self.assertRaises(FramelakeError) as cm:
            self.client.find_duplicates(method="sift")
        self.assertEqual((cm.exception.status, cm.exception.field), (400, "method"))
        created = self.client.create_dataset_from_datalake("py-leak", SPLIT, ["dog"], query="collection = py-photos",
                                                           keep_duplicates_together=True)
        self.finished(created)
        leak = self.client.get_dataset_leakage(created["versionId"])
        self.assertEqual((leak["frames"], leak["pairs"], leak["crossing"]), (2, 0, 0))
        self.assertEqual(set(leak["splitPairs"]), {"train/test", "train/validation", "test/validation"})

    def test_retry_job(self):
        # Only a failed job runs again: a completed one is a 409, an unknown one a 404 naming it.
        started = self.client.create_dataset_from_collection(
            "py-retry", self.collection, SPLIT, ["car"])
        job = self.finished(started)
        with self.assertRaises(FramelakeError) as e:
            self.client.retry_job(job["id"])
        self.assertEqual((e.exception.status, e.exception.code), (409, "failed_precondition"), e.exception)
        with self.assertRaises(FramelakeError) as e:
            self.client.retry_job("job_nope")
        self.assertEqual(e.exception.status, 404)
        self.assertIn("job_nope", e.exception.message)

    def test_zz_every_interface_function_called(self):
        # Named to run last: the other tests call the functions.
        self.assertEqual(INTERFACE_FUNCTIONS - called, set())


def _files(env: str) -> list:
    folder = os.environ[env]
    return sorted(os.path.join(folder, n) for n in os.listdir(folder))


def _walk(folder: str, suffix: str) -> list:
    return [os.path.join(r, f) for r, _, fs in os.walk(folder) for f in fs if f.endswith(suffix)]


def _write(path: str, text: str):
    with open(path, "w") as f:
        f.write(text)


if __name__ == "__main__":
    unittest.main()
