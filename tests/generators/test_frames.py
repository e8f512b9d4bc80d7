"""Argument frames of verb contrasts: what spaCy's parse says the original verb takes, and which verbs
WordNet's frames, the usage tables, the Web bigrams and GloVe let fill it (tvrbench.generators.verb.frames, .fit, .evidence)."""

from __future__ import annotations

import numpy as np
import pytest

from tvrbench.generators.config import ArgumentFitConfig
from tvrbench.generators.verb.evidence import Association, wordnet_usage
from tvrbench.generators.verb.fit import ArgumentFit
from tvrbench.generators.verb.frames import PERSON, VEHICLE, frame_of
from tvrbench.generators.verb.phrases import VerbPhrases


@pytest.fixture(scope="module")
def nlp():
    from tvrbench.resources import spacy_pipeline

    return spacy_pipeline("en_core_web_sm", disable=("ner",))


@pytest.fixture(scope="module")
def fit():
    from tvrbench.generators.verb.lexicon import LexiconSettings, verb_lexicon

    classes, usage = wordnet_usage()
    return ArgumentFit(verb_lexicon(LexiconSettings(5, 100, 1)), usage, classes, ArgumentFitConfig(evidence="seen"))


def first_frame(nlp, fit, text):
    doc = nlp(text)
    target = VerbPhrases(nlp).in_doc(doc)[0]
    return frame_of(doc[target.start], target.start + 1, fit.classes)


def test_frames_read_subject_object_preposition_and_complement(nlp, fit):
    frame = first_frame(nlp, fit, "a group of people are cooking rice in the kitchen")
    assert (frame.subject, frame.object, frame.object_class, frame.preposition) == (PERSON, "rice", "noun.food", None)
    frame = first_frame(nlp, fit, "a red car is driving down the road")
    assert (frame.subject, frame.subject_noun, frame.preposition) == (VEHICLE, "car", "down")
    frame = first_frame(nlp, fit, "a woman is singing on the stage")
    assert (frame.object, frame.preposition, frame.preposition_noun) == (None, "on", "stage")
    assert first_frame(nlp, fit, "a man explains how to fix a bike").complement == "wh"
    assert first_frame(nlp, fit, "a girl wants to dance").complement == "to"
    assert first_frame(nlp, fit, "a woman is talking to a man").preposition_class == PERSON
    frame = first_frame(nlp, fit, "a helicopter is shown flying over a city")  # the passive's subject
    assert (frame.subject, frame.subject_noun) == (VEHICLE, "helicopter")


@pytest.mark.parametrize(
    "text, fitting, not_fitting",
    [
        ("a woman is cooking rice", {"eat", "serve"}, {"wear", "drive", "sing"}),  # the object
        ("a car is driving on the road", {"race", "crash"}, {"talk", "cook", "fight"}),  # a vehicle's verbs
        ("a man explains how to fix a bike", {"show", "demonstrate"}, {"walk", "eat"}),  # "how to ..."
        ("a woman is sleeping", {"dance", "laugh"}, {"hit", "discuss", "continue"}),  # used alone
        ("a girl is talking about relationships", {"joke", "complain", "worry"}, {"walk", "stand", "wear"}),  # about a topic
        ("a woman is sleeping in the room", {"dance"}, {"continue", "discuss"}),  # a place does not complete a verb
        ("a man is giving a presentation", {"prepare"}, {"drive"}),  # the noun itself, not its class
        ("a person is preparing some food", {"eat", "serve"}, {"wear"}),  # "wear" takes clothing, never food
        ("a woman plays instruments in a field", {"tune"}, {"sing"}),
    ],
)
def test_fit_keeps_verbs_that_take_the_arguments_and_drops_those_that_do_not(nlp, fit, text, fitting, not_fitting):
    frame = first_frame(nlp, fit, text)
    assert {lemma for lemma in fitting | not_fitting if fit.fits(frame, lemma)} == fitting


def test_association_is_the_cosine_as_a_z_score_over_common_nouns(fit):
    """Oracle: a plain loop over the nouns the association normalises against."""
    association: Association = fit.association
    index, matrix = association.index, association.matrix
    nouns = sorted(n for n in set(fit.classes.classes) if index.get(n, 50000) < 50000)
    verb = np.asarray(matrix[index["cook"]], dtype=np.float64)
    cosines = []
    for noun in nouns:
        row = np.asarray(matrix[index[noun]], dtype=np.float64)
        cosines.append(float(row @ verb / np.linalg.norm(row) / np.linalg.norm(verb)))
    rice = np.asarray(matrix[index["rice"]], dtype=np.float64)
    expected = (rice @ verb / np.linalg.norm(rice) / np.linalg.norm(verb) - np.mean(cosines)) / np.std(cosines)
    assert association("cook", "rice") == pytest.approx(expected, abs=1e-4)
    assert association("cook", "rice") > 2 > association("wear", "rice")
    assert association("cook", "qwzxv") is None


@pytest.mark.parametrize(
    "text, word",
    [
        ("an interview about will smith", "will"),  # a name read as a verb
        ("a forest filled with trees", "filled"),  # a participle describing a noun
        ("list of people s involved in making the documentary", "s"),
        ("a girl according to her mom", "according"),
    ],
)
def test_words_that_are_not_a_clause_s_verb_are_no_targets(nlp, text, word):
    doc = nlp(text)
    assert word not in {doc[t.start].text for t in VerbPhrases(nlp).in_doc(doc)}


@pytest.fixture(scope="module")
def default_fit(fit):
    """The argument fit as the recipe builds it by default (WordNet's frames, the LM judges the rest)."""
    return ArgumentFit(fit.lexicon, fit.usage, fit.classes, ArgumentFitConfig())


def test_reciprocals_are_persons_and_at_a_person_is_no_place(nlp, fit):
    frame = first_frame(nlp, fit, "a man and a woman are looking at each other")
    assert (frame.preposition, frame.preposition_class, frame.of_place) == ("at", PERSON, False)
    assert first_frame(nlp, fit, "a woman feeds another").object_class == PERSON
    assert first_frame(nlp, fit, "a man is looking at the screen").of_place


@pytest.mark.parametrize(
    "text, fitting, not_fitting",
    [
        ("people perform on the voice", {"sing", "dance"}, {"bet", "operate"}),  # "bet on", "operate on": verbs of their own
        ("a man is riding on horseback", {"sit"}, {"bet"}),
        ("people act in a comedy program", {"sing"}, {"write"}),  # "write in" (a vote)
    ],
)
def test_a_verb_is_not_put_where_it_reads_as_another_phrasal_verb(nlp, default_fit, text, fitting, not_fitting):
    frame = first_frame(nlp, default_fit, text)
    assert {lemma for lemma in fitting | not_fitting if default_fit.fits(frame, lemma)} == fitting
