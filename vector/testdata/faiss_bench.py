"""FAISS and numpy side of vector's benchmark (BenchmarkVsFAISS in bench_test.go).

Reads the vectors and queries the Go benchmark wrote, builds an exact
IndexFlatIP over L2-normalized vectors (inner product = cosine), times adding
and single-query top-k search, and prints one JSON line with timings and the
ids (row numbers) of each query's top k. Then it answers rounds the Go side
asks for on stdin, one word a line, so both sides are timed in turns in one
run: "faiss" times the single queries on the index again, "numpy" times numpy
brute force (the matrix-vector product xb @ q with numpy's BLAS, then
argpartition and a sort of the top k); each answers a JSON line with the
median. Needs Debian's python3-faiss and python3-numpy; run with
/usr/bin/python3.

File layout, little-endian: int32 n, dim, nq, k; float32 vectors[n][dim];
float32 queries[nq][dim].
"""
import json
import statistics
import sys
import time

import faiss
import numpy as np


def rss_mb():
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return 0.0


def main(path):
    with open(path, "rb") as f:
        n, dim, nq, k = np.frombuffer(f.read(16), dtype="<i4")
        xb = np.frombuffer(f.read(4 * n * dim), dtype="<f4").reshape(n, dim).copy()
        xq = np.frombuffer(f.read(4 * nq * dim), dtype="<f4").reshape(nq, dim).copy()
    rss_before = rss_mb()
    t0 = time.perf_counter()
    faiss.normalize_L2(xb)
    index = faiss.IndexFlatIP(int(dim))
    index.add(xb)
    add_s = time.perf_counter() - t0
    faiss.normalize_L2(xq)
    index.search(xq[:1], int(k))  # warm-up
    times, ids = [], []
    for i in range(nq):
        t0 = time.perf_counter()
        _, I = index.search(xq[i : i + 1], int(k))
        times.append(time.perf_counter() - t0)
        ids.append(I[0].tolist())
    t0 = time.perf_counter()
    index.search(xq, int(k))
    batch_s = time.perf_counter() - t0
    print(
        json.dumps({
            "faiss_version": faiss.__version__,
            "threads": faiss.omp_get_max_threads(),
            "add_s": add_s,
            "add_per_s": n / add_s,
            "query_median_ms": statistics.median(times) * 1e3,
            "batch_ms_per_query": batch_s * 1e3 / nq,
            "index_mb": rss_mb() - rss_before,
            "rss_mb": rss_mb(),
            "ids": ids,
            "blas": blas_name(),
        }),
        flush=True,
    )
    for line in sys.stdin:
        kind = line.strip()
        search = faiss_search if kind == "faiss" else numpy_search
        times = []
        for i in range(nq):
            t0 = time.perf_counter()
            search(index, xb, xq[i], int(k))
            times.append(time.perf_counter() - t0)
        print(json.dumps({"kind": kind, "median_ms": statistics.median(times) * 1e3}), flush=True)


def faiss_search(index, xb, q, k):
    return index.search(q.reshape(1, -1), k)


def numpy_search(index, xb, q, k):
    s = xb @ q
    top = np.argpartition(-s, k)[:k]
    return top[np.argsort(-s[top], kind="stable")]


def blas_name():
    try:
        cfg = np.show_config(mode="dicts")
        return cfg["Build Dependencies"]["blas"]["name"]
    except Exception:  # older numpy: show_config has no mode
        import os

        return os.path.realpath("/etc/alternatives/libblas.so.3-x86_64-linux-gnu")


if __name__ == "__main__":
    main(sys.argv[1])
