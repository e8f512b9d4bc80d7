"""Attribute contrasts: another value of the same property, the article made to agree, never a synonym,
only of the nouns a property describes; word lists that contradict themselves refused."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from tvrbench.errors import InputError
from tvrbench.generators.config import AttributeConfig
from tvrbench.generators.edits.attribute import AttributeContrasts

ROOT = Path(__file__).parents[3]


@pytest.fixture(scope="module")
def attribute():
    return AttributeContrasts(AttributeConfig(lm="ngram"))


def test_the_issue_example_is_proposed_with_its_article(attribute, proposals):
    found = proposals(attribute, "a man in a red shirt is singing")
    assert "a man in a blue shirt is singing" in found
    assert "a man in an orange shirt is singing" in found and "a man in a orange shirt is singing" not in found
    assert "a man in a red shirt is singing" not in found


def test_synonyms_and_values_alike_are_never_proposed(attribute, proposals):
    found = proposals(attribute, "a big dog runs in the park")
    assert "a small dog runs in the park" in found
    assert not {"a large dog runs in the park", "a huge dog runs in the park", "a giant dog runs in the park"} & set(found)


def test_a_property_describes_only_its_nouns(attribute, proposals):
    assert proposals(attribute, "a black man is singing") == []  # colour is not said of persons
    assert proposals(attribute, "a man with a red nose") == []  # hair colour is said of hair
    assert "a man with blonde hair" in proposals(attribute, "a man with red hair")
    assert proposals(attribute, "a young girl is dancing") == []  # "an old girl": age is not said of a girl
    assert "an old man is dancing" in proposals(attribute, "a young man is dancing")


def test_records_say_what_changed(attribute):
    records = attribute.contrasts(["a man in a red shirt is singing", "a dog runs"])
    assert [r.caption_id for r in records] == ["0"]
    record = records[0]
    assert record.kind == "attribute" and record.edit[0]["from"] == "red" and record.details["property"] == "colour"
    assert record.contrast != record.original and record.filters["reads-as-real"]["passed"]


@pytest.mark.parametrize(
    "yaml_text, problem",
    [
        ("properties:\n  colour:\n    values: [[red], [Red, crimson]]\n", "properties.colour: 'Red' is in two values"),
        ("properties:\n  colour:\n    values: [[red]]\n", "properties.colour: needs at least two values"),
        ("properties: {}\n", "properties: empty"),
        ("properties:\n  colour:\n    values: [[red], [blue]]\n    nouns: [artefact]\n", None),
    ],
)
def test_word_lists_that_cannot_contrast_are_refused_naming_the_key(settings_file, yaml_text, problem):
    if problem is None:  # a single noun, not a class: a valid setting
        assert settings_file("attribute", yaml_text).properties["colour"].nouns == ["artefact"]
        return
    with pytest.raises(InputError, match=f"attribute.yaml: {problem}"):
        settings_file("attribute", yaml_text)


def test_a_new_property_is_settings_alone(settings_file, proposals):
    """docs/contrast.md's weather property, added to a copy of the settings file."""
    settings = yaml.safe_load((ROOT / "configs" / "contrast" / "attribute.yaml").read_text())
    settings["properties"]["weather"] = {"values": [["sunny"], ["rainy"], ["snowy"], ["cloudy"], ["foggy"]], "nouns": ["time", "location", "object"]}
    found = proposals(AttributeContrasts(settings_file("attribute", yaml.safe_dump(settings), lm="ngram")), "people walk on the beach on a sunny day")
    assert "people walk on the beach on a rainy day" in found and "people walk on the beach on a snowy day" in found
