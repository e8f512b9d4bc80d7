"""Swap contrasts: two nouns in different roles of one verb trade places (with what describes them, the
articles made to agree), or two adjectives of one property on two nouns; never nouns that are joined,
symmetric, of different groups or numbers; word lists that cannot work are refused."""

from __future__ import annotations

import pytest

from tvrbench.errors import InputError
from tvrbench.generators.config import SwapConfig
from tvrbench.generators.edits.swap import SwapContrasts


@pytest.fixture(scope="module")
def swap():
    return SwapContrasts(SwapConfig(lm="ngram"))


def test_the_issue_examples_are_proposed(swap, proposals):
    assert proposals(swap, "a dog chases a cat") == ["a cat chases a dog"]
    found = proposals(swap, "a man in a black hat and a white shirt plays the guitar")
    assert found == ["a man in a white hat and a black shirt plays the guitar"]


def test_nouns_take_what_describes_them_and_the_articles_agree(swap, proposals):
    assert "a young woman talks to an old man" in proposals(swap, "an old man talks to a young woman")  # nouns
    assert "a young man talks to an old woman" in proposals(swap, "an old man talks to a young woman")  # adjectives (age)
    assert "a man with a beard talks to a young girl" in proposals(swap, "a young girl talks to a man with a beard")
    assert proposals(swap, "a woman talking to a man in a hood") == ["a man in a hood talking to a woman"]
    assert proposals(swap, "a cat is chased by a dog") == ["a dog is chased by a cat"]
    assert proposals(swap, "Dogs are chasing cats") == ["Cats are chasing dogs"]


@pytest.mark.parametrize(
    "text",
    [
        "a man and a woman are talking",  # coordinated: the same meaning
        "a man is dancing with a woman",  # a symmetric preposition
        "a man hugs a woman",  # a symmetric verb
        "a man puts a cup on a table",  # things of different kinds
        "a man is riding a horse",  # a person and an animal, with a verb only a person does to an animal
        "a man holds a baby",  # a baby never becomes the subject
        "a man talks to two women",  # different numbers: the verb would have to change
        "a man walks his dog in the park",  # a possessed noun
        "a woman has a daughter",  # a one-way verb
        "a man points his gun at a woman",  # whose gun would it be?
        "a black and white dog runs",  # two adjectives of one noun
    ],
)
def test_what_never_trades_places(swap, proposals, text):
    assert proposals(swap, text) == []


def test_two_words_of_one_value_never_trade(swap, proposals):
    assert proposals(swap, "a big dog chases a large cat") == ["a large cat chases a big dog"]  # the nouns do, not "big" and "large"


def test_a_person_and_an_animal_trade_with_a_verb_either_can_do(swap, proposals):
    assert proposals(swap, "a dog is chasing a man") == ["a man is chasing a dog"]


def test_records_say_what_changed(swap):
    records = swap.contrasts(["a dog chases a cat", "a man runs"])
    assert [r.caption_id for r in records] == ["0"]
    record = records[0]
    assert record.kind == "swap" and record.contrast == "a cat chases a dog"
    assert record.details["substitute"] == "cat<dog" and record.details["swapped"] == "nouns" and record.details["roles"] == ["subject", "object"]
    assert [edit["from"] for edit in record.edit] == ["dog", "cat"] and record.filters["reads-as-real"]["passed"]


@pytest.mark.parametrize(
    "yaml_text, problem",
    [
        ("groups: []\nproperties: []\n", "groups: empty, and properties too"),
        ("groups: [[person.n.01], []]\n", "groups: group 2 is empty"),
        ("symmetric_verbs: [hug, Hug]\n", "symmetric_verbs: 'Hug' is listed twice"),
        ("properties: [colour, flavour]\n", "properties: 'flavour' is no property of the attribute kind"),
    ],
)
def test_word_lists_that_cannot_work_are_refused_naming_the_key(settings_file, yaml_text, problem):
    with pytest.raises(InputError, match=f"swap.yaml: {problem}"):
        settings_file("swap", yaml_text)


def test_a_synset_that_wordnet_lacks_is_refused_naming_the_group(swap):
    with pytest.raises(InputError, match=r"groups.1: WordNet has no synset 'persn.n.01'"):
        SwapContrasts(SwapConfig(lm="ngram", groups=[["persn.n.01"]])).contrasts(["a dog chases a cat"])
