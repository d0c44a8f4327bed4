"""numpy reference for batched exact top-k search (docs/BENCHMARKS.md, batched exact search):
the same shapes as BenchmarkSearchBatchVsNumpy, random unit vectors generated here. Threads are
set by the caller through OPENBLAS_NUM_THREADS / OMP_NUM_THREADS before numpy loads.

stdin: {"n", "dim", "batch", "k", "rounds"}
stdout: {"matmul_ms_per_query": float, "matmul_cpu_ms_per_query": float (process CPU time, all
         threads), "search_ms_per_query": float (matmul + argpartition top k
         + sort of the k), "blas": str, "numpy": str}
"""
import json
import sys
import time

import numpy as np

req = json.load(sys.stdin)
n, dim, batch, k, rounds = req["n"], req["dim"], req["batch"], req["k"], req["rounds"]
rng = np.random.default_rng(1)
docs = rng.standard_normal((n, dim), dtype=np.float32)
docs /= np.linalg.norm(docs, axis=1, keepdims=True)
queries = rng.standard_normal((rounds, batch, dim), dtype=np.float32)
queries /= np.linalg.norm(queries, axis=2, keepdims=True)


def search(q):
    s = q @ docs.T
    top = np.argpartition(-s, k, axis=1)[:, :k]
    order = np.argsort(-np.take_along_axis(s, top, axis=1), axis=1, kind="stable")
    return np.take_along_axis(top, order, axis=1)


search(queries[0])  # warm-up
t, c = time.perf_counter(), time.process_time()
for r in range(rounds):
    queries[r] @ docs.T
matmul = (time.perf_counter() - t) / (rounds * batch)
matmul_cpu = (time.process_time() - c) / (rounds * batch)
t = time.perf_counter()
for r in range(rounds):
    search(queries[r])
full = (time.perf_counter() - t) / (rounds * batch)
cfg = np.show_config(mode="dicts") if hasattr(np, "show_config") else {}
blas = cfg.get("Build Dependencies", {}).get("blas", {}).get("name", "?") if isinstance(cfg, dict) else "?"
json.dump({"matmul_ms_per_query": matmul * 1e3, "matmul_cpu_ms_per_query": matmul_cpu * 1e3, "search_ms_per_query": full * 1e3, "blas": blas, "numpy": np.__version__}, sys.stdout)
