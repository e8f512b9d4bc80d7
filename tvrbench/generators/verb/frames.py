"""Argument frames: how a caption uses its verb, read off spaCy's parse.

A verb contrast reads like a real caption only if the new verb fits the old one's arguments: its
subject ("a car is *fighting* on road"), its object ("a woman is *running* makeup"), the word after
it ("a man *walks* how to wire a car"). :func:`frame_of` reads the original's :class:`Frame`;
:mod:`tvrbench.generators.verb.fit` says whether another verb can fill it. Nouns are put in classes
(:class:`NounClasses`) by WordNet's lexicographer file of their first sense (``noun.person``,
``noun.animal``, ``noun.food``, ...), with vehicles split from other artifacts, since what a car can
do differs from what a cup can.
"""

from __future__ import annotations

from dataclasses import dataclass

PERSON, ANIMAL, VEHICLE = "noun.person", "noun.animal", "vehicle"
PERSON_PRONOUNS = frozenset({
    "i", "me", "you", "he", "him", "she", "her", "we", "us", "they", "them", "someone", "somebody", "everyone", "everybody",
    "anyone", "anybody", "who", "people", "himself", "herself", "themselves", "myself", "yourself", "another",
})  # fmt: skip
GENERIC_OBJECTS = frozenset({"something", "it", "one", "thing", "this", "that", "what", "stuff", "everything", "anything"})
# "a group of cars", "a herd of cows": the class is the "of" noun's.
COLLECTIVES = frozenset({"group", "couple", "bunch", "crowd", "team", "pair", "lot", "herd", "flock", "pack", "line", "set", "number", "few", "kind"})
# Prepositions that add a place or time to almost any action ("dancing in the kitchen"): no evidence needed.
FREE_PREPOSITIONS = frozenset({"in", "at", "inside", "outside", "near", "behind", "beside", "under", "during", "while", "before", "after", "next"})
# Prepositions of direction: a verb of motion takes them ("runs down the street").
DIRECTIONS = frozenset({"down", "up", "across", "through", "along", "around", "into", "onto", "toward", "towards", "over", "past", "out", "off"})
TOPICAL = frozenset({"about", "of", "regarding"})  # "talking about ...", "singing of ..."
WH_WORDS = frozenset({"how", "what", "where", "why", "when", "which", "who", "whether"})


@dataclass(frozen=True)
class Frame:
    """How a verb is used: its subject's class and noun (None when the caption has none), its object's
    lemma and class (None: no object; a class of None: "something", "it"), the preposition or
    particle right after it, and its clausal complement ("to" infinitive, "ing", "that" clause, "wh":
    "how to ..."). The preposition's noun and its class are kept: "talking to *a man*", "sitting on *the chair*";
    and a particle the edit keeps further on ("puts his phone *down*"), and the original verb's lemma."""

    subject: str | None
    subject_noun: str | None = None
    object: str | None = None
    object_class: str | None = None
    preposition: str | None = None
    preposition_noun: str | None = None
    preposition_class: str | None = None
    complement: str | None = None
    particle: str | None = None
    verb: str | None = None

    @property
    def of_place(self) -> bool:
        """The preposition adds a place or a time ("dancing *in* the kitchen"), not a person it addresses."""
        return self.preposition in FREE_PREPOSITIONS and self.preposition_class != PERSON


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
        reciprocal = lemma == "other" and any(child.lower_ == "each" for child in token.children)  # "each other"
        if token.pos_ == "PROPN" or lemma in PERSON_PRONOUNS or token.lower_ in PERSON_PRONOUNS or reciprocal:
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
    fields = (subject_class, subject, object_lemma, object_class, preposition, noun_lemma, noun_class, complement_of(verb), particle)
    return Frame(*fields, verb.lemma_.lower())
