"""Python onnxruntime throughput on the same model, texts, batch size and threads as the Go
benchmark (BenchmarkEncode): tokenizers (Rust) + onnxruntime + numpy pooling/normalisation,
the same pipeline pkg/encode runs.

stdin: {"model", "tokenizer", "pooling", "max_length", "threads", "batch", "texts", "passes",
        optional "batch_tokens"}
With batch_tokens, the texts are batched as pkg/encode batches a call: all tokenized first,
sorted by token count (longest first, ties in input order), batches cut so that rows x longest
row <= batch_tokens and rows <= batch. Without it, consecutive chunks of batch texts.
stdout: {"ns_per_text": float, "cpu_ns_per_text": float (process CPU time), "texts": int,
         "tokens": int (real tokens per pass), "padded": int (padded tokens per pass), "version": str}
"""
import json
import sys
import time

import numpy as np
import onnxruntime as ort
from tokenizers import Tokenizer

req = json.load(sys.stdin)
tok = Tokenizer.from_file(req["tokenizer"])
tok.enable_truncation(req["max_length"])
tok.enable_padding()  # to the longest of each batch, like pkg/encode
so = ort.SessionOptions()
so.intra_op_num_threads = req["threads"]
so.inter_op_num_threads = 1
sess = ort.InferenceSession(req["model"], so, providers=["CPUExecutionProvider"])
names = [i.name for i in sess.get_inputs()]
texts, bs = req["texts"], req["batch"]


def encode(batch):
    encs = tok.encode_batch(batch)
    ids = np.array([e.ids for e in encs], dtype=np.int64)
    mask = np.array([e.attention_mask for e in encs], dtype=np.int64)
    feed = {"input_ids": ids, "attention_mask": mask}
    if "token_type_ids" in names:
        feed["token_type_ids"] = np.array([e.type_ids for e in encs], dtype=np.int64)
    hidden = sess.run(["last_hidden_state"], feed)[0]
    if req["pooling"] == "cls":
        v = hidden[:, 0]
    else:
        m = mask[:, :, None].astype(np.float32)
        v = (hidden * m).sum(1) / np.clip(m.sum(1), 1e-9, None)
    return v / np.linalg.norm(v, axis=1, keepdims=True)


def plan(texts):
    """Batches of texts: budget batching (as pkg/encode) or consecutive chunks."""
    budget = req.get("batch_tokens")
    if not budget:
        return [texts[i:i + bs] for i in range(0, len(texts), bs)]
    tok.no_padding()
    lengths = [len(e.ids) for e in tok.encode_batch(texts)]
    tok.enable_padding()
    order = sorted(range(len(texts)), key=lambda i: -lengths[i])  # stable: ties keep input order
    out, start = [], 0
    while start < len(order):
        longest, end = max(lengths[order[start]], 1), start + 1
        while end < len(order) and end - start < bs and (end - start + 1) * longest <= budget:
            end += 1
        out.append([texts[i] for i in order[start:end]])
        start = end
    return out


tokens = padded = 0  # counted outside the timed passes
for batch in plan(texts):
    encs = tok.encode_batch(batch)
    tokens += sum(sum(e.attention_mask) for e in encs)
    padded += len(encs) * len(encs[0].ids)
encode(texts[:bs])  # warm-up
start, cpu = time.perf_counter(), time.process_time()
for _ in range(req["passes"]):  # one pass: every text once (planning included, as in Go)
    for batch in plan(texts):
        encode(batch)
elapsed, cpu = time.perf_counter() - start, time.process_time() - cpu
done = req["passes"] * len(texts)
json.dump({"ns_per_text": elapsed * 1e9 / done, "cpu_ns_per_text": cpu * 1e9 / done, "texts": done,
           "tokens": tokens, "padded": padded, "version": ort.__version__}, sys.stdout)
