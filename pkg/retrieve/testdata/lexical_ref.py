"""Reference scores for the lexical retrievers of pkg/retrieve (run by its Go tests).

usage: lexical_ref.py IN.json OUT.json
IN: {"model": "bm25"|"bm25-lucene"|"tfidf", "docs": [{"title", "text"}], "queries": [str],
     "k1", "b", "epsilon" (bm25; k1 and b for bm25-lucene) | "sublinear" (tfidf)}
bm25-lucene analyses text with the documented chain of retrieve.EnglishAnalyzer (possessives,
Lucene's English stop words, PyStemmer's Porter) and scores with bm25s (method "lucene", float64).
OUT: {"doc_tokens": [[str]], "query_tokens": [[str]], "scores": [[float]]} (one row per query)
"""
import json
import re
import sys


def tokenize(text):
    # The documented tokenisation of retrieve.Tokenize.
    return re.findall(r"[^\W_]+", text.lower())


# Lucene's EnglishAnalyzer.ENGLISH_STOP_WORDS_SET.
LUCENE_STOP = set("""a an and are as at be but by for if in into is it no not of on or such that the
their then there these they this to was will with""".split())


def english(text, stemmer):
    # The documented chain of retrieve.EnglishAnalyzer.
    text = re.sub(r"(?<=[^\W_])['\u2019\uff07][sS](?![^\W_])", "", text)
    toks = [t for t in tokenize(text) if t not in LUCENE_STOP]
    return [s for s in stemmer.stemWords(toks) if s]


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
    analyze = tokenize
    if inp["model"] == "bm25-lucene":
        import Stemmer

        stemmer = Stemmer.Stemmer("porter")
        analyze = lambda text: english(text, stemmer)  # noqa: E731
    doc_tokens = [analyze(doc_text(d)) for d in inp["docs"]]
    query_tokens = [analyze(q) for q in inp["queries"]]
    if inp["model"] == "bm25-lucene":
        import bm25s

        bm = bm25s.BM25(method="lucene", k1=inp["k1"], b=inp["b"], dtype="float64")
        bm.index(doc_tokens, show_progress=False)
        n = len(doc_tokens)
        scores = [bm.get_scores(q).tolist() if any(t in bm.vocab_dict for t in q) else [0.0] * n for q in query_tokens]
    elif inp["model"] == "bm25":
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
