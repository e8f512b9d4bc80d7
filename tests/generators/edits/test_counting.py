"""Counting contrasts: another count whose range does not overlap the original's, with the noun, its
verbs and its pronouns made to agree; only counted nouns are targets; word lists that cannot contrast
are refused."""

from __future__ import annotations

import pytest

from tvrbench.errors import InputError
from tvrbench.generators.config import CountingConfig
from tvrbench.generators.edits.counting import CountingContrasts


@pytest.fixture(scope="module")
def counting():
    return CountingContrasts(CountingConfig(lm="ngram"))


def test_the_issue_examples_are_proposed(counting, proposals):
    assert "three men are cooking" in proposals(counting, "two men are cooking")
    assert "two dogs run" in proposals(counting, "a dog runs")


def test_the_noun_its_verbs_and_its_pronouns_agree(counting, proposals):
    assert "two men are talking to their dog" in proposals(counting, "a man is talking to his dog")
    assert "a man is playing his guitars" in proposals(counting, "two men are playing their guitars")
    assert "a woman is washing her dog" in proposals(counting, "two women are washing their dog")
    assert "a kid is playing with their dog" in proposals(counting, "kids are playing with their dog")  # singular they
    assert "there are two men singing" in proposals(counting, "there is a man singing")
    assert "a person is dancing" in proposals(counting, "a group of people are dancing")
    assert "two women who are singing are smiling" in proposals(counting, "a woman who is singing is smiling")
    assert "An old man is walking" in proposals(counting, "Old men are walking")
    assert "an elephant walks" in proposals(counting, "two elephants walk")
    found = proposals(counting, "a man and a woman are talking")  # the pair's verb is plural already
    assert "two men and a woman are talking" in found and not any(" is talking" in text for text in found)


def test_a_contrast_means_other_counts(counting, proposals):
    found = proposals(counting, "a few men are singing")
    assert "a man is singing" in found and "many men are singing" in found
    assert not {"two men are singing", "three men are singing", "four men are singing", "several men are singing"} & set(found)
    found = proposals(counting, "kids are playing")  # a bare plural means two or more: it can only become one
    assert "a kid is playing" in found and not [text for text in found if " kids " in f" {text} "]
    assert "one man is cooking" not in proposals(counting, "a man is cooking")
    assert not [text for text in proposals(counting, "two men hug each other") if "man" in text.split()]  # several, together
    riding = proposals(counting, "people are riding horses in a field")  # a horse each: never one horse for them all
    assert "a person is riding horses in a field" in riding and not [text for text in riding if "horse " in text]


@pytest.mark.parametrize(
    "text",
    [
        "the man is singing",  # definite
        "his dog runs in the park",  # possessive
        "a man's dog runs",  # the man is a possessor; "dog" is definite
        "the woman drinks water",  # a mass noun
        "a man in a red shirt is singing",  # several men in one shirt
        "a man is a chef",  # the complement would have to change too
        "a woman is chopping an onion in the kitchen",  # things are counted only where a number says so
    ],
)
def test_what_is_not_a_target(counting, proposals, text):
    assert proposals(counting, text) == []


def test_idioms_names_and_nouns_inside_other_nouns_are_not_counted(counting, proposals):
    assert "two men talk a lot" in proposals(counting, "a man talks a lot")
    assert not [text for text in proposals(counting, "a man talks a lot") if not text.endswith(" talk a lot")]  # "a lot" stays
    assert not [text for text in proposals(counting, "a boy plays grand theft auto 5") if not text.endswith(" auto 5")]
    assert not [text for text in proposals(counting, "men are eating hot dogs") if "hot dog " in f"{text} "]
    assert "two teenagers are singing" in proposals(counting, "a teenager is singing")


def test_records_say_what_changed(counting):
    records = counting.contrasts(["two men are cooking in a kitchen", "the sky is blue"])
    assert [r.caption_id for r in records] == ["0"]
    record = records[0]
    assert record.kind == "counting" and record.details["original"] == "two" and record.details["substitute"] != "two"
    assert record.details["counts"][0] == [2, 2] and record.edit[0]["from"] == "two men"
    assert record.contrast != record.original and record.filters["reads-as-real"]["passed"]


@pytest.mark.parametrize(
    "yaml_text, problem",
    [
        ("quantities: {}\n", "quantities: empty"),
        ("quantities:\n  two: {counts: [3, 2]}\n", r"quantities.two: counts: \[3, 2\] is no range"),
        ("quantities:\n  a: {counts: [1, 1]}\n  some: {counts: [1, null]}\n  two: {counts: [2, 2]}\n", "quantities.some: .*contrast with none"),
        ("quantities:\n  two: {counts: [2, 2]}\n  three: {counts: [3, 3]}\n", r"quantities: needs a substitute for one"),
        ("male: [man, guy]\nfemale: [woman, guy]\n", "male, female: 'guy' is in both"),
        ("nouns: []\nobjects: []\n", "nouns: empty"),
    ],
)
def test_word_lists_that_cannot_contrast_are_refused_naming_the_key(settings_file, yaml_text, problem):
    with pytest.raises(InputError, match=f"counting.yaml: {problem}"):
        settings_file("counting", yaml_text)
