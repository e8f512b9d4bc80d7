"""Set proxies (BoW, PoS, SYN): each caption becomes sets of items, and IoU is computed for all pairs at once.

A family of sets is a sparse 0/1 incidence matrix (sets x items). For rows R and columns C,
``|r ∩ c|`` is the sparse product ``R @ C.T`` and ``|r ∪ c| = |r| + |c| - |r ∩ c|``; an empty union
gives IoU 0 (two captions of only stop words are not similar). No Python loop runs over pairs.

Items follow the reference code of Wray et al. (``compat``): BoW takes the caption split on single
spaces minus spaCy's English stop words (case-sensitive, as the reference; empty tokens from repeated
spaces are dropped); PoS takes the text of the spaCy tokens tagged with each part of speech; SYN maps
each of those words to the WordNet synset Lesk picks for its WordNet lemma, in the context of the
caption's space-split words, or to the word itself when WordNet has no synset for it; or, given a
class CSV for that part of speech (EPIC-KITCHENS' ``id,key,instances``), to the class of its lemma.
"""

from __future__ import annotations

import ast
from collections.abc import Mapping, Sequence
from pathlib import Path

import numba
import numpy as np
import scipy.sparse as sp

from tvrbench.errors import InputError
from tvrbench.io.csv_tables import read_csv
from tvrbench.proxies.parsing import ParsedCaptions
from tvrbench.resources import wordnet as load_wordnet

WORDNET_POS = {"VERB": "v", "NOUN": "n", "ADJ": "a", "ADV": "r"}


def stop_words() -> frozenset[str]:
    """spaCy's English stop list (the one the reference code uses)."""
    from spacy.lang.en.stop_words import STOP_WORDS

    return frozenset(STOP_WORDS)


def bow_items(texts: Sequence[str]) -> list[tuple[str, ...]]:
    stops = stop_words()
    return [tuple(w for w in text.split(" ") if w and w not in stops) for text in texts]


def pos_items(parsed: ParsedCaptions, tag: str) -> list[tuple[str, ...]]:
    return [tuple(w for w, p in zip(tokens, tags) if p == tag) for tokens, tags in zip(parsed.tokens, parsed.pos)]


class SynsetMapper:
    """Word -> WordNet synset name by lemmatizing and Lesk, as the reference's ``create_synsets``.

    The lemma is the shortest of ``wordnet._morphy(word, pos)`` (what ``WordNetLemmatizer.lemmatize``
    does) and the sense is ``nltk.wsd.lesk(caption.split(' '), lemma, pos)``; both run on the reader
    given, never on NLTK's global corpus loader.
    """

    def __init__(self, wordnet):
        self.wordnet = wordnet
        self._synsets: dict[str, list] = {}

    def lemma(self, word: str, wn_pos: str) -> str:
        lemmas = self.wordnet._morphy(word, wn_pos)
        return min(lemmas, key=len) if lemmas else word

    def synset(self, context: list[str], word: str, wn_pos: str) -> str:
        from nltk.wsd import lesk

        lemma = self.lemma(word, wn_pos)
        if lemma not in self._synsets:
            self._synsets[lemma] = self.wordnet.synsets(lemma)
        sense = lesk(context, lemma, pos=wn_pos, synsets=self._synsets[lemma])
        return sense.name() if sense is not None else word

    def items(self, parsed: ParsedCaptions, tag: str) -> list[tuple[str, ...]]:
        wn_pos = WORDNET_POS[tag]
        by_text: dict[str, tuple[str, ...]] = {}
        result = []
        for text, words in zip(parsed.texts, pos_items(parsed, tag)):
            if text not in by_text:
                context = text.split(" ")
                by_text[text] = tuple(dict.fromkeys(self.synset(context, w, wn_pos) for w in words))
            result.append(by_text[text])
        return result


def read_classes(path: str | Path) -> dict[str, str]:
    """An EPIC-KITCHENS-style class CSV (``id,key,instances``; instances a list literal) as lemma -> class id."""
    rows = read_csv(path, ("id", "key", "instances"))
    classes: dict[str, str] = {}
    for line, row in enumerate(rows, start=2):
        try:
            instances = ast.literal_eval(row["instances"])
        except (ValueError, SyntaxError):
            instances = None
        if not isinstance(instances, list) or not all(isinstance(word, str) for word in instances):
            raise InputError(path, f"line {line}: instances must be a list of words, e.g. \"['put', 'place']\"")
        for word in instances:
            if word in classes and classes[word] != row["id"]:
                raise InputError(path, f"line {line}: {word!r} is in classes {classes[word]} and {row['id']}")
            classes[word] = row["id"]
    return classes


class ClassMapper(SynsetMapper):
    """Word -> class of its WordNet lemma from a class CSV (the reference's ``get_dict_synset``).

    A lemma in no class stands for itself. (The reference numbers such lemmas ``len(dictionary)``,
    which can collide with a real class id; a separate namespace avoids that.)
    """

    def __init__(self, wordnet, classes: Mapping[str, str]):
        super().__init__(wordnet)
        self.classes = classes

    def synset(self, context: list[str], word: str, wn_pos: str) -> str:
        lemma = self.lemma(word, wn_pos)
        return f"class:{self.classes[lemma]}" if lemma in self.classes else f"lemma:{lemma}"


def proxy_items(
    texts: Sequence[str],
    parsed: ParsedCaptions | None,
    proxy: str,
    pos_weights: Mapping[str, float],
    wordnet=None,
    classes: Mapping[str, Mapping[str, str]] | None = None,
) -> dict[str, list[tuple[str, ...]]]:
    """The item families of one proxy: ``{part: items per caption}`` (one part for BoW).

    ``parsed`` (the parses of ``texts``) is needed for PoS and SYN only: BoW splits the text on spaces.
    ``classes`` (SYN only): per part of speech, a lemma -> class mapping that replaces WordNet senses.
    """
    if proxy == "bow":
        return {"words": bow_items(texts)}
    if proxy == "pos":
        return {tag: pos_items(parsed, tag) for tag in pos_weights}
    if proxy == "syn":
        if wordnet is None:
            wordnet = load_wordnet()
        classes = classes or {}
        senses = SynsetMapper(wordnet)
        return {tag: (ClassMapper(wordnet, classes[tag]) if tag in classes else senses).items(parsed, tag) for tag in pos_weights}
    raise ValueError(f"not a set proxy: {proxy}")


def proxy_weights(proxy: str, pos_weights: Mapping[str, float]) -> dict[str, float]:
    return {"words": 1.0} if proxy == "bow" else dict(pos_weights)


def incidence(items: Sequence[Sequence[str]], vocabulary: dict[str, int]) -> sp.csr_matrix:
    """0/1 matrix (len(items) x len(vocabulary)); new items are added to ``vocabulary``."""
    indptr = [0]
    indices: list[int] = []
    for row in items:
        columns = {vocabulary.setdefault(item, len(vocabulary)) for item in row}
        indices.extend(sorted(columns))
        indptr.append(len(indices))
    data = np.ones(len(indices), dtype=np.float64)
    return sp.csr_matrix((data, np.asarray(indices, dtype=np.int64), np.asarray(indptr, dtype=np.int64)), shape=(len(items), len(vocabulary)))


def video_sets(caption_sets: sp.csr_matrix, membership: sp.csr_matrix, fraction: float) -> sp.csr_matrix:
    """A video's set: the items present in at least ``fraction`` of its captions (Wray et al.: 25%)."""
    counts = (membership @ caption_sets).tocsr()
    n_captions = np.asarray(membership.sum(axis=1)).ravel()
    row_of_entry = np.repeat(np.arange(counts.shape[0]), np.diff(counts.indptr))
    keep = counts.data / n_captions[row_of_entry] >= fraction
    counts.data = keep.astype(np.float64)
    counts.eliminate_zeros()
    return counts


@numba.njit(parallel=True, cache=True)
def _add_iou(row_indptr, row_items, column_indptr, posting_indptr, posting_columns, weight, n_chunks, out):
    """out[r, c] += weight * |r ∩ c| / |r ∪ c| where the sets meet (elsewhere IoU is 0 and ``out`` stays).

    ``posting`` lists the columns holding each item; rows are split in ``n_chunks`` chunks, each with
    its own counters, reset after every row on the columns it touched.
    """
    n_rows, n_columns = out.shape
    for chunk in numba.prange(n_chunks):
        intersection = np.zeros(n_columns, dtype=np.int64)
        touched = np.empty(n_columns, dtype=np.int64)
        for r in range(chunk * n_rows // n_chunks, (chunk + 1) * n_rows // n_chunks):
            n_touched = 0
            for k in range(row_indptr[r], row_indptr[r + 1]):
                item = row_items[k]
                for p in range(posting_indptr[item], posting_indptr[item + 1]):
                    c = posting_columns[p]
                    if intersection[c] == 0:
                        touched[n_touched] = c
                        n_touched += 1
                    intersection[c] += 1
            row_size = row_indptr[r + 1] - row_indptr[r]
            for t in range(n_touched):
                c = touched[t]
                union = row_size + (column_indptr[c + 1] - column_indptr[c]) - intersection[c]
                out[r, c] += weight * (intersection[c] / union)
                intersection[c] = 0


# Small blocks run on one thread: waking a busy second core costs more than the work.
_add_iou_serial = numba.njit(cache=True)(_add_iou.py_func)
PARALLEL_CELLS = 1 << 23


class IoUKernel:
    """Σ_p α_p IoU(row set_p, column set_p) for blocks of rows; ``parts`` = [(rows, columns, α_p)].

    Intersections are counted through an inverted index (item -> columns holding it), the sparse
    product R @ C.T row by row in a compiled loop, and each IoU is one float64 division, as in the
    reference's ``len(intersection) / len(union)``.
    """

    def __init__(self, parts: list[tuple[sp.csr_matrix, sp.csr_matrix, float]]):
        self._parts = []
        for rows, columns, weight in parts:
            postings = columns.T.tocsr()
            self._parts.append(
                (
                    rows.indptr.astype(np.int64),
                    rows.indices.astype(np.int64),
                    columns.indptr.astype(np.int64),
                    postings.indptr.astype(np.int64),
                    postings.indices.astype(np.int64),
                    float(weight),
                )
            )
        self.shape = (parts[0][0].shape[0], parts[0][1].shape[0])

    def block(self, rows: slice) -> np.ndarray:
        start, stop, _ = rows.indices(self.shape[0])
        out = np.zeros((stop - start, self.shape[1]))
        add = _add_iou if out.size >= PARALLEL_CELLS else _add_iou_serial
        for row_indptr, row_items, column_indptr, posting_indptr, posting_columns, weight in self._parts:
            add(
                row_indptr[start : stop + 1] - row_indptr[start],
                row_items[row_indptr[start] : row_indptr[stop]],
                column_indptr,
                posting_indptr,
                posting_columns,
                weight,
                min(stop - start, 4 * numba.get_num_threads()),
                out,
            )
        return out
