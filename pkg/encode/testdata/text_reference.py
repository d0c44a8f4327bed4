"""Reference text embeddings for pkg/encode tests: Hugging Face `tokenizers` + Python
onnxruntime, one text at a time (no padding), pooled and normalised with numpy.

stdin: {"model": path, "tokenizer": path, "pooling": "cls"|"mean"|"none", "max_length": int,
        "output": ONNX output name, "normalize": bool, "texts": [str]}   (prefixes already applied)
stdout: {"vectors": [[...]], "lengths": [int]}
"""
import json
import sys

import numpy as np
import onnxruntime as ort
from tokenizers import Tokenizer

req = json.load(sys.stdin)
tok = Tokenizer.from_file(req["tokenizer"])
tok.no_padding()
tok.enable_truncation(req["max_length"])
so = ort.SessionOptions()
so.intra_op_num_threads = 1
sess = ort.InferenceSession(req["model"], so, providers=["CPUExecutionProvider"])
names = [i.name for i in sess.get_inputs()]
vectors, lengths = [], []
for text in req["texts"]:
    enc = tok.encode(text)
    ids = np.array([enc.ids], dtype=np.int64)
    feed = {"input_ids": ids, "attention_mask": np.ones_like(ids)}
    if "token_type_ids" in names:
        feed["token_type_ids"] = np.array([enc.type_ids], dtype=np.int64)
    out = sess.run([req.get("output", "last_hidden_state")], feed)[0][0].astype(np.float64)
    if req["pooling"] == "none":
        v = out
    else:
        v = out[0] if req["pooling"] == "cls" else out.mean(axis=0)
    if req.get("normalize", True):
        v = v / np.linalg.norm(v)
    vectors.append(v.tolist())
    lengths.append(len(enc.ids))
json.dump({"vectors": vectors, "lengths": lengths}, sys.stdout)
