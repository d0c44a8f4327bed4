#!/usr/bin/env python3
"""Export Hugging Face BERT-style encoders into a rated model folder (docs/MODELS.md).

Needs internet access (the Hugging Face hub) and `pip install torch transformers`; it is not
run by scripts/setup or CI, which install ready-made ONNX files instead.

Examples:
  # DRAGON+ (the paper's retriever): two towers in one folder.
  python scripts/export-hf-encoder.py --out .rated/models/dragon-plus \\
      --query-model facebook/dragon-plus-query-encoder \\
      --doc-model facebook/dragon-plus-context-encoder --pooling cls
  # A single encoder serving both towers.
  python scripts/export-hf-encoder.py --out .rated/models/bge-base-en-v1.5 \\
      --model BAAI/bge-base-en-v1.5 --pooling cls \\
      --query-prefix "Represent this sentence for searching relevant passages: "
  # A cross-encoder for the reranker (output: one logit per pair).
  python scripts/export-hf-encoder.py --out .rated/models/ms-marco-minilm-l6 \\
      --model cross-encoder/ms-marco-MiniLM-L-6-v2 --cross-encoder

Each ONNX file takes int64 input_ids, attention_mask, token_type_ids of shape [batch, sequence]
and returns float32 last_hidden_state [batch, sequence, dim] (or logits [batch, 1] for a
cross-encoder), with dynamic batch and sequence axes. `rated model info DIR` checks the result.
"""
import argparse
import hashlib
import json
import os
import sys


def sha256(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def export(name, out_path, cross_encoder, opset):
    import torch
    from transformers import AutoModel, AutoModelForSequenceClassification, AutoTokenizer

    tok = AutoTokenizer.from_pretrained(name)
    if not tok.is_fast:
        sys.exit(f"{name}: no fast tokenizer (tokenizer.json); rated needs one")
    if cross_encoder:
        model = AutoModelForSequenceClassification.from_pretrained(name).eval()
        sample = tok(["a query"], ["a document"], return_tensors="pt")
        output_name = "logits"
    else:
        model = AutoModel.from_pretrained(name).eval()
        sample = tok(["a sample text"], return_tensors="pt")
        output_name = "last_hidden_state"
    if "token_type_ids" not in sample:
        sample["token_type_ids"] = torch.zeros_like(sample["input_ids"])

    class Wrapper(torch.nn.Module):
        def __init__(self, m):
            super().__init__()
            self.m = m

        def forward(self, input_ids, attention_mask, token_type_ids):
            out = self.m(input_ids=input_ids, attention_mask=attention_mask, token_type_ids=token_type_ids)
            return out.logits if cross_encoder else out.last_hidden_state

    axes = {"input_ids": {0: "batch", 1: "sequence"}, "attention_mask": {0: "batch", 1: "sequence"},
            "token_type_ids": {0: "batch", 1: "sequence"}, output_name: {0: "batch"}}
    if not cross_encoder:
        axes[output_name][1] = "sequence"
    with torch.no_grad():
        torch.onnx.export(Wrapper(model),
                          (sample["input_ids"], sample["attention_mask"], sample["token_type_ids"]),
                          out_path, input_names=["input_ids", "attention_mask", "token_type_ids"],
                          output_names=[output_name], dynamic_axes=axes, opset_version=opset)
    hidden = model.config.num_labels if cross_encoder else model.config.hidden_size
    return tok, hidden, output_name


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--out", required=True, help="model folder to write")
    p.add_argument("--model", help="one Hugging Face model for both towers")
    p.add_argument("--query-model", help="query tower (DRAGON-style dual encoder)")
    p.add_argument("--doc-model", help="document tower (DRAGON-style dual encoder)")
    p.add_argument("--cross-encoder", action="store_true", help="export a sequence-classification cross-encoder")
    p.add_argument("--pooling", choices=["cls", "mean"], default="cls")
    p.add_argument("--no-normalize", action="store_true", help="keep raw dot products (DRAGON's own scoring)")
    p.add_argument("--max-length", type=int, default=512)
    p.add_argument("--query-prefix", default="")
    p.add_argument("--doc-prefix", default="")
    p.add_argument("--opset", type=int, default=17)
    a = p.parse_args()
    if bool(a.model) == bool(a.query_model or a.doc_model):
        p.error("give --model, or --query-model and --doc-model")
    if not a.model and not (a.query_model and a.doc_model):
        p.error("a dual encoder needs both --query-model and --doc-model")
    os.makedirs(a.out, exist_ok=True)

    lines = [f"name: {os.path.basename(os.path.normpath(a.out))}"]
    if a.model:
        tok, dim, output = export(a.model, os.path.join(a.out, "model.onnx"), a.cross_encoder, a.opset)
        lines += ["model: model.onnx"]
        upstream = a.model
    else:
        tok, dim, output = export(a.query_model, os.path.join(a.out, "query.onnx"), False, a.opset)
        _, dim2, _ = export(a.doc_model, os.path.join(a.out, "doc.onnx"), False, a.opset)
        if dim != dim2:
            sys.exit(f"towers differ in size: {dim} vs {dim2}")
        lines += ["query_model: query.onnx", "doc_model: doc.onnx"]
        upstream = f"{a.query_model} + {a.doc_model}"
    tok.backend_tokenizer.save(os.path.join(a.out, "tokenizer.json"))
    lines += ["tokenizer: tokenizer.json", "towers: both", f"output: {output}"]
    if a.cross_encoder:
        lines += ["kind: cross-encoder", "pooling: none", "normalize: false", "dim: 1"]
    else:
        lines += [f"pooling: {a.pooling}", f"normalize: {'false' if a.no_normalize else 'true'}", f"dim: {dim}"]
    lines += [f"max_length: {a.max_length}",
              f"query_prefix: {json.dumps(a.query_prefix)}", f"doc_prefix: {json.dumps(a.doc_prefix)}",
              "source:", f"  package: huggingface hub (scripts/export-hf-encoder.py)", f"  upstream: {upstream}"]
    # One digest per ONNX file, query tower first: what encode.Open checks on every load.
    files = ["model.onnx"] if a.model else ["query.onnx", "doc.onnx"]
    lines += [f"  model_sha256: {' '.join(sha256(os.path.join(a.out, f)) for f in files)}",
              f"  tokenizer_sha256: {sha256(os.path.join(a.out, 'tokenizer.json'))}"]
    with open(os.path.join(a.out, "rated.yaml"), "w") as f:
        f.write("\n".join(lines) + "\n")
    print(f"wrote {a.out}: check it with `rated model info {a.out}`")


if __name__ == "__main__":
    main()
