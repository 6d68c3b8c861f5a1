"""Tests of the Python client against a running server.

Run by the Go end-to-end tests (cmd/framelake), which start the real binary and
set FRAMELAKE_URL, FRAMELAKE_KEY, FRAMELAKE_SECRET and FRAMELAKE_TEST_IMAGES
(a folder of JPEGs).
"""

import json
import os
import tempfile
import unittest

from framelake import Client, FramelakeError


class ClientTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.client = Client(os.environ["FRAMELAKE_URL"], os.environ["FRAMELAKE_KEY"], os.environ["FRAMELAKE_SECRET"])
        folder = os.environ["FRAMELAKE_TEST_IMAGES"]
        paths = sorted(os.path.join(folder, n) for n in os.listdir(folder))
        cls.uploaded = cls.client.upload_files(paths, collection_name="py", metadata={"source": "python"},
                                              collection_metadata={"origin": "unittest"})

    def test_upload_list_count_details(self):
        stored = self.uploaded["stored"]
        self.assertEqual(len(stored), 4)
        self.assertEqual(self.client.get_item_count_from_lake("image", query="collection = py"), [{"count": 4}])
        items = self.client.get_item_list_from_datalake(
            query="metadata.source = python", page_size=2,
            sort_order={"sort_by_field": "name", "sort_order": "ASC"})
        self.assertEqual([i["name"] for i in items], ["img-00000.jpg", "img-00001.jpg"])
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
        collection = self.client.get_item_list_from_datalake("image_collection", query="name = py")[0]
        got = self.client.patch_collection_metadata(collection["id"], {"site": "lab"})
        self.assertEqual((got["contentType"], got["metadata"]), ("image_collection", {"origin": "unittest", "site": "lab"}))
        self.assertEqual(self.client.get_collection_details(collection["id"], {"site": True})["site"], "lab")
        self.assertEqual(self.client.get_item_count_from_lake("image_collection", query="metadata.site = lab"),
                         [{"count": 1}])
        with self.assertRaises(FramelakeError) as cm:
            self.client.patch_collection_metadata(collection["id"], ["site"])
        self.assertEqual((cm.exception.status, cm.exception.field), (400, "metadata"))
        with self.assertRaises(FramelakeError) as cm:
            self.client.patch_file_metadata("no-such-file", {"a": 1})
        self.assertEqual(cm.exception.status, 404)

    def test_dataset_create_build_download(self):
        items = self.client.get_item_list_from_datalake(query="collection = py")
        collection = self.client.get_item_list_from_datalake("image_collection", query="name = py")[0]
        created = self.client.create_dataset_from_collection(
            "py-set", collection["id"], {"train": 50, "test": 25, "validation": 25}, ["dog"])
        self.assertEqual(created["versionNo"], "1.0")
        self.assertEqual(self.client.wait_job(created["jobId"])["status"], "completed")
        with tempfile.TemporaryDirectory() as tmp:
            folder = self.client.download_dataset(created["versionId"], "RAW", os.path.join(tmp, "out"),
                                                  is_media_include=False)
            found = [os.path.join(r, f) for r, _, fs in os.walk(folder) for f in fs]
            self.assertTrue(any(f.endswith("dataset.json") for f in found), found)
        self.assertEqual(len(items), 4)

    def test_errors_carry_code_and_field(self):
        with self.assertRaises(FramelakeError) as cm:
            self.client.get_item_list_from_datalake(page_size=5000)
        self.assertEqual((cm.exception.status, cm.exception.code, cm.exception.field),
                         (400, "invalid_argument", "page_size"))
        with self.assertRaises(FramelakeError) as cm:
            self.client.get_file_details("no-such-file")
        self.assertEqual(cm.exception.code, "not_found")


if __name__ == "__main__":
    unittest.main()
