"""Times the reference Hugging Face `tokenizers` on the inputs of BenchmarkTokenizer, single-threaded.

Usage: TOKENIZERS_PARALLELISM=false RAYON_NUM_THREADS=1 \
       python bench_reference.py TOKENIZER.json TEXTS.json MODE MAX_LENGTH BATCH REPEATS

MODE is "encode" (Tokenizer.encode per text) or "encode_batch" (encode_batch over chunks of BATCH
texts, padded to the longest of each chunk). Prints the mean wall-clock and CPU (all threads of the
process) nanoseconds per text over REPEATS passes over all texts, after one warm-up pass.
"""
import json
import sys
import time

from tokenizers import Tokenizer


def main():
    path, texts_path, mode, max_length, batch, repeats = sys.argv[1:7]
    max_length, batch, repeats = int(max_length), int(batch), int(repeats)
    with open(texts_path, encoding="utf-8") as f:
        texts = json.load(f)
    tok = Tokenizer.from_file(path)
    tok.no_padding()
    tok.enable_truncation(max_length)
    if mode == "encode":
        def one_pass():
            for text in texts:
                tok.encode(text)
    elif mode == "encode_batch":
        pad = tok.token_to_id("[PAD]")
        tok.enable_padding(pad_id=pad if pad is not None else 0, pad_token="[PAD]")
        chunks = [texts[i:i + batch] for i in range(0, len(texts), batch)]

        def one_pass():
            for chunk in chunks:
                tok.encode_batch(chunk)
    else:
        raise SystemExit("unknown mode " + mode)
    one_pass()
    start, cpu_start = time.perf_counter(), time.process_time()
    for _ in range(repeats):
        one_pass()
    elapsed, cpu = time.perf_counter() - start, time.process_time() - cpu_start
    n = repeats * len(texts)
    print(int(elapsed * 1e9 / n), int(cpu * 1e9 / n))


if __name__ == "__main__":
    main()
