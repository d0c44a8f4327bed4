#!/usr/bin/env python3
"""Writes a BERT encoder as an ONNX graph (opset 17) without torch, for fine-tuning development and
the training benchmarks.

Two sources of weights:
  --safetensors FILE --config config.json   a Hugging Face BertModel or BertForMaskedLM checkpoint
                                            (e.g. all-MiniLM-L6-v2; old gamma/beta LayerNorm names too)
  --random --layers L --hidden H ...        random weights of a given size (BERT-base: 12/768/12/3072)

The graph takes input_ids, attention_mask, token_type_ids (int64 [batch, seq], both dynamic) and
returns last_hidden_state [batch, seq, hidden]. It is the layout `pkg/train` expects from any model
folder: the fine-tuning loss (pooling, InfoNCE) is added by build_artifacts.py, not here.
The model folder written with --out also gets rated.yaml (pooling) and, when given, tokenizer.json.

--head splade (a BertForMaskedLM checkpoint) adds the masked-language-model head (dense, GELU,
LayerNorm, the decoder tied to the word embeddings unless the checkpoint has its own, plus the
vocabulary bias) and SPLADE's pooling, and returns instead
  logits [batch, seq, vocab]   the MLM logits
  splade [batch, vocab]        max over the unmasked positions of log(1 + ReLU(logits))
(scripts/setup.d/23-models-splade.sh; the sparse retriever of pkg/retrieve reads splade).
"""
import argparse
import json
import os
import shutil
import struct

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def read_safetensors(path):
    with open(path, "rb") as f:
        n = struct.unpack("<Q", f.read(8))[0]
        header = json.loads(f.read(n))
        data = f.read()
    out = {}
    dtypes = {"F32": np.float32, "F16": np.float16, "BF16": None, "I64": np.int64}
    for name, meta in header.items():
        if name == "__metadata__":
            continue
        start, end = meta["data_offsets"]
        dt = dtypes[meta["dtype"]]
        if dt is None:
            raw = np.frombuffer(data[start:end], dtype=np.uint16).astype(np.uint32) << 16
            arr = raw.view(np.float32)
        else:
            arr = np.frombuffer(data[start:end], dtype=dt)
        name = name.removeprefix("bert.")
        # Checkpoints saved before transformers 3 name LayerNorm parameters gamma and beta.
        if ".LayerNorm." in name:
            name = name.replace(".gamma", ".weight").replace(".beta", ".bias")
        out[name] = arr.reshape(meta["shape"]).astype(np.float32) if arr.dtype != np.int64 else arr.reshape(meta["shape"])
    return out


def random_weights(cfg, seed):
    rng = np.random.default_rng(seed)
    h, i = cfg["hidden_size"], cfg["intermediate_size"]

    def w(*shape):
        return (rng.standard_normal(shape) * 0.02).astype(np.float32)

    p = {
        "embeddings.word_embeddings.weight": w(cfg["vocab_size"], h),
        "embeddings.position_embeddings.weight": w(cfg["max_position_embeddings"], h),
        "embeddings.token_type_embeddings.weight": w(cfg["type_vocab_size"], h),
        "embeddings.LayerNorm.weight": np.ones(h, np.float32),
        "embeddings.LayerNorm.bias": np.zeros(h, np.float32),
    }
    for layer in range(cfg["num_hidden_layers"]):
        b = f"encoder.layer.{layer}."
        for name in ("attention.self.query", "attention.self.key", "attention.self.value", "attention.output.dense"):
            p[b + name + ".weight"] = w(h, h)
            p[b + name + ".bias"] = np.zeros(h, np.float32)
        p[b + "intermediate.dense.weight"] = w(i, h)
        p[b + "intermediate.dense.bias"] = np.zeros(i, np.float32)
        p[b + "output.dense.weight"] = w(h, i)
        p[b + "output.dense.bias"] = np.zeros(h, np.float32)
        for ln in ("attention.output.LayerNorm", "output.LayerNorm"):
            p[b + ln + ".weight"] = np.ones(h, np.float32)
            p[b + ln + ".bias"] = np.zeros(h, np.float32)
    return p


def build_graph(cfg, params, head="none"):
    h = cfg["hidden_size"]
    heads = cfg["num_attention_heads"]
    dh = h // heads
    eps = float(cfg.get("layer_norm_eps", 1e-12))
    nodes, inits = [], []

    def init(name, arr):
        inits.append(numpy_helper.from_array(np.asarray(arr), name))
        return name

    counter = [0]

    def node(op, inputs, **attrs):
        counter[0] += 1
        out = f"{op}_{counter[0]}"
        nodes.append(helper.make_node(op, inputs, [out], name=out, **attrs))
        return out

    def linear(x, prefix):
        wt = init(prefix + ".weight", params[prefix + ".weight"].T.copy())  # stored [in, out]
        bias = init(prefix + ".bias", params[prefix + ".bias"])
        return node("Add", [node("MatMul", [x, wt]), bias])

    def layer_norm(x, prefix):
        g = init(prefix + ".weight", params[prefix + ".weight"])
        b = init(prefix + ".bias", params[prefix + ".bias"])
        return node("LayerNormalization", [x, g, b], axis=-1, epsilon=eps)

    init("const_zero_i64", np.array(0, np.int64))
    init("const_one_i64", np.array(1, np.int64))
    init("const_axis01", np.array([0], np.int64))
    init("const_axes12", np.array([1, 2], np.int64))
    init("const_one_f", np.array(1.0, np.float32))
    init("const_mask_neg", np.array(-10000.0, np.float32))
    init("const_half", np.array(0.5, np.float32))
    init("const_sqrt2", np.array(np.sqrt(2.0), np.float32))
    init("const_scale", np.array(1.0 / np.sqrt(dh), np.float32))
    init("const_heads_shape", np.array([0, 0, heads, dh], np.int64))

    def gelu(t):
        # BERT's exact GELU: 0.5 x (1 + erf(x / sqrt 2)).
        return node("Mul", [node("Mul", [t, "const_half"]),
                            node("Add", [node("Erf", [node("Div", [t, "const_sqrt2"])]), "const_one_f"])])
    init("const_merge_shape", np.array([0, 0, h], np.int64))

    seq_len = node("Gather", [node("Shape", ["input_ids"]), "const_one_i64"], axis=0)
    pos = node("Unsqueeze", [node("Range", ["const_zero_i64", seq_len, "const_one_i64"]), "const_axis01"])
    word = node("Gather", [init("embeddings.word_embeddings.weight", params["embeddings.word_embeddings.weight"]), "input_ids"])
    posemb = node("Gather", [init("embeddings.position_embeddings.weight", params["embeddings.position_embeddings.weight"]), pos])
    tt = node("Gather", [init("embeddings.token_type_embeddings.weight", params["embeddings.token_type_embeddings.weight"]), "token_type_ids"])
    x = layer_norm(node("Add", [node("Add", [word, posemb]), tt]), "embeddings.LayerNorm")

    maskf = node("Cast", ["attention_mask"], to=TensorProto.FLOAT)
    ext = node("Unsqueeze", [node("Mul", [node("Sub", ["const_one_f", maskf]), "const_mask_neg"]), "const_axes12"])

    for layer in range(cfg["num_hidden_layers"]):
        b = f"encoder.layer.{layer}."

        def split_heads(t, perm):
            return node("Transpose", [node("Reshape", [t, "const_heads_shape"])], perm=perm)

        q = split_heads(linear(x, b + "attention.self.query"), [0, 2, 1, 3])
        k = split_heads(linear(x, b + "attention.self.key"), [0, 2, 3, 1])
        v = split_heads(linear(x, b + "attention.self.value"), [0, 2, 1, 3])
        scores = node("Add", [node("Mul", [node("MatMul", [q, k]), "const_scale"]), ext])
        ctx = node("MatMul", [node("Softmax", [scores], axis=-1), v])
        ctx = node("Reshape", [node("Transpose", [ctx], perm=[0, 2, 1, 3]), "const_merge_shape"])
        x = layer_norm(node("Add", [linear(ctx, b + "attention.output.dense"), x]), b + "attention.output.LayerNorm")
        x = layer_norm(node("Add", [linear(gelu(linear(x, b + "intermediate.dense")), b + "output.dense"), x]), b + "output.LayerNorm")
    inputs = [helper.make_tensor_value_info(n, TensorProto.INT64, ["batch", "sequence"])
              for n in ("input_ids", "attention_mask", "token_type_ids")]
    if head == "splade":
        outputs = splade_head(cfg, params, x, maskf, node, init, linear, layer_norm, gelu, nodes)
    else:
        nodes.append(helper.make_node("Identity", [x], ["last_hidden_state"], name="output"))
        outputs = [helper.make_tensor_value_info("last_hidden_state", TensorProto.FLOAT, ["batch", "sequence", h])]
    graph = helper.make_graph(nodes, "bert", inputs, outputs, inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], producer_name="rated-bert-onnx")
    model.ir_version = 8
    onnx.checker.check_model(model)
    return model


def splade_head(cfg, params, x, maskf, node, init, linear, layer_norm, gelu, nodes):
    """The MLM head and SPLADE pooling over the token states x; returns the graph outputs."""
    vocab = cfg["vocab_size"]
    t = layer_norm(gelu(linear(x, "cls.predictions.transform.dense")), "cls.predictions.transform.LayerNorm")
    # The decoder is tied to the word embeddings unless the checkpoint stores its own.
    dec = params.get("cls.predictions.decoder.weight", params["embeddings.word_embeddings.weight"])
    bias = params.get("cls.predictions.decoder.bias", params["cls.predictions.bias"])
    logits = node("Add", [node("MatMul", [t, init("cls.predictions.decoder.weight.T", dec.T.copy())]),
                          init("cls.predictions.bias", bias)])
    nodes.append(helper.make_node("Identity", [logits], ["logits"], name="logits_out"))
    init("const_axis2", np.array([2], np.int64))
    act = node("Log", [node("Add", [node("Relu", [logits]), "const_one_f"])])
    masked = node("Mul", [act, node("Unsqueeze", [maskf, "const_axis2"])])
    nodes.append(helper.make_node("ReduceMax", [masked], ["splade"], name="splade_out", axes=[1], keepdims=0))
    return [helper.make_tensor_value_info("splade", TensorProto.FLOAT, ["batch", vocab]),
            helper.make_tensor_value_info("logits", TensorProto.FLOAT, ["batch", "sequence", vocab])]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--safetensors")
    ap.add_argument("--config", help="Hugging Face config.json")
    ap.add_argument("--random", action="store_true")
    ap.add_argument("--layers", type=int, default=6)
    ap.add_argument("--hidden", type=int, default=384)
    ap.add_argument("--heads", type=int, default=12)
    ap.add_argument("--intermediate", type=int, default=1536)
    ap.add_argument("--vocab", type=int, default=30522)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--pooling", choices=["mean", "cls"], default="mean")
    ap.add_argument("--head", choices=["none", "splade"], default="none",
                    help="splade: add the MLM head and SPLADE pooling (outputs splade and logits)")
    ap.add_argument("--tokenizer", help="tokenizer.json to copy into the model folder")
    ap.add_argument("--out", required=True, help="model folder to write")
    a = ap.parse_args()
    if a.random:
        cfg = dict(hidden_size=a.hidden, num_hidden_layers=a.layers, num_attention_heads=a.heads,
                   intermediate_size=a.intermediate, vocab_size=a.vocab, max_position_embeddings=512,
                   type_vocab_size=2, layer_norm_eps=1e-12)
        params = random_weights(cfg, a.seed)
    else:
        with open(a.config) as f:
            cfg = json.load(f)
        params = read_safetensors(a.safetensors)
    model = build_graph(cfg, params, a.head)
    os.makedirs(a.out, exist_ok=True)
    onnx.save(model, os.path.join(a.out, "model.onnx"))
    with open(os.path.join(a.out, "rated.yaml"), "w") as f:
        if a.head == "splade":
            f.write(f"output: splade\npooling: none\nnormalize: false\ndim: {cfg['vocab_size']}\n")
        else:
            f.write(f"pooling: {a.pooling}\nnormalize: true\ndim: {cfg['hidden_size']}\n")
    if a.tokenizer:
        shutil.copy(a.tokenizer, os.path.join(a.out, "tokenizer.json"))
    print(f"wrote {a.out}/model.onnx ({cfg['num_hidden_layers']} layers, hidden {cfg['hidden_size']})")


if __name__ == "__main__":
    main()
