"""Whether a verb can fill the frame the original verb is used in: a hard constraint on verb contrasts,
checked before any language model or embedding is asked.

Its evidence: WordNet's verb frames of the verb's most frequent senses ("Somebody ----s something",
"Something ----s", "Somebody ----s to INFINITIVE", ...): which arguments the verb takes at all; and
what texts show (:mod:`tvrbench.generators.verb.evidence`): which subjects, objects and prepositions
the verb is seen with, and how well it goes with a noun.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence

import numpy as np

from tvrbench.generators.base import Candidate
from tvrbench.generators.config import ArgumentFitConfig
from tvrbench.generators.verb.evidence import Association, Usage, bigram_counts, verb_forms
from tvrbench.generators.verb.frames import ANIMAL, DIRECTIONS, GENERIC_OBJECTS, PERSON, TOPICAL, VEHICLE, Frame, NounClasses, frame_of
from tvrbench.generators.verb.lexicon import VerbLexicon

# Somebody / something frames of WordNet (nltk: Lemma.frame_ids); see wordnet.princeton.edu "wninput(5WN)".
SOMEBODY = frozenset({2, 7, 8, 9, *range(13, 34)})
SOMETHING = frozenset({1, 4, 5, 6, 10, 11, 12, 35})
PERSON_OBJECT = frozenset({9, 10, 14, 17, 18, 20, 24, 25, 30})  # "Somebody ----s somebody", ...
NEEDS_COMPLEMENT = frozenset({26, 28, 32, 33})  # a first sense with these reads unfinished alone ("a woman is continuing")
TRANSITIVE = frozenset({5, 8, 9, 10, 11, 14, 15, 16, 17, 18, 19, 20, 21, 24, 25, 30, 31})
INTRANSITIVE = frozenset({1, 2, 4, 22, 23})
COMPLEMENT_FRAMES = {"to": frozenset({24, 28, 32, 35}), "ing": frozenset({33}), "that": frozenset({26, 34}), "wh": frozenset({29})}
# A verb of these files can have an animal or a vehicle subject without evidence ("a dog is swimming").
ANIMAL_VERBS = frozenset({"verb.motion", "verb.body", "verb.consumption", "verb.contact", "verb.perception"})
VEHICLE_VERBS = frozenset({"verb.motion"})
TOPIC_VERBS = frozenset({"verb.communication", "verb.cognition", "verb.emotion"})


class ArgumentFit:
    """Whether a verb can fill a :class:`Frame`: every argument of the original must be one the verb
    takes (WordNet's frames of its first ``frame_senses`` senses) and goes with (settings: :class:`ArgumentFitConfig`).

    * subject: a person needs a "Somebody" frame; an animal, a vehicle or a thing needs the verb to
      go with that noun (:class:`Association` at least ``min_association``, or seen together), and a
      frame of its kind ("a dog is swimming", "a car is turning", not "a car is fighting");
    * no object: an intransitive frame, and the verb used alone unless a preposition other than
      one of place or a particle completes it ("worries about the test"); an object: a transitive frame ("Somebody ----s somebody" for
      a person), and the verb seen with that noun, the Web bigram "verb noun", or an association at
      least ``min_association`` with a class the verb takes ("cooks the rice", not "wears the rice");
    * a preposition of place or time fits any verb (not "at" a person: "smiles *at* each other"); one
      of direction, a verb of motion; any other ("talking *about*", "looks *at*") needs evidence: a
      usage table or the Web bigram;
    * a verb that makes one of WordNet's phrasal verbs with the word after it is read as that verb
      ("*bets on* the voice", "*logs in*"): only where the original does too;
    * a clausal complement needs its frame ("Somebody ----s to INFINITIVE") or the Web bigram "verb
      how"; a verb whose first sense takes one ("continue", "try") cannot replace a verb without.

    With ``evidence="frames"`` (the default) only what WordNet's frames and files say is asked: the kind of subject,
    an object or none, a person as object, a topic after "about", a direction for a verb of motion,
    the complement and the particle; whether the verb goes with these very nouns is left to the
    language model that judges the candidates (:class:`~tvrbench.generators.verb.filters.ReadsAsReal`).
    """

    def __init__(self, lexicon: VerbLexicon, usage: Usage, classes: NounClasses, config: ArgumentFitConfig = ArgumentFitConfig()):
        self.lexicon = lexicon
        self.usage = usage
        self.classes = classes
        self.config = config
        self.bigrams = bigram_counts()
        self.association = Association(classes.classes)

    @functools.lru_cache(maxsize=500000)
    def fits(self, frame: Frame, lemma: str) -> bool:
        head = lemma.split("_")[0]
        frames = self.lexicon.frames(lemma, self.config.frame_senses)
        if not frames:
            return False
        files = self.lexicon.files(lemma, self.config.frame_senses)
        return (
            self.subject_fits(frame, lemma, head, frames, files)
            and self.object_fits(frame, lemma, head, frames)
            and self.preposition_fits(frame, lemma, head, files)
            and self.not_phrasal(frame, lemma)
            and self.complement_fits(frame.complement, lemma, head)
            and (frame.particle is None or self.lexicon.known(f"{lemma}_{frame.particle}") or self.seen_before(head, frame.particle))
        )

    @functools.lru_cache(maxsize=500000)  # the constraint scores it, and the draw asks again
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
        return score is not None and score >= self.config.min_association

    def subject_fits(self, frame: Frame, lemma: str, head: str, frames: frozenset[int], files: frozenset[str]) -> bool:
        subject = frame.subject
        if subject == PERSON:
            return bool(frames & SOMEBODY)
        if frame.subject_noun is None:  # no subject, or "it": nothing to check
            return True
        if self.config.evidence == "seen" and not (self.usage.get(lemma, "s", subject) > 0 or self.goes_with(head, frame.subject_noun)):
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
            completed = frame.particle is not None or (frame.preposition is not None and not frame.of_place)
            return bool(frames & INTRANSITIVE) and (completed or self.used_alone(lemma))
        if not frames & TRANSITIVE:
            return False
        frames_only = self.config.evidence == "frames"
        if frame.object_class == PERSON:  # "hugs a woman"; WordNet's first sense of "stroller" is a person too
            return bool(frames & PERSON_OBJECT) and (frame.object == "person" or frames_only or self.goes_with(head, frame.object))
        if frame.object in GENERIC_OBJECTS or frames_only:  # "something", "it": any transitive verb
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
        return alone >= 2 and alone >= self.config.min_alone_share * (alone + objects) and not self.lexicon.frames(lemma, 1) & NEEDS_COMPLEMENT

    def preposition_fits(self, frame: Frame, lemma: str, head: str, files: frozenset[str]) -> bool:
        """A preposition of place or time fits any verb; another needs the verb seen with it and a noun
        of the same class ("talking to a man", not "driving to a man"), or seen with it (the Web
        bigram, or a verb of motion before a direction) and going with its noun ("sitting on the
        chair", not "driving on the chair")."""
        preposition = frame.preposition
        if preposition is None or frame.of_place:
            return True
        if self.config.evidence == "frames":
            return bool(files & TOPIC_VERBS) if preposition in TOPICAL else preposition not in DIRECTIONS or "verb.motion" in files
        if frame.preposition_class and self.usage.get(lemma, "q", f"{preposition}|{frame.preposition_class}") >= self.config.min_seen:
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

    def not_phrasal(self, frame: Frame, lemma: str) -> bool:
        """Whether the verb stays itself before the word after it: "bet on", "log in" and "carry on" are
        WordNet verbs of their own, which a reader takes them for ("people *bet on* the voice")."""
        if frame.preposition is None or "_" in lemma or not self.lexicon.known(f"{lemma}_{frame.preposition}"):
            return True
        return frame.verb is not None and self.lexicon.known(f"{frame.verb}_{frame.preposition}")

    def complement_fits(self, complement: str | None, lemma: str, head: str) -> bool:
        if complement is None:
            return True
        if self.lexicon.frames(lemma, self.config.frame_senses) & COMPLEMENT_FRAMES[complement]:
            return True
        return complement == "wh" and self.seen_before(head, "how")

    def seen_before(self, head: str, word: str) -> bool:
        """Whether a form of ``head`` followed by ``word`` is a common bigram of the Web."""
        return any(f"{form} {word}" in self.bigrams for form in verb_forms(head))


class FrameFits:
    """For each candidate: the frame its original verb is used in (read once per target in a batch), and
    what the argument fit says of the new verb there: whether it fits (the argument-fit constraint)
    and how well it goes with the frame's nouns (:meth:`ArgumentFit.strength`, which weighs the draw)."""

    def __init__(self, fit: ArgumentFit, classes: NounClasses, lemma_of):
        self.fit = fit
        self.classes = classes
        self.lemma_of = lemma_of  # the new verb's lemma of a candidate (the pool's, or a T5 fill's first word)

    def of(self, candidates: Sequence[Candidate]) -> list[tuple[bool, float]]:
        """(fits, strength rounded to 6 places; 0 where it does not fit) of each candidate."""
        frames: dict[tuple[int, int, int], Frame] = {}
        found = []
        for candidate in candidates:
            request, end = candidate.request, candidate.replacements[0].token_end
            key = (request.item.index, request.target.start, end)
            if key not in frames:
                frames[key] = frame_of(request.item.doc[request.target.start], end, self.classes)
            lemma = self.lemma_of(candidate)
            fits = self.fit.fits(frames[key], lemma)
            found.append((fits, round(self.fit.strength(frames[key], lemma), 6) if fits else 0.0))
        return found

    def strengths(self, candidates: Sequence[Candidate]) -> list[float]:
        return [strength for _, strength in self.of(candidates)]
