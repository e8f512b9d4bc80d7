"""What texts show about how verbs are used: the evidence the argument fit reads.

* a verb–argument table (:class:`Usage`) parsed with spaCy from WordNet's 48,339 example sentences
  (parsed once and cached), to which the caption collection's own parses are added: which subjects,
  objects and prepositions each verb is seen with;
* Google Web n-gram bigram counts (``wordsegment``): "talking about", "explains how";
* GloVe 6B 50d (:class:`Association`): how strongly a verb and a noun go together.

How each signal changed the contrasts a reader sees is in docs/contrast.md.
"""

from __future__ import annotations

import functools
import json
import sys
from collections import defaultdict
from collections.abc import Iterable

import numpy as np

from tvrbench.generators.verb.frames import ANIMAL, DIRECTIONS, GENERIC_OBJECTS, PERSON, TOPICAL, VEHICLE, Frame, NounClasses, frame_of
from tvrbench.generators.verb.phrases import heads_a_clause
from tvrbench.io.disk_cache import kept_json
from tvrbench.resources import wordnet, wordnet_fingerprint
from tvrbench.signature import text_digest

VERSION = "verb-usage-v10"  # bump when what is stored changes
BIGRAM_WORDS = DIRECTIONS | TOPICAL | {"to", "with", "at", "for", "on", "from", "into", "how"}  # verbs before these join the pool


def _empty_entry() -> dict:
    return {"s": {}, "o": {}, "k": {}, "p": {}, "q": {}, "c": {}, "i": 0}


class Usage:
    """Per verb lemma, how texts use it: subject classes, objects (lemma and class), the prepositions
    right after it (alone, and with their noun's class), complements, and uses with neither an object
    nor a complement. Counts from spaCy parses of the verbs that head an active clause."""

    def __init__(self, data: dict[str, dict] | None = None):
        self.data: dict[str, dict] = data if data is not None else {}

    @classmethod
    def of_docs(cls, docs: Iterable, classes: NounClasses) -> "Usage":
        usage = cls()
        for doc in docs:
            for token in doc:
                if token.pos_ == "VERB" and token.lemma_.isalpha() and heads_a_clause(token):
                    usage.add(token.lemma_.lower(), frame_of(token, token.i + 1, classes))
        return usage

    def add(self, lemma: str, frame: Frame) -> None:
        entry = self.data.setdefault(lemma, _empty_entry())
        with_class = f"{frame.preposition}|{frame.preposition_class}" if frame.preposition and frame.preposition_class else None
        values = (frame.subject, frame.object, frame.preposition, with_class, frame.complement)
        for key, value in zip("sopqc", values):
            if value is not None:
                entry[key][value] = entry[key].get(value, 0) + 1
        entry["i"] += frame.object is None and frame.complement is None  # used on its own: "she laughed"

    def merged(self, other: "Usage") -> "Usage":
        """Both tables' counts added (a new table)."""
        data = json.loads(json.dumps(self.data))
        result = Usage(data)
        for lemma, entry in other.data.items():
            mine = data.setdefault(lemma, _empty_entry())
            for key in "sopqc":
                for value, count in entry[key].items():
                    mine[key][value] = mine[key].get(value, 0) + count
            mine["i"] += entry["i"]
        return result

    def get(self, lemma: str, key: str, value: str) -> int:
        """How often ``lemma`` is seen with ``value`` in slot ``key`` ("s" subject class, "o" object, "p"
        preposition, "q" preposition|noun class, "c" complement)."""
        entry = self.data.get(lemma)
        return 0 if entry is None else entry[key].get(value, 0)

    def alone(self, lemma: str) -> int:
        """How often ``lemma`` is used with neither an object nor a complement."""
        entry = self.data.get(lemma)
        return 0 if entry is None else entry["i"]

    def objects(self, lemma: str) -> dict[str, int]:
        entry = self.data.get(lemma)
        return {} if entry is None else entry["o"]

    def verbs_seen_with(self) -> dict[str, list[str]]:
        """``o:NOUN`` (an object) or ``p:WORD`` (the preposition after the verb) → the verbs seen with
        it, sorted: where the pool finds verbs that fit the original's arguments."""
        found: dict[str, set[str]] = defaultdict(set)
        for lemma, entry in self.data.items():
            for obj in entry["o"]:
                if obj not in GENERIC_OBJECTS:
                    found[f"o:{obj}"].add(lemma)
            for word in entry["p"]:
                found[f"p:{word}"].add(lemma)
        return {key: sorted(verbs) for key, verbs in found.items()}


# --------------------------------------------------------------------------- WordNet's own texts, cached


# Classes finer than the lexicographer files where the files lump things a verb tells apart ("a person"
# is noun.Tops; a car, a guitar and a shirt are all noun.artifact). The first anchor a sense reaches wins.
ANCHORS = (
    ("person.n.01", PERSON), ("people.n.01", PERSON), ("social_group.n.01", PERSON), ("animal.n.01", ANIMAL),
    ("food.n.01", "noun.food"), ("food.n.02", "noun.food"), ("vehicle.n.01", VEHICLE), ("craft.n.02", VEHICLE),
    ("musical_instrument.n.01", "instrument"), ("clothing.n.01", "clothing"), ("headdress.n.01", "clothing"),
    ("container.n.01", "container"), ("structure.n.01", "structure"), ("device.n.01", "device"), ("implement.n.01", "device"),
)  # fmt: skip


def _noun_classes(wn) -> dict[str, str]:
    """Each one-word noun lemma's class by its first sense: an anchor its hypernyms reach, else its file."""
    anchors = [(wn.synset(name), label) for name, label in ANCHORS]
    classes = {}
    for synset in wn.all_synsets("n"):
        for lemma in synset.lemmas():
            name = lemma.name().lower()
            if "_" in name or name in classes or wn.synsets(name, pos="n")[0] != synset:
                continue
            above = {synset, *synset.closure(lambda s: s.hypernyms() + s.instance_hypernyms())}
            classes[name] = next((label for anchor, label in anchors if anchor in above), synset.lexname())
    return classes


def wordnet_texts(wn) -> list[str]:
    """Every example sentence of WordNet, in synset order (glosses are definitions, not sentences: their
    verbs have no subjects and generic objects, "change the arrangement of something")."""
    return [text for synset in wn.all_synsets() for text in synset.examples()]


@functools.lru_cache(maxsize=2)
def wordnet_usage(spacy_model: str = "en_core_web_sm") -> tuple[NounClasses, Usage]:
    """Noun classes and the verb–argument table of WordNet's example sentences, from the cache or built
    (about a minute of parsing on 2 cores, once: ``scripts/setup.sh`` does it)."""
    from tvrbench.resources import spacy_pipeline, spacy_pipeline_id

    nlp = spacy_pipeline(spacy_model, disable=("ner",))

    def build() -> dict:
        print("tvrbench: parsing WordNet's example sentences into a verb-argument table (once, about a minute)", file=sys.stderr)
        wn = wordnet()
        classes = NounClasses(_noun_classes(wn))
        return {"classes": classes.classes, "usage": Usage.of_docs(nlp.pipe(wordnet_texts(wn), batch_size=1000), classes).data}

    data = kept_json("verb-usage", text_digest([VERSION, wordnet_fingerprint(), spacy_pipeline_id(nlp)]), build, frozenset({"classes", "usage"}))
    return NounClasses(data["classes"]), Usage(data["usage"])


@functools.lru_cache(maxsize=1)
def bigram_counts() -> dict[str, float]:
    """Google Web n-gram bigram counts (``wordsegment``; pairs seen at least 100,000 times)."""
    return _web_counts().BIGRAMS


WEB_WORDS = 1_024_908_267_229  # the words Google's Web 1T corpus holds, which its unigram counts are of


def web_log10(word: str) -> float:
    """log10 of a word's share of the Web (its Google unigram count, ``wordsegment``'s 333,333 commonest
    words, from 12,711 occurrences up); -inf for a word outside them (rarer than 10^-7.9)."""
    count = _web_counts().UNIGRAMS.get(word.lower())
    return float(np.log10(count / WEB_WORDS)) if count else -np.inf


@functools.lru_cache(maxsize=1)
def _web_counts():
    try:
        import wordsegment
    except ImportError:
        from tvrbench.errors import MissingResource

        raise MissingResource("Google n-gram counts (wordsegment)", "pip install wordsegment") from None
    wordsegment.load()
    return wordsegment


def verbs_before(word: str) -> tuple[str, ...]:
    """Lemmas of the inflected verb forms ("-ing", "-ed", "-s") before ``word`` in the Web bigrams."""
    return _verbs_before().get(word, ())


@functools.lru_cache(maxsize=1)
def _verbs_before() -> dict[str, tuple[str, ...]]:
    from lemminflect import getLemma

    found: dict[str, set[str]] = defaultdict(set)
    for bigram in bigram_counts():
        form, _, word = bigram.partition(" ")
        if word in BIGRAM_WORDS and form.endswith(("ing", "ed", "s")):
            lemma = (getLemma(form, upos="VERB") or [form])[0]
            if form in verb_forms(lemma) and form != lemma:
                found[word].add(lemma)
    return {word: tuple(sorted(lemmas)) for word, lemmas in found.items()}


class Association:
    """How strongly a verb and a noun go together in GloVe: the cosine of their vectors, as a z-score
    against the verb's cosines to every common noun. GloVe's vectors are fitted to log co-occurrence
    counts, so this is a PMI-like association with each verb's hubness taken out ("cook rice" 3.0,
    "wear rice" 0.2; "apply makeup" 0.8, "run makeup" -1.4)."""

    def __init__(self, nouns: Iterable[str], common: int = 50000):
        from tvrbench.generators.verb.counterfit import glove_vectors

        self.index, matrix = glove_vectors()
        self.matrix = matrix
        rows = sorted(self.index[n] for n in set(nouns) if self.index.get(n, common) < common)
        units = self._unit(np.asarray(matrix[rows], dtype=np.float64))
        # A verb's cosines with the nouns, u·v, have mean m·v and mean square vᵀSv (m, S: the unit
        # nouns' mean and second moment), so each verb's spread costs a 50 × 50 product, not a pass
        # over every noun (a third of a 1,000-caption run went there).
        self.noun_mean = units.mean(axis=0)
        self.noun_moment = units.T @ units / len(units)

    @staticmethod
    def _unit(rows: np.ndarray) -> np.ndarray:
        return rows / np.linalg.norm(rows, axis=-1, keepdims=True)

    @functools.lru_cache(maxsize=50000)
    def vector(self, word: str) -> np.ndarray | None:
        row = self.index.get(word)
        return None if row is None else self._unit(np.asarray(self.matrix[row], dtype=np.float32))

    @functools.lru_cache(maxsize=20000)
    def spread(self, verb: str) -> tuple[float, float]:
        """Mean and standard deviation of the verb's cosines with the common nouns."""
        v = self.vector(verb).astype(np.float64)
        mean = float(self.noun_mean @ v)
        return mean, float(np.sqrt(max(v @ self.noun_moment @ v - mean * mean, 0.0)))

    def __call__(self, verb: str, noun: str) -> float | None:
        """The z-score, or None when either word has no vector."""
        v, n = self.vector(verb), self.vector(noun)
        if v is None or n is None:
            return None
        mean, std = self.spread(verb)
        return (float(n @ v) - mean) / std


@functools.lru_cache(maxsize=20000)
def verb_forms(lemma: str) -> tuple[str, ...]:
    """The lemma and its inflected forms (lemminflect)."""
    from lemminflect import getAllInflections

    return tuple(sorted({lemma, *(form for forms in getAllInflections(lemma, upos="VERB").values() for form in forms)}))
