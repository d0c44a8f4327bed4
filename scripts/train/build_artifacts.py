#!/usr/bin/env python3
"""Builds ONNX Runtime training artifacts for InfoNCE fine-tuning of a model folder.

Input: a model folder with model.onnx (inputs input_ids, attention_mask[, token_type_ids], int64
[batch, seq]; first output the token states [batch, seq, hidden] or a pooled [batch, hidden]) and
rated.yaml (`pooling: mean|cls`). Output (artifact directory): training_model.onnx, eval_model.onnx,
optimizer_model.onnx (AdamW), checkpoint, and artifacts.json describing the bound shapes, the input
names, the row layout and the trainable parameters, which `pkg/train` reads.

The loss is built directly in ONNX (no torch): pool (CLS or attention-masked mean), L2-normalise,
logits = q . d^T / tau over all documents of the batch (the B in-batch positives, then the B*N hard
negatives), softmax cross-entropy against the query's own positive (label i for query i, fed as the
int64 input `labels`). Towers:
  shared  one encoder; rows 0..B-1 are queries, B..2B-1 positives, 2B.. the hard negatives
          (query i's j-th negative at row 2B + i*N + j); inputs input_ids, attention_mask, token_type_ids.
  dual    two copies of the encoder with their own parameters (DRAGON style), prefixed `q.` and `d.`;
          inputs q.input_ids ... for the B queries and d.input_ids ... for the B*(1+N) documents.
Shapes are bound once (batch and sequence length fixed); the opset is kept at <= 17; every
LayerNormalization gets its mean and inv-std outputs (the gradient builder needs them); nothing is
constant-folded. generate_artifacts runs with loss=None, since the graph already ends in the loss.
"""
import argparse
import copy
import json
import os
import re

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

MAX_OPSET = 17
MIN_OPSET = 13


def import_artifacts():
    """Imports onnxruntime.training.artifacts without torch.

    onnxruntime/training/__init__.py imports the torch-based optimizers (ORTModule, FP16_Optimizer);
    the artifact builder (artifacts.py, onnxblock) works on ONNX models alone. Registering the
    package with its __path__ but without running its __init__ lets the submodules import as usual.
    """
    import importlib
    import importlib.util
    import sys
    import types

    spec = importlib.util.find_spec("onnxruntime")
    if "onnxruntime.training" not in sys.modules:
        pkg = types.ModuleType("onnxruntime.training")
        pkg.__path__ = [os.path.join(os.path.dirname(spec.origin), "training")]
        sys.modules["onnxruntime.training"] = pkg
    return importlib.import_module("onnxruntime.training.artifacts")


def read_pooling(model_dir):
    path = os.path.join(model_dir, "rated.yaml")
    if not os.path.exists(path):
        return "mean"
    with open(path) as f:
        for line in f:
            m = re.match(r"^\s*pooling\s*:\s*['\"]?(\w+)", line)
            if m:
                return m.group(1).lower()
    return "mean"


def prepare_encoder(model):
    """Brings the opset into [13, 17] and gives every LayerNormalization its three outputs."""
    opset = next((o.version for o in model.opset_import if o.domain in ("", "ai.onnx")), MAX_OPSET)
    if opset > MAX_OPSET or opset < MIN_OPSET:
        # The loss nodes use opset-13 signatures (ReduceSum/Unsqueeze axes as inputs); older exports
        # (Xenova's are opset 11) are upgraded, newer ones lowered to what the gradient builder knows.
        from onnx import version_converter
        model = version_converter.convert_version(model, min(max(opset, MIN_OPSET), MAX_OPSET))
    for i, n in enumerate(model.graph.node):
        if n.op_type == "LayerNormalization":
            while len(n.output) < 3:
                n.output.append(f"{n.name or 'ln'}_{i}_stat{len(n.output)}")
            for j in (1, 2):
                if n.output[j] == "":
                    n.output[j] = f"{n.name or 'ln'}_{i}_stat{j}"
    return model


def trainable_names(model):
    """Float initializers with at least two elements are parameters; scalars and ints are constants."""
    out = []
    for t in model.graph.initializer:
        if t.data_type in (TensorProto.FLOAT, TensorProto.FLOAT16) and len(t.dims) >= 1 and int(np.prod(t.dims)) >= 2:
            out.append(t.name)
    return out


def bind_inputs(graph, rows, seq):
    names = []
    for inp in graph.input:
        if inp.name in {t.name for t in graph.initializer}:
            continue
        dims = inp.type.tensor_type.shape.dim
        if len(dims) != 2:
            raise SystemExit(f"build_artifacts: input {inp.name} has rank {len(dims)}, want 2 ([batch, seq])")
        dims[0].ClearField("dim_param")
        dims[0].dim_value = rows
        dims[1].ClearField("dim_param")
        dims[1].dim_value = seq
        names.append(inp.name)
    return names


def prefixed(model, prefix):
    m = copy.deepcopy(model)
    return onnx.compose.add_prefix(m, prefix, rename_nodes=True, rename_edges=True, rename_inputs=True,
                                   rename_outputs=True, rename_initializers=True, rename_value_infos=True,
                                   rename_functions=True)


class LossBuilder:
    def __init__(self):
        self.nodes, self.inits, self.k = [], [], 0

    def const(self, name, arr):
        self.inits.append(numpy_helper.from_array(np.asarray(arr), name))
        return name

    def op(self, op_type, inputs, **attrs):
        self.k += 1
        out = f"infonce_{op_type}_{self.k}"
        self.nodes.append(helper.make_node(op_type, inputs, [out], name=out, **attrs))
        return out

    def embed(self, hidden, mask, pooling, rank):
        """Pooled, L2-normalised embeddings [rows, hidden]."""
        if rank == 2:
            pooled = hidden
        elif pooling == "cls":
            pooled = self.op("Gather", [hidden, "infonce_zero"], axis=1)
        else:
            m = self.op("Unsqueeze", [self.op("Cast", [mask], to=TensorProto.FLOAT), "infonce_axis2"])
            summed = self.op("ReduceSum", [self.op("Mul", [hidden, m]), "infonce_axis1"], keepdims=0)
            count = self.op("Max", [self.op("ReduceSum", [m, "infonce_axis1"], keepdims=0), "infonce_tiny"])
            pooled = self.op("Div", [summed, count])
        sq = self.op("ReduceSum", [self.op("Mul", [pooled, pooled]), "infonce_axis1"], keepdims=1)
        return self.op("Div", [pooled, self.op("Sqrt", [self.op("Add", [sq, "infonce_eps"])])])

    def add_common_constants(self, tau):
        self.const("infonce_zero", np.array(0, np.int64))
        self.const("infonce_axis1", np.array([1], np.int64))
        self.const("infonce_axis2", np.array([2], np.int64))
        self.const("infonce_tiny", np.array(1e-9, np.float32))
        self.const("infonce_eps", np.array(1e-12, np.float32))
        self.const("infonce_inv_tau", np.array(1.0 / tau, np.float32))

    def infonce(self, q, d):
        logits = self.op("Mul", [self.op("MatMul", [q, self.op("Transpose", [d], perm=[1, 0])]), "infonce_inv_tau"])
        self.nodes.append(helper.make_node("SoftmaxCrossEntropyLoss", [logits, "labels"], ["loss"],
                                           name="infonce_loss", reduction="mean"))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--model", required=True, help="model folder (model.onnx, rated.yaml)")
    ap.add_argument("--out", required=True, help="artifact directory to write")
    ap.add_argument("--batch", type=int, default=8, help="queries per step (B)")
    ap.add_argument("--negatives", type=int, default=1, help="hard negatives per query (N)")
    ap.add_argument("--seq", type=int, default=256, help="bound sequence length")
    ap.add_argument("--tau", type=float, default=0.05)
    ap.add_argument("--towers", choices=["shared", "dual"], default="shared")
    ap.add_argument("--pooling", choices=["mean", "cls"], help="overrides rated.yaml")
    # No --weight-decay: generate_artifacts builds AdamW with onnxblock's defaults (weight decay
    # 0.01, recorded in artifacts.json); a flag that parsed a value and never used it was removed.
    a = ap.parse_args()

    B, N, S = a.batch, a.negatives, a.seq
    pooling = a.pooling or read_pooling(a.model)
    if pooling not in ("mean", "cls"):
        raise SystemExit(f"build_artifacts: {a.model}/rated.yaml: pooling {pooling!r} is neither mean nor cls")
    enc = prepare_encoder(onnx.load(os.path.join(a.model, "model.onnx")))
    enc_inputs = [i.name for i in enc.graph.input if i.name not in {t.name for t in enc.graph.initializer}]
    for need in ("input_ids", "attention_mask"):
        if need not in enc_inputs:
            raise SystemExit(f"build_artifacts: {a.model}/model.onnx has no input {need} (inputs: {enc_inputs})")
    out0 = enc.graph.output[0]
    rank = len(out0.type.tensor_type.shape.dim) or 3
    for o in list(enc.graph.output)[1:]:
        enc.graph.output.remove(o)

    lb = LossBuilder()
    lb.add_common_constants(a.tau)
    if a.towers == "shared":
        g = copy.deepcopy(enc)
        inputs = bind_inputs(g.graph, B * (2 + N), S)
        params = trainable_names(g)
        emb = lb.embed(out0.name, "attention_mask", pooling, rank)
        q = lb.op("Slice", [emb, lb.const("infonce_q_start", np.array([0], np.int64)),
                            lb.const("infonce_q_end", np.array([B], np.int64)), "infonce_zero_axis"])
        d = lb.op("Slice", [emb, lb.const("infonce_d_start", np.array([B], np.int64)),
                            lb.const("infonce_d_end", np.array([B * (2 + N)], np.int64)), "infonce_zero_axis"])
        lb.const("infonce_zero_axis", np.array([0], np.int64))
        base = g
    else:
        qg, dg = prefixed(enc, "q."), prefixed(enc, "d.")
        qin = bind_inputs(qg.graph, B, S)
        din = bind_inputs(dg.graph, B * (1 + N), S)
        inputs = qin + din
        params = trainable_names(qg) + trainable_names(dg)
        base = helper.make_model(
            helper.make_graph(list(qg.graph.node) + list(dg.graph.node), "dual_encoder",
                              list(qg.graph.input) + list(dg.graph.input), [],
                              list(qg.graph.initializer) + list(dg.graph.initializer)),
            opset_imports=list(enc.opset_import))
        q = lb.embed("q." + out0.name, "q.attention_mask", pooling, rank)
        d = lb.embed("d." + out0.name, "d.attention_mask", pooling, rank)
    lb.infonce(q, d)

    graph = base.graph
    graph.node.extend(lb.nodes)
    graph.initializer.extend(lb.inits)
    while len(graph.output):
        graph.output.pop()
    graph.input.append(helper.make_tensor_value_info("labels", TensorProto.INT64, [B]))
    graph.output.append(helper.make_tensor_value_info("loss", TensorProto.FLOAT, []))
    for imp in base.opset_import:
        if imp.domain in ("", "ai.onnx") and imp.version > MAX_OPSET:
            imp.version = MAX_OPSET
    base.ir_version = min(base.ir_version or 8, 9)
    onnx.checker.check_model(base)

    os.makedirs(a.out, exist_ok=True)
    artifacts = import_artifacts()
    artifacts.generate_artifacts(base, requires_grad=params, loss=None,
                                 optimizer=artifacts.OptimType.AdamW, artifact_directory=a.out)
    desc = {
        "format": 1,
        "source_model": os.path.abspath(os.path.join(a.model, "model.onnx")),
        "towers": a.towers,
        "batch": B,
        "negatives": N,
        "seq": S,
        "tau": a.tau,
        "pooling": pooling,
        "encoder_inputs": enc_inputs,
        "inputs": inputs + ["labels"],
        "output": out0.name,
        "parameters": params,
        "weight_decay_note": "AdamW with onnxblock defaults (weight_decay 0.01, eps 1e-8, betas 0.9/0.999)",
    }
    with open(os.path.join(a.out, "artifacts.json"), "w") as f:
        json.dump(desc, f, indent=1)
    print(f"build_artifacts: {a.towers} B={B} N={N} S={S} tau={a.tau} pooling={pooling}: "
          f"{len(params)} trainable tensors -> {a.out}")


if __name__ == "__main__":
    main()
