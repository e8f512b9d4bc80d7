"""METEOR for every pair at once, equal to NLTK's ``single_meteor_score`` (to 1e-9, tested).

NLTK aligns one pair at a time: exact matches, then Porter-stem matches, then WordNet-synonym
matches, each stage walking the hypothesis from its last word and taking the last free reference
position that qualifies; then it counts chunks and combines precision, recall and fragmentation
(α = 0.9, β = 3, γ = 0.5). Here everything that depends on a word alone is computed once per
vocabulary word (lower-cased form, Porter stem, and which stems are WordNet synonyms of which — NLTK
looks synonyms up on the *stemmed* leftovers, so the relation is between stems), and a compiled
kernel replays the same three stages on integer ids for all pairs. Each reference's positions are
chained by word and by stem once per row, so a hypothesis word finds "the last free reference
position that qualifies" by following the chain of its own word, stem or synonyms instead of
scanning the reference: the same greedy choices (bit-equal to the scan, tested), in less time.

Captions are split on whitespace (``str.split()``) and lower-cased per token, as NLTK's default
``preprocess=str.lower``. Matrix entry ``[i, j]`` = METEOR(reference = row caption i,
hypothesis = column caption j). For videos with several captions the row is a group of references
and the entry is the match kernel K(X, {y}) = ½[mean_x k(x, y) + max_x k(x, y)] (Wray et al.), which
is k itself for a single caption.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numba
import numpy as np


@dataclass
class TokenizedCaptions:
    """Captions as word ids and stem ids, concatenated, with offsets (caption c = [offsets[c], offsets[c+1]))."""

    words: np.ndarray
    stems: np.ndarray
    offsets: np.ndarray


@dataclass
class MeteorVocabulary:
    """Word -> id, word id -> stem id, and the synonym relation between stems (CSR, sorted columns)."""

    word_ids: dict[str, int]
    stem_of_word: list[int]
    stem_ids: dict[str, int]
    synonym_indptr: np.ndarray
    synonym_indices: np.ndarray

    @classmethod
    def build(cls, texts: Sequence[str], wordnet, stemmer=None) -> "MeteorVocabulary":
        from nltk.stem.porter import PorterStemmer

        stemmer = stemmer or PorterStemmer()
        word_ids: dict[str, int] = {}
        for text in texts:
            for token in text.split():
                word_ids.setdefault(token.lower(), len(word_ids))
        stem_ids: dict[str, int] = {}
        stem_of_word = [stem_ids.setdefault(stemmer.stem(word), len(stem_ids)) for word in word_ids]
        indptr, indices = [0], []
        for stem in stem_ids:  # dicts keep insertion order: row r is stem id r
            names = {lemma.name() for synset in wordnet.synsets(stem) for lemma in synset.lemmas() if "_" not in lemma.name()}
            names.add(stem)
            indices.extend(sorted(stem_ids[name] for name in names if name in stem_ids))
            indptr.append(len(indices))
        return cls(word_ids, stem_of_word, stem_ids, np.asarray(indptr, np.int64), np.asarray(indices, np.int64))

    def tokenize(self, texts: Sequence[str]) -> TokenizedCaptions:
        """Word and stem ids of captions; every word must be in the vocabulary (built on these texts)."""
        words = [self.word_ids[token.lower()] for text in texts for token in text.split()]
        lengths = [len(text.split()) for text in texts]
        words_array = np.asarray(words, dtype=np.int64)
        stems = np.asarray(self.stem_of_word, dtype=np.int64)[words_array] if words else np.zeros(0, np.int64)
        return TokenizedCaptions(words_array, stems, np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64))


@numba.njit(cache=True, inline="always")
def _link(keys, last, previous):
    """Chain a reference's positions of each key, last first: ``last[key]``, then ``previous[j]`` (-1 ends)."""
    for j in range(keys.shape[0]):
        previous[j] = last[keys[j]]
        last[keys[j]] = j


@numba.njit(cache=True, inline="always")
def _unlink(keys, last):
    for j in range(keys.shape[0]):
        last[keys[j]] = -1


@numba.njit(cache=True, inline="always")
def _match_equal(hyp_keys, last, previous, taken, match):
    """One equality stage (words or stems): from the last hypothesis word, take the last free equal
    reference position, found by walking the reference's chain of that key (not by scanning it)."""
    matched = 0
    for i in range(hyp_keys.shape[0] - 1, -1, -1):
        if match[i] >= 0:
            continue
        j = last[hyp_keys[i]]
        while j >= 0 and taken[j]:
            j = previous[j]
        if j >= 0:
            taken[j] = True
            match[i] = j
            matched += 1
    return matched


@numba.njit(cache=True, inline="always")
def _last_free_synonym(stem, syn_indptr, syn_indices, last, previous, taken):
    """The last free reference position whose stem is a WordNet synonym of ``stem`` (-1: none), through
    the reference's stem chains: a few look-ups a synonym, not a scan of the reference."""
    best = -1
    for k in range(syn_indptr[stem], syn_indptr[stem + 1]):
        j = last[syn_indices[k]]
        while j > best and taken[j]:
            j = previous[j]
        best = max(best, j)
    return best


@numba.njit(cache=True)
def _meteor_pair(n_ref, hw, hs, word_chains, stem_chains, syn_indptr, syn_indices, has_synonyms, taken, match, alpha, beta, gamma):
    """NLTK's single_meteor_score on id arrays: a reference of ``n_ref`` words, given by its (last,
    previous) chains of word and stem ids (:func:`_link`), and a hypothesis of words hw / stems hs."""
    n_hyp = hw.shape[0]
    if n_ref == 0 or n_hyp == 0:
        return 0.0
    taken[:n_ref] = False
    match[:n_hyp] = -1
    most = min(n_ref, n_hyp)
    matched = _match_equal(hw, word_chains[0], word_chains[1], taken, match)  # exact words
    if matched < most:
        matched += _match_equal(hs, stem_chains[0], stem_chains[1], taken, match)  # Porter stems
    if matched < most:  # WordNet synonyms of the stems left over
        for i in range(n_hyp - 1, -1, -1):
            if match[i] >= 0 or not has_synonyms[hs[i]]:
                continue
            j = _last_free_synonym(hs[i], syn_indptr, syn_indices, stem_chains[0], stem_chains[1], taken)
            if j >= 0:
                taken[j] = True
                match[i] = j
                matched += 1
    if matched == 0:
        return 0.0
    chunks = 0
    previous_i = -2
    previous_j = -2
    for i in range(n_hyp):
        j = match[i]
        if j >= 0:
            if not (i == previous_i + 1 and j == previous_j + 1):
                chunks += 1
            previous_i = i
            previous_j = j
    precision = matched / n_hyp
    recall = matched / n_ref
    fmean = (precision * recall) / (alpha * precision + (1 - alpha) * recall)
    fragmentation = chunks / matched
    penalty = gamma * fragmentation**beta
    return (1 - penalty) * fmean


@numba.njit(parallel=True, cache=True)
def _meteor_groups(
    group_indptr,
    group_members,
    ref_words,
    ref_stems,
    ref_offsets,
    hyp_words,
    hyp_stems,
    hyp_offsets,
    syn_indptr,
    syn_indices,
    has_synonyms,
    alpha,
    beta,
    gamma,
    n_chunks,
    out,
):
    """out[g, h] = ½[mean + max] over the references of group g of METEOR(reference, hypothesis h).

    Each thread owns a range of groups; a group's references are chained by word and by stem once
    (:func:`_link`), and every hypothesis then finds its matches through the chains of its own words.
    """
    n_groups = group_indptr.shape[0] - 1
    n_hyp = hyp_offsets.shape[0] - 1
    longest_ref = 1
    for c in range(ref_offsets.shape[0] - 1):
        longest_ref = max(longest_ref, ref_offsets[c + 1] - ref_offsets[c])
    longest_hyp = 1
    for c in range(n_hyp):
        longest_hyp = max(longest_hyp, hyp_offsets[c + 1] - hyp_offsets[c])
    largest_group = 1
    for g in range(n_groups):
        largest_group = max(largest_group, group_indptr[g + 1] - group_indptr[g])
    n_words = 1 + max(ref_words.max() if ref_words.shape[0] else 0, hyp_words.max() if hyp_words.shape[0] else 0)
    n_stems = 1 + max(ref_stems.max() if ref_stems.shape[0] else 0, hyp_stems.max() if hyp_stems.shape[0] else 0)
    for chunk in numba.prange(n_chunks):
        taken = np.zeros(longest_ref, dtype=np.bool_)
        match = np.empty(longest_hyp, dtype=np.int64)
        last_word = np.full((largest_group, n_words), -1, dtype=np.int32)
        last_stem = np.full((largest_group, n_stems), -1, dtype=np.int32)
        previous_word = np.empty((largest_group, longest_ref), dtype=np.int32)
        previous_stem = np.empty((largest_group, longest_ref), dtype=np.int32)
        for g in range(chunk * n_groups // n_chunks, (chunk + 1) * n_groups // n_chunks):
            first = group_indptr[g]
            size = group_indptr[g + 1] - first
            for k in range(size):
                r = group_members[first + k]
                _link(ref_words[ref_offsets[r] : ref_offsets[r + 1]], last_word[k], previous_word[k])
                _link(ref_stems[ref_offsets[r] : ref_offsets[r + 1]], last_stem[k], previous_stem[k])
            for h in range(n_hyp):
                h0 = hyp_offsets[h]
                h1 = hyp_offsets[h + 1]
                total = 0.0
                best = 0.0
                for k in range(size):
                    r = group_members[first + k]
                    score = _meteor_pair(
                        ref_offsets[r + 1] - ref_offsets[r],
                        hyp_words[h0:h1],
                        hyp_stems[h0:h1],
                        (last_word[k], previous_word[k]),
                        (last_stem[k], previous_stem[k]),
                        syn_indptr,
                        syn_indices,
                        has_synonyms,
                        taken,
                        match,
                        alpha,
                        beta,
                        gamma,
                    )
                    total += score
                    best = max(best, score)
                out[g, h] = 0.5 * (total / size + best)
            for k in range(size):
                r = group_members[first + k]
                _unlink(ref_words[ref_offsets[r] : ref_offsets[r + 1]], last_word[k])
                _unlink(ref_stems[ref_offsets[r] : ref_offsets[r + 1]], last_stem[k])


class MeteorKernel:
    """Rows: groups of reference captions (one caption each at caption level); columns: all captions as hypotheses."""

    def __init__(
        self, texts: Sequence[str], wordnet, groups: Sequence[Sequence[int]] | None = None, alpha: float = 0.9, beta: float = 3.0, gamma: float = 0.5
    ):
        vocabulary = MeteorVocabulary.build(texts, wordnet)
        self.captions = vocabulary.tokenize(texts)
        indptr, indices = vocabulary.synonym_indptr, vocabulary.synonym_indices
        own_stem = np.repeat(np.arange(len(indptr) - 1), np.diff(indptr))
        # A stem whose only WordNet synonym in the vocabulary is itself can never match in the synonym
        # stage (equal stems were matched in the stem stage): skip it there.
        has_synonyms = np.bincount(own_stem[indices != own_stem], minlength=len(indptr) - 1) > 0
        self.synonyms = (indptr, indices, has_synonyms)
        groups = [[i] for i in range(len(texts))] if groups is None else groups
        if any(len(group) == 0 for group in groups):
            raise ValueError("every row group needs at least one reference caption")
        self.group_indptr = np.concatenate([[0], np.cumsum([len(g) for g in groups])]).astype(np.int64)
        self.group_members = np.asarray([i for g in groups for i in g], dtype=np.int64)
        self.parameters = (float(alpha), float(beta), float(gamma))
        self.shape = (len(groups), len(texts))

    def block(self, rows: slice) -> np.ndarray:
        start, stop, _ = rows.indices(self.shape[0])
        out = np.empty((stop - start, self.shape[1]))
        if stop > start:
            c = self.captions
            _meteor_groups(
                self.group_indptr[start : stop + 1],
                self.group_members,
                c.words,
                c.stems,
                c.offsets,
                c.words,
                c.stems,
                c.offsets,
                *self.synonyms,
                *self.parameters,
                min(stop - start, 4 * numba.get_num_threads()),
                out,
            )
        return out
