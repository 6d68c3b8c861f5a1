"""Choosing what to label next (select_samples, compute_uniqueness) and
dataset version diffs (diff_dataset_versions): methods that Client takes in."""

from __future__ import annotations

from typing import Any, Optional


class SelectionMixin:
    """Client methods of issue 24's selection and issue 21's version diff."""

    def call(self, function: str, **params: Any) -> Any:  # provided by Client
        raise NotImplementedError

    def select_samples(self, budget: int, strategy: str, query: Optional[str] = None, run_id: Optional[str] = None,
                       model_name: Optional[str] = None, measure: Optional[str] = None, seed: int = 0,
                       tag: Optional[str] = None, keep_duplicates: bool = False) -> dict:
        """Queues a selection; returns {"jobId"}. The job's result has uniqueNames in selection order.

        strategy is uncertainty (needs run_id), diversity, uniqueness (model_name, default: the
        default embedding model) or hybrid (both); measure least_confidence (default), margin or
        entropy. The chosen files are tagged with tag (default: the job's id). Copies of a chosen
        file (same bytes or one find_duplicates group) are skipped unless keep_duplicates is True;
        the result's skippedDuplicates counts them.
        """
        return self.call("select_samples", budget=budget, strategy=strategy, query=query, run_id=run_id,
                         model_name=model_name, measure=measure, seed=seed, tag=tag,
                         keep_duplicates=keep_duplicates or None)

    def compute_uniqueness(self, model_name: Optional[str] = None, query: Optional[str] = None) -> dict:
        """Queues the uniqueness scores (query field uniqueness) of the images query selects; returns {"jobId"}."""
        return self.call("compute_uniqueness", model_name=model_name, query=query)

    def diff_dataset_versions(self, from_version_id: str, to_version_id: str) -> dict:
        """Frames added, removed and moved between splits, boxes per label, statistics side by side."""
        return self.call("diff_dataset_versions", from_version_id=from_version_id, to_version_id=to_version_id)
