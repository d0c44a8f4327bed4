"""Reference scores for the lexical retrievers of pkg/retrieve (run by its Go tests).

usage: lexical_ref.py IN.json OUT.json
IN: {"model": "bm25"|"tfidf", "docs": [{"title", "text"}], "queries": [str],
     "k1", "b", "epsilon" (bm25) | "sublinear" (tfidf)}
OUT: {"doc_tokens": [[str]], "query_tokens": [[str]], "scores": [[float]]} (one row per query)
"""
import json
import re
import sys


def tokenize(text):
    # The documented tokenisation of retrieve.Tokenize.
    return re.findall(r"[^\W_]+", text.lower())


def doc_text(d):
    # The documented rule of retrieve.DocText.
    if not d["title"]:
        return d["text"]
    if not d["text"]:
        return d["title"]
    return d["title"] + ": " + d["text"]


def main():
    with open(sys.argv[1]) as f:
        inp = json.load(f)
    doc_tokens = [tokenize(doc_text(d)) for d in inp["docs"]]
    query_tokens = [tokenize(q) for q in inp["queries"]]
    if inp["model"] == "bm25":
        from rank_bm25 import BM25Okapi

        bm = BM25Okapi(doc_tokens, k1=inp["k1"], b=inp["b"], epsilon=inp["epsilon"])
        scores = [bm.get_scores(q).tolist() for q in query_tokens]
    elif inp["model"] == "tfidf":
        from sklearn.feature_extraction.text import TfidfVectorizer

        vec = TfidfVectorizer(
            tokenizer=lambda toks: toks,
            preprocessor=lambda toks: toks,
            lowercase=False,
            token_pattern=None,
            norm="l2",
            use_idf=True,
            smooth_idf=True,
            sublinear_tf=inp["sublinear"],
        )
        d = vec.fit_transform(doc_tokens)
        q = vec.transform(query_tokens)
        scores = (q @ d.T).toarray().tolist()
    else:
        raise SystemExit("unknown model " + inp["model"])
    with open(sys.argv[2], "w") as f:
        json.dump({"doc_tokens": doc_tokens, "query_tokens": query_tokens, "scores": scores}, f)


if __name__ == "__main__":
    main()
