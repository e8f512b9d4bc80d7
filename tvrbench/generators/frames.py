"""Argument frames: how a caption uses its verb, and whether another verb can be used the same way.

A verb contrast reads like a real caption only if the new verb fits the old one's arguments: its
subject ("a car is *fighting* on road"), its object ("a woman is *running* makeup"), the word after
it ("a man *walks* how to wire a car"). :func:`frame_of` reads the original's :class:`Frame` off
spaCy's parse; :class:`ArgumentFit` says whether a verb can fill it. It is a hard constraint, checked
before any language model or embedding is asked. Its evidence:

* WordNet's verb frames of the verb's most frequent senses ("Somebody ----s something", "Something
  ----s", "Somebody ----s to INFINITIVE", ...): which arguments the verb takes at all;
* a verb–argument table (:class:`Usage`) parsed with spaCy from WordNet's glosses and example
  sentences (about 166,000 short texts, parsed once and cached): which subjects, objects and
  prepositions each verb is seen with;
* the same table from the captions being contrasted and the training captions, when given;
* Google Web n-gram bigram counts (``wordsegment``): "talking about", "explains how".

Nouns are put in classes by WordNet's lexicographer file of their first sense (``noun.person``,
``noun.animal``, ``noun.food``, ...), with vehicles split from other artifacts, since what a car can do
differs from what a cup can. How each signal changed the contrasts a reader sees is in docs/contrast.md.

The verb phrases a contrast replaces (:class:`VerbPhrases`) are found here too, beside the clause test
they use, so T5 fine-tuning masks them without importing the verb generator that uses T5.
"""

from __future__ import annotations

import functools
import json
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np

from tvrbench.generators.base import CaptionItem, Target
from tvrbench.generators.lexicon import AUXILIARIES, VerbLexicon
from tvrbench.home import cache_dir
from tvrbench.io.atomic import atomic_write
from tvrbench.resources import wordnet, wordnet_fingerprint
from tvrbench.signature import text_digest

VERSION = "verb-usage-v9"  # bump when what is stored changes
PERSON, ANIMAL, VEHICLE = "noun.person", "noun.animal", "vehicle"
PERSON_PRONOUNS = frozenset({
    "i", "me", "you", "he", "him", "she", "her", "we", "us", "they", "them", "someone", "somebody", "everyone", "everybody",
    "anyone", "anybody", "who", "people", "himself", "herself", "themselves", "myself", "yourself",
})  # fmt: skip
GENERIC_OBJECTS = frozenset({"something", "it", "one", "thing", "this", "that", "what", "stuff", "everything", "anything"})
# "a group of cars", "a herd of cows": the class is the "of" noun's.
COLLECTIVES = frozenset({"group", "couple", "bunch", "crowd", "team", "pair", "lot", "herd", "flock", "pack", "line", "set", "number", "few", "kind"})
# Somebody / something frames of WordNet (nltk: Lemma.frame_ids); see wordnet.princeton.edu "wninput(5WN)".
SOMEBODY = frozenset({2, 7, 8, 9, *range(13, 34)})
SOMETHING = frozenset({1, 4, 5, 6, 10, 11, 12, 35})
PERSON_OBJECT = frozenset({9, 10, 14, 17, 18, 20, 24, 25, 30})  # "Somebody ----s somebody", ...
NEEDS_COMPLEMENT = frozenset({26, 28, 32, 33})  # a first sense with these reads unfinished alone ("a woman is continuing")
TRANSITIVE = frozenset({5, 8, 9, 10, 11, 14, 15, 16, 17, 18, 19, 20, 21, 24, 25, 30, 31})
INTRANSITIVE = frozenset({1, 2, 4, 22, 23})
COMPLEMENT_FRAMES = {"to": frozenset({24, 28, 32, 35}), "ing": frozenset({33}), "that": frozenset({26, 34}), "wh": frozenset({29})}
# Prepositions that add a place or time to almost any action ("dancing in the kitchen"): no evidence needed.
FREE_PREPOSITIONS = frozenset({"in", "at", "inside", "outside", "near", "behind", "beside", "under", "during", "while", "before", "after", "next"})
# Prepositions of direction: a verb of motion takes them ("runs down the street").
DIRECTIONS = frozenset({"down", "up", "across", "through", "along", "around", "into", "onto", "toward", "towards", "over", "past", "out", "off"})
# A verb of these files can have an animal or a vehicle subject without evidence ("a dog is swimming").
ANIMAL_VERBS = frozenset({"verb.motion", "verb.body", "verb.consumption", "verb.contact", "verb.perception"})
VEHICLE_VERBS = frozenset({"verb.motion"})
CLAUSE_HEADS = frozenset({"ROOT", "acl", "relcl", "conj", "advcl", "xcomp", "ccomp", "pcomp", "csubj"})
MODALS = frozenset({"will", "shall", "would", "can", "could", "may", "might", "must", "should"})  # "an interview about will smith"
TOPICAL = frozenset({"about", "of", "regarding"})  # "talking about ...", "singing of ..."
TOPIC_VERBS = frozenset({"verb.communication", "verb.cognition", "verb.emotion"})
MIN_ALONE_SHARE = 0.3  # of a verb's uses, without an object, for it to stand alone ("hit" 11 %, "sleep" 97 %)
MIN_SEEN = 2  # uses of a verb with a preposition and a noun class that make them one it takes (one example is chance)
BIGRAM_WORDS = DIRECTIONS | TOPICAL | {"to", "with", "at", "for", "on", "from", "into", "how"}  # verbs before these join the pool
WH_WORDS = frozenset({"how", "what", "where", "why", "when", "which", "who", "whether"})


@dataclass(frozen=True)
class Frame:
    """How a verb is used: its subject's class and noun (None when the caption has none), its object's
    lemma and class (None: no object; a class of None: "something", "it"), the preposition or
    particle right after it, and its clausal complement ("to" infinitive, "ing", "that" clause, "wh":
    "how to ..."). The preposition's noun and its class are kept: "talking to *a man*", "sitting on *the chair*";
    and a particle the edit keeps further on ("puts his phone *down*")."""

    subject: str | None
    subject_noun: str | None = None
    object: str | None = None
    object_class: str | None = None
    preposition: str | None = None
    preposition_noun: str | None = None
    preposition_class: str | None = None
    complement: str | None = None
    particle: str | None = None


class NounClasses:
    """A noun lemma's class: the lexicographer file of its first WordNet sense, ``vehicle`` for
    vehicles; persons for personal pronouns and proper nouns."""

    def __init__(self, classes: dict[str, str]):
        self.classes = classes

    def of(self, token) -> tuple[str | None, str | None]:
        """The class and lemma of the noun ``token`` (a collective's "of" noun: "a group of people" is
        persons); a class of None for "it", "something" and nouns WordNet does not know."""
        if token is None:
            return None, None
        lemma = token.lemma_.lower()
        if lemma in COLLECTIVES:
            inner = next((grand for child in token.children if child.lower_ == "of" for grand in child.children if grand.dep_ == "pobj"), None)
            if inner is not None:
                return self.of(inner)
        if token.pos_ == "PROPN" or lemma in PERSON_PRONOUNS or token.lower_ in PERSON_PRONOUNS:
            return PERSON, "person"
        if token.pos_ == "PRON" or lemma in GENERIC_OBJECTS:
            return None, lemma
        return self.classes.get(lemma) or self.classes.get(token.lower_), lemma


def subject_of(verb):
    """The verb's subject token: its own ``nsubj``, the noun a participle or relative clause hangs on
    ("a man *wearing* a hat"), or the subject of the verb it is coordinated with or completes (a
    passive's too: "a helicopter is shown *flying*")."""
    seen = set()
    subjects = ("nsubj", "csubj")
    while verb is not None and verb.i not in seen:
        seen.add(verb.i)
        subject = next((child for child in verb.children if child.dep_ in subjects), None)
        if subject is not None:
            return subject
        if verb.dep_ in ("acl", "relcl") and verb.head.pos_ in ("NOUN", "PROPN", "PRON"):
            return verb.head
        subjects = ("nsubj", "csubj", "nsubjpass") if verb.dep_ == "xcomp" else ("nsubj", "csubj")
        verb = verb.head if verb.dep_ in ("conj", "xcomp", "advcl") and verb.head is not verb else None
    return None


def complement_of(verb) -> str | None:
    """The verb's clausal complement: "to" (wants to dance), "ing" (keeps dancing), "wh" (shows how to
    dance, asks what ...), "that" (says that ...)."""
    for child in verb.children:
        if child.dep_ not in ("xcomp", "ccomp"):
            continue
        words = {grand.lower_ for grand in child.subtree if grand.i < child.i}
        if words & WH_WORDS:
            return "wh"
        if child.dep_ == "xcomp":
            return "to" if "to" in words else "ing" if child.tag_ == "VBG" else None
        return "that"
    return None


def frame_of(verb, end: int, classes: NounClasses) -> Frame:
    """The frame of ``verb`` (a spaCy token) when the words up to token ``end`` are replaced: the
    preposition is the word at ``end`` when it belongs to the verb (a particle the edit keeps, or a
    preposition heading the verb's argument)."""
    doc = verb.doc
    obj = next((child for child in verb.children if child.dep_ in ("dobj", "dative")), None)
    following = doc[end] if end < len(doc) else None
    preposition = None
    if following is not None and following.tag_ in ("IN", "RP", "TO") and following.head.i == verb.i:
        preposition = following.lower_
    noun = None if preposition is None else next((child for child in following.children if child.dep_ == "pobj"), None)
    subject_class, subject = classes.of(subject_of(verb))
    object_class, object_lemma = classes.of(obj)
    noun_class, noun_lemma = classes.of(noun)
    particle = next((child.lower_ for child in verb.children if child.dep_ == "prt" and child.i >= end and child.i != end), None)
    return Frame(subject_class, subject, object_lemma, object_class, preposition, noun_lemma, noun_class, complement_of(verb), particle)


# Participles that work as prepositions: "a girl *according* to her mom", "*including* the movie".
PREPOSITION_PARTICIPLES = frozenset({"according", "including", "regarding", "concerning", "considering", "excluding", "following", "given"})


def heads_a_clause(verb) -> bool:
    """A verb that makes its own clause: not an auxiliary, a modal read as a verb or a name ("will
    smith"), a passive, or a past participle describing a noun ("a forest *filled* with trees"); and a
    word the parser hung where a verb cannot be ("the movie *ali*", a preposition, an object)."""
    return (
        verb.dep_ in CLAUSE_HEADS
        and verb.lemma_.lower() not in AUXILIARIES | MODALS
        and verb.tag_.startswith("VB")
        and verb.is_alpha
        and len(verb) > 1  # "people *s* involved"
        and verb.lower_ not in PREPOSITION_PARTICIPLES
        and not (verb.tag_ == "VBN" and verb.dep_ in ("acl", "amod"))
        and not any(child.dep_ in ("auxpass", "nsubjpass") for child in verb.children)
    )


# Targets follow Park et al. App. A.3: a verb, or a verb followed by its particle or preposition.
VERB_PATTERNS = [[{"POS": "VERB"}, {"TAG": {"IN": ["RP", "IN"]}, "OP": "?"}]]


class VerbPhrases:
    """Targets: spaCy matches of verb, or verb + particle / preposition (longest match wins), whose
    verb heads a clause (when the doc is parsed)."""

    def __init__(self, nlp):
        from spacy.matcher import Matcher

        self.matcher = Matcher(nlp.vocab)
        self.matcher.add("VERB_PHRASE", VERB_PATTERNS, greedy="LONGEST")

    def find(self, item: CaptionItem) -> list[Target]:
        return self.in_doc(item.doc)

    def in_doc(self, doc) -> list[Target]:
        spans = sorted(self.matcher(doc, as_spans=True), key=lambda span: span.start)
        parsed = doc.has_annotation("DEP")
        return [Target(span.start, span.end, "verb") for span in spans if not parsed or heads_a_clause(span[0])]


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
    import sys

    from tvrbench.resources import spacy_pipeline, spacy_pipeline_id

    nlp = spacy_pipeline(spacy_model, disable=("ner",))
    key = text_digest([VERSION, wordnet_fingerprint(), spacy_pipeline_id(nlp)])
    path = cache_dir() / "verb-usage" / f"{key}.json"
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        return NounClasses(data["classes"]), Usage(data["usage"])
    except (OSError, ValueError, KeyError, TypeError):
        pass
    print("tvrbench: parsing WordNet's example sentences into a verb-argument table (once, about a minute)", file=sys.stderr)
    wn = wordnet()
    classes = NounClasses(_noun_classes(wn))
    usage = Usage.of_docs(nlp.pipe(wordnet_texts(wn), batch_size=1000), classes)
    with atomic_write(path) as out:
        json.dump({"classes": classes.classes, "usage": usage.data}, out, separators=(",", ":"), sort_keys=True)
    return classes, usage


@functools.lru_cache(maxsize=1)
def bigram_counts() -> dict[str, float]:
    """Google Web n-gram bigram counts (``wordsegment``; pairs seen at least 100,000 times)."""
    try:
        import wordsegment
    except ImportError:
        from tvrbench.errors import MissingResource

        raise MissingResource("Google n-gram counts (wordsegment)", "pip install wordsegment") from None
    wordsegment.load()
    return wordsegment.BIGRAMS


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


# --------------------------------------------------------------------------- the fit


class Association:
    """How strongly a verb and a noun go together in GloVe: the cosine of their vectors, as a z-score
    against the verb's cosines to every common noun. GloVe's vectors are fitted to log co-occurrence
    counts, so this is a PMI-like association with each verb's hubness taken out ("cook rice" 3.0,
    "wear rice" 0.2; "apply makeup" 0.8, "run makeup" -1.4)."""

    def __init__(self, nouns: Iterable[str], common: int = 50000):
        from tvrbench.generators.counterfit import glove_vectors

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


class ArgumentFit:
    """Whether a verb can fill a :class:`Frame`: every argument of the original must be one the verb
    takes (WordNet's frames of its first ``frame_senses`` senses) and goes with.

    * subject: a person needs a "Somebody" frame; an animal, a vehicle or a thing needs the verb to
      go with that noun (:class:`Association` at least ``min_association``, or seen together), and a
      frame of its kind ("a dog is swimming", "a car is turning", not "a car is fighting");
    * no object: an intransitive frame, and the verb used alone unless a preposition other than
      one of place or a particle completes it ("worries about the test"); an object: a transitive frame ("Somebody ----s somebody" for
      a person), and the verb seen with that noun, the Web bigram "verb noun", or an association at
      least ``min_association`` with a class the verb takes ("cooks the rice", not "wears the rice");
    * a preposition of place or time fits any verb; one of direction, a verb of motion; any other
      ("talking *about*", "looks *at*") needs evidence: a usage table or the Web bigram;
    * a clausal complement needs its frame ("Somebody ----s to INFINITIVE") or the Web bigram "verb
      how"; a verb whose first sense takes one ("continue", "try") cannot replace a verb without.
    """

    def __init__(self, lexicon: VerbLexicon, usage: Usage, classes: NounClasses, min_association: float, frame_senses: int = 2):
        self.lexicon = lexicon
        self.usage = usage
        self.classes = classes
        self.min_association = min_association
        self.frame_senses = frame_senses
        self.bigrams = bigram_counts()
        self.association = Association(classes.classes)

    def verbs_before(self, word: str) -> tuple[str, ...]:
        """The WordNet verbs one of whose forms comes before ``word`` in a common Web bigram ("bragging about")."""
        return tuple(lemma for lemma in verbs_before(word) if self.lexicon.known(lemma))

    @functools.lru_cache(maxsize=500000)
    def fits(self, frame: Frame, lemma: str) -> bool:
        head = lemma.split("_")[0]
        frames = self.lexicon.frames(lemma, self.frame_senses)
        if not frames:
            return False
        files = self.lexicon.files(lemma, self.frame_senses)
        return (
            self.subject_fits(frame, lemma, head, frames, files)
            and self.object_fits(frame, lemma, head, frames)
            and self.preposition_fits(frame, lemma, head, files)
            and self.complement_fits(frame.complement, lemma, head)
            and (frame.particle is None or self.lexicon.known(f"{lemma}_{frame.particle}") or self.seen_before(head, frame.particle))
        )

    def strength(self, frame: Frame, lemma: str) -> float:
        """How well the verb goes with the frame's nouns: the mean association with its object, the
        noun after its preposition and a subject other than a person (0 without any)."""
        head = lemma.split("_")[0]
        nouns = [frame.object, frame.preposition_noun, None if frame.subject == PERSON else frame.subject_noun]
        scores = [self.association(head, n) for n in nouns if n is not None and n not in GENERIC_OBJECTS]
        scores = [score for score in scores if score is not None]
        return float(np.mean(scores)) if scores else 0.0

    def goes_with(self, head: str, noun: str) -> bool:
        score = self.association(head, noun)
        return score is not None and score >= self.min_association

    def subject_fits(self, frame: Frame, lemma: str, head: str, frames: frozenset[int], files: frozenset[str]) -> bool:
        subject = frame.subject
        if subject == PERSON:
            return bool(frames & SOMEBODY)
        if frame.subject_noun is None:  # no subject, or "it": nothing to check
            return True
        if not (self.usage.get(lemma, "s", subject) > 0 or self.goes_with(head, frame.subject_noun)):
            return False
        if subject == ANIMAL:
            return bool(frames & {1, 2}) and bool(files & ANIMAL_VERBS)
        if subject == VEHICLE:
            return bool(files & VEHICLE_VERBS) and 1 in frames
        return bool(frames & SOMETHING)

    def object_fits(self, frame: Frame, lemma: str, head: str, frames: frozenset[int]) -> bool:
        if frame.object is None:  # a clause in the object's place is the complement check's business
            if frame.complement is not None:
                return True
            # "worries about ...", "gives up": not alone; a place ("sleeps in the room") completes nothing
            completed = frame.particle is not None or (frame.preposition is not None and frame.preposition not in FREE_PREPOSITIONS)
            return bool(frames & INTRANSITIVE) and (completed or self.used_alone(lemma))
        if not frames & TRANSITIVE:
            return False
        if frame.object_class == PERSON:  # "hugs a woman"; WordNet's first sense of "stroller" is a person too
            return bool(frames & PERSON_OBJECT) and (frame.object == "person" or self.goes_with(head, frame.object))
        if frame.object in GENERIC_OBJECTS:  # "something", "it": any transitive verb
            return True
        if frame.object in self.usage.objects(lemma) or self.seen_before(head, frame.object):
            return True
        return self.takes_class(lemma, frame.object_class) and self.goes_with(head, frame.object)

    @functools.lru_cache(maxsize=50000)
    def takes_class(self, lemma: str, noun_class: str | None) -> bool:
        """Whether texts show the verb with an object of this class: without that, GloVe's association
        (topic, not selection) is no evidence ("wearing some food", "sings instruments")."""
        return any(self.classes.classes.get(noun) == noun_class for noun in self.usage.objects(lemma))

    def used_alone(self, lemma: str) -> bool:
        """Whether texts use the verb without an object or a complement often enough ("she sleeps", not
        "she hits"), and its first sense does not call for a clause ("she continues")."""
        alone, objects = self.usage.alone(lemma), sum(self.usage.objects(lemma).values())
        return alone >= 2 and alone >= MIN_ALONE_SHARE * (alone + objects) and not self.lexicon.frames(lemma, 1) & NEEDS_COMPLEMENT

    def preposition_fits(self, frame: Frame, lemma: str, head: str, files: frozenset[str]) -> bool:
        """A preposition of place or time fits any verb; another needs the verb seen with it and a noun
        of the same class ("talking to a man", not "driving to a man"), or seen with it (the Web
        bigram, or a verb of motion before a direction) and going with its noun ("sitting on the
        chair", not "driving on the chair")."""
        preposition = frame.preposition
        if preposition is None or preposition in FREE_PREPOSITIONS:
            return True
        if frame.preposition_class and self.usage.get(lemma, "q", f"{preposition}|{frame.preposition_class}") >= MIN_SEEN:
            return True
        if frame.preposition_class == PERSON:
            return False
        seen = self.usage.get(lemma, "p", preposition) > 0 or self.seen_before(head, preposition)
        if not (seen or (preposition in DIRECTIONS and "verb.motion" in files)):
            return False
        if preposition in TOPICAL:  # "talking about the war": a verb that can be about something
            return bool(files & TOPIC_VERBS)
        noun = frame.preposition_noun
        return noun is None or noun in GENERIC_OBJECTS or self.goes_with(head, noun)

    def complement_fits(self, complement: str | None, lemma: str, head: str) -> bool:
        if complement is None:
            return True
        if self.lexicon.frames(lemma, self.frame_senses) & COMPLEMENT_FRAMES[complement]:
            return True
        return complement == "wh" and self.seen_before(head, "how")

    def seen_before(self, head: str, word: str) -> bool:
        """Whether a form of ``head`` followed by ``word`` is a common bigram of the Web."""
        return any(f"{form} {word}" in self.bigrams for form in verb_forms(head))


@functools.lru_cache(maxsize=20000)
def verb_forms(lemma: str) -> tuple[str, ...]:
    """The lemma and its inflected forms (lemminflect)."""
    from lemminflect import getAllInflections

    return tuple(sorted({lemma, *(form for forms in getAllInflections(lemma, upos="VERB").values() for form in forms)}))
