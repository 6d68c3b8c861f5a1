"""Curation functions of the framelake client: quality scores, near-duplicate
groups and dataset split leakage. Client inherits them; they send through its
call()."""

from __future__ import annotations

from typing import Any, Optional


class Curation:
    def compute_quality(self, query: Optional[str] = None) -> dict:
        """Starts a job scoring the images query selects (all when None) that have
        no quality scores yet; returns {"jobId"}. Uploads are scored at ingest."""
        return self.call("compute_quality", query=query)

    def find_duplicates(self, query: Optional[str] = None, method: str = "phash", model_name: Optional[str] = None,
                        threshold: Optional[float] = None, tag_duplicates: bool = False,
                        remove_from_collection: Optional[str] = None) -> dict:
        """Starts a job recording near-duplicate groups; returns {"jobId"}. The job's
        result lists the groups ("groupList": group, keeper, members). method "phash"
        compares perceptual hashes (threshold: Hamming distance, default 10),
        "embedding" the vectors of model_name (threshold: cosine distance, default 0.05).
        tag_duplicates tags every member but the keeper "near-duplicate";
        remove_from_collection (a collection id) takes them out of that collection."""
        return self.call("find_duplicates", query=query, method=method, model_name=model_name, threshold=threshold,
                         tag_duplicates=tag_duplicates or None, remove_from_collection=remove_from_collection)

    def get_dataset_leakage(self, version_id: str, threshold: Optional[int] = None) -> dict:
        """The near-duplicate pairs (perceptual hash within threshold, default 10) that
        a dataset version splits between train, validation and test: "pairs",
        "crossing", "splitPairs" {"train/test", "train/validation", "test/validation"}
        and the first crossing pairs under "examples"."""
        return self.call("get_dataset_leakage", version_id=version_id, threshold=threshold)

    def call(self, function: str, **params: Any) -> Any:  # provided by Client
        raise NotImplementedError
