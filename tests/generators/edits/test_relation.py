"""Relation contrasts: a spatial relation word becomes its contrast in the same kind of place, phrases
matched whole, never a word that means the same there, only of the places and heads a relation takes;
word lists that contradict themselves refused."""

from __future__ import annotations

import pytest

from tvrbench.config import read_yaml
from tvrbench.errors import InputError
from tvrbench.generators.config import RelationConfig
from tvrbench.generators.edits.relation import RelationContrasts


@pytest.fixture(scope="module")
def relation():
    return RelationContrasts(RelationConfig(lm="ngram"))


def test_the_issue_examples_are_proposed(relation, proposals):
    assert "a cat jumps off the table" in proposals(relation, "a cat jumps onto the table")
    assert "a man is talking behind the camera" in proposals(relation, "a man is talking in front of the camera")
    assert "a man drives his car up the road" in proposals(relation, "a man drives his car down the road")
    assert "a polar bear jumps out of the water" in proposals(relation, "a polar bear jumps into the water")


def test_phrases_change_whole_and_a_trailing_of_goes_with_them(relation, proposals):
    found = proposals(relation, "a dog runs out of the house")
    assert "a dog runs into the house" in found and not any("out" in text for text in found)
    assert "a man stands in the house" in proposals(relation, "a man stands outside of the house")
    behind = proposals(relation, "a girl sings in front of a tree")
    assert "a girl sings behind a tree" in behind and not any("in a tree" in text or "front" in text for text in behind)


def test_a_word_that_means_the_same_there_is_never_proposed(relation, proposals):
    found = proposals(relation, "a man is sitting on a chair")
    assert "a man is sitting next to a chair" in found
    assert not {"a man is sitting in a chair", "a man is sitting on a chair"} & set(found)  # "in" and "on" are one value of a seat
    car = proposals(relation, "a man and a woman are talking in a car")
    assert "a man and a woman are talking on a car" in car and "a man and a woman are talking inside a car" not in car


def test_only_relations_of_places_said_of_what_they_fit_are_targets(relation, proposals):
    assert proposals(relation, "a man in a suit is singing") == []  # clothing
    assert proposals(relation, "a man is talking on the phone") == []  # an idiom: no relation takes a phone
    assert proposals(relation, "a woman is cooking in the morning") == []  # time
    assert proposals(relation, "a video game is displayed on the screen") == []  # media
    assert proposals(relation, "a band plays on stage") == []  # a bare noun: "behind stage" wants an article
    # read blind and rejected: a performer's stage, an audience, where a gun points (settings, not code)
    assert proposals(relation, "a band plays on a stage") == []
    assert proposals(relation, "a group of people are dancing in front of a crowd") == []
    assert proposals(relation, "a man points his gun towards a woman") == []
    assert "a man walks off a stage" in proposals(relation, "a man walks onto a stage")
    assert proposals(relation, "a song played by a band") == []  # "by" is brought in, never changed
    assert proposals(relation, "a man picks up a phone") == []  # a particle of a verb no relation names
    assert "a man is looking down" in proposals(relation, "a man is looking up")


def test_records_say_what_changed(relation):
    records = relation.contrasts(["a cat jumps onto the table", "a dog runs"])
    assert [r.caption_id for r in records] == ["0"]
    record = records[0]
    assert record.kind == "relation" and record.edit[0]["from"] == "onto" and record.details["original"] == "onto"
    assert record.details["substitute"] == record.edit[0]["to"] and record.details["relation"] == "onto and off"
    assert record.contrast != record.original and record.filters["reads-as-real"]["passed"]


def test_the_settings_file_is_the_defaults():
    from pathlib import Path

    written = read_yaml((Path(__file__).parents[3] / "tvrbench" / "configs" / "contrast" / "relation.yaml").read_text())
    assert RelationConfig.model_validate(written) == RelationConfig()


@pytest.mark.parametrize(
    "yaml_text, problem",
    [
        ("relations:\n  x:\n    values: [[under], [below, Under]]\n", "relations.x: 'Under' is in two values"),
        ("relations:\n  x:\n    values: [[under]]\n", "relations.x: needs at least two values"),
        ("relations:\n  x:\n    values: [[under], []]\n", "relations.x: value 2 is empty"),
        ("relations: {}\n", "relations: empty"),
        ("relations:\n  x:\n    values: [[under], [over]]\n    heads: []\n", "relations.x: heads: empty"),
    ],
)
def test_word_lists_that_cannot_contrast_are_refused_naming_the_key(settings_file, yaml_text, problem):
    with pytest.raises(InputError, match=f"relation.yaml: {problem}"):
        settings_file("relation", yaml_text)


def test_an_unquoted_on_is_the_word(settings_file):
    """Settings files read YAML's booleans as true and false only (tvrbench.config.SettingsLoader)."""
    assert settings_file("relation", "relations:\n  x:\n    values: [[on], [off, under]]\n").relations["x"].values == [["on"], ["off", "under"]]
