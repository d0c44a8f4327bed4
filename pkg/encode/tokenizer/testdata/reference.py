"""Reference encodings from the Hugging Face `tokenizers` library, for tokenizer_test.go.

Usage: python reference.py JOBS.json OUT.json

JOBS.json: {"inputs": {name: [str] or [[str, str]]},
           "jobs": [{"tokenizer": path, "mode": "encode"|"batch"|"file", "input": name,
                     "max_length": int (0: no truncation), "batch_size": int (batch mode)}]}
OUT.json:  {"results": [{"vocab_size": int, "encodings": [[ids, type_ids, attention_mask]]}]}

encode: encode_batch without padding; batch: encode_batch in chunks of batch_size padded to the
longest of each chunk (pad id of [PAD]); file: the tokenizer exactly as configured in the file
(its own truncation and padding). All jobs run in one process, so the reference starts once.
"""
import json
import sys

from tokenizers import Tokenizer


_loaded = {}


def run(job, inputs):
    mode = job["mode"]
    if mode == "file":
        tok = Tokenizer.from_file(job["tokenizer"])
    else:
        # Loading is the slow part of small jobs; every job sets padding and truncation itself.
        tok = _loaded.get(job["tokenizer"])
        if tok is None:
            tok = _loaded[job["tokenizer"]] = Tokenizer.from_file(job["tokenizer"])
    if mode != "file":
        tok.no_padding()
        if job["max_length"] > 0:
            tok.enable_truncation(job["max_length"])
        else:
            tok.no_truncation()
    inputs = inputs[job["input"]]
    if inputs and isinstance(inputs[0], list):
        inputs = [tuple(p) for p in inputs]
    chunks = [inputs]
    if mode == "batch":
        pad = tok.token_to_id("[PAD]")
        tok.enable_padding(pad_id=pad if pad is not None else 0, pad_token="[PAD]")
        size = job["batch_size"]
        chunks = [inputs[i:i + size] for i in range(0, len(inputs), size)]
    out = []
    for chunk in chunks:
        for enc in tok.encode_batch(chunk):
            out.append([enc.ids, enc.type_ids, enc.attention_mask])
    return {"vocab_size": tok.get_vocab_size(), "encodings": out}


def main():
    with open(sys.argv[1], encoding="utf-8") as f:
        doc = json.load(f)
    results = [run(job, doc["inputs"]) for job in doc["jobs"]]
    with open(sys.argv[2], "w", encoding="utf-8") as f:
        json.dump({"results": results}, f, separators=(",", ":"))


if __name__ == "__main__":
    main()
