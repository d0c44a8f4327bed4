"""Reference embeddings for pkg/encode tests: Python onnxruntime on one sequence at a time
(no padding), pooled and normalised with numpy, independently of the Go code.

stdin: {"model": path, "pooling": "cls"|"mean", "normalize": bool, "threads": int,
        "sequences": [{"input_ids": [...], "token_type_ids": [...]}]}
stdout: {"version": ort.__version__, "vectors": [[...], ...]}
"""
import json
import sys

import numpy as np
import onnxruntime as ort

req = json.load(sys.stdin)
so = ort.SessionOptions()
so.intra_op_num_threads = req.get("threads", 1)
sess = ort.InferenceSession(req["model"], so, providers=["CPUExecutionProvider"])
names = [i.name for i in sess.get_inputs()]
out = []
for seq in req["sequences"]:
    ids = np.array([seq["input_ids"]], dtype=np.int64)
    feed = {"input_ids": ids, "attention_mask": np.ones_like(ids)}
    if "token_type_ids" in names:
        feed["token_type_ids"] = np.array([seq["token_type_ids"]], dtype=np.int64)
    hidden = sess.run(["last_hidden_state"], feed)[0][0].astype(np.float64)  # [seq, dim]
    if req["pooling"] == "cls":
        v = hidden[0]
    elif req["pooling"] == "mean":
        v = hidden.mean(axis=0)
    else:
        raise SystemExit("unknown pooling " + req["pooling"])
    if req["normalize"]:
        v = v / np.linalg.norm(v)
    out.append(v.tolist())
json.dump({"version": ort.__version__, "vectors": out}, sys.stdout)
