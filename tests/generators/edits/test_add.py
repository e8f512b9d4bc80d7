"""Add contrasts: an adjective before a bare noun it describes (the article made to agree), a noun of the
same kind coordinated with a plural or bare object, a thing with a person (a form off by default); never
a word the caption has, an object that means the same, an addition where it would say another thing;
word lists that contradict themselves refused."""

from __future__ import annotations

import pytest

from tvrbench.errors import InputError
from tvrbench.generators.config import AddConfig
from tvrbench.generators.edits.add import AddContrasts


@pytest.fixture(scope="module")
def add():
    return AddContrasts(AddConfig(lm="ngram"))


def test_the_issue_example_is_proposed(add, proposals):
    found = proposals(add, "a girl sings")
    assert "a little girl sings" in found and "a young girl sings" in found
    assert all(text.endswith("girl sings") and len(text.split()) == 4 for text in found)


def test_the_article_agrees_and_a_first_word_keeps_its_capital(add, proposals):
    found = proposals(add, "a dog plays with a ball")
    assert "a dog plays with an orange ball" in found and "a dog plays with a orange ball" not in found
    assert "a huge dog plays with a ball" in found
    assert "Little kids are playing" in proposals(add, "Kids are playing")


def test_an_added_object_is_no_kind_of_another_noun_of_the_caption(add, proposals):
    """Read blind, "loading guns and bullets with ammunition" was rejected: what is added must be another
    thing than every noun of the caption, not only the one it joins."""
    alone = proposals(add, "a bowl is on the table and a woman is cutting onions")
    beside = proposals(add, "vegetables are in a bowl and a woman is cutting onions")
    assert "a bowl is on the table and a woman is cutting onions and tomatoes" in alone
    assert not [text for text in beside if "onions and" in text]  # tomatoes, potatoes, beans: kinds of vegetable


def test_an_object_of_the_same_kind_is_coordinated_in_the_same_number(add, proposals):
    cut = proposals(add, "a woman is cutting onions with a knife")
    assert "a woman is cutting onions and tomatoes with a knife" in cut
    assert "a woman is cutting onions and vegetables with a knife" not in cut  # a kind above onions means no other thing
    assert "a man is playing guitar and piano" in proposals(add, "a man is playing guitar")


@pytest.mark.parametrize(
    "text, place",
    [
        ("a man drives a car", "car"),  # one car with its article: "a car and a truck" would be two at once
        ("a woman eats a bowl of soup", "bowl"),  # "a bowl and a cup of soup" says another thing
        ("a man is cutting salt and pepper", "salt"),  # a list already
        ("a man is cutting salt and pepper", "pepper"),
    ],
)
def test_no_object_where_it_would_say_another_thing(add, proposals, text, place):
    assert not [found for found in proposals(add, text) if f"{place} and" in found and f"{place} and" not in text]


@pytest.mark.parametrize(
    "text",
    [
        "a woman is talking",  # adults: only young, old, elderly pass the default judge, and the cap would drop most
        "a young girl sings",  # she has an adjective already
        "a man shows a basketball player",  # a compound
        "a guy with glasses is standing",  # glasses are no glass: no "huge glasses"
    ],
)
def test_no_attribute_before_these_nouns(add, proposals, text):
    assert proposals(add, text) == []


def test_read_blind_and_rejected_additions_are_not_proposed(add, proposals):
    """Settings, not code: a kettle of wood, the camera that films grown old (both rejected blind)."""
    assert not [text for text in proposals(add, "person lighting a kettle") if any(w in text for w in ("wooden", "plastic", "glass"))]
    assert not [text for text in proposals(add, "two kids talking to the camera") if "old camera" in text or "new camera" in text]
    assert "a man is holding a wooden bowl" in proposals(add, "a man is holding a bowl")


def test_a_word_of_the_caption_is_never_added(add, proposals):
    found = proposals(add, "a little boy plays with a red car and a ball")
    assert not [text for text in found if text.count("red") > 1 or "little" in text.replace("a little boy", "")]


def test_a_thing_with_a_person_when_asked(proposals):
    generator = AddContrasts(AddConfig(lm="ngram", forms=["with"], accompaniments=["guitar", "glasses", "dog"]))
    assert proposals(generator, "a man is singing") == [
        "a man with a guitar is singing",
        "a man with glasses is singing",
        "a man with a dog is singing",
    ]
    assert proposals(generator, "a man in a suit is singing") == []  # "a man with a dog in a suit"
    assert proposals(generator, "a woman feeds a dog") == ["a woman with a guitar feeds a dog", "a woman with glasses feeds a dog"]


def test_records_say_what_was_added(add):
    records = add.contrasts(["a girl sings", "the sky"])
    assert [r.caption_id for r in records] == ["0"]
    record = records[0]
    assert record.kind == "add" and record.details["form"] == "attribute" and record.details["original"] == "girl"
    assert record.edit[0]["from"] == "" and record.edit[0]["to"].strip() == record.details["substitute"]
    assert record.contrast != record.original and record.filters["reads-as-real"]["passed"]


@pytest.mark.parametrize(
    "yaml_text, problem",
    [
        ("forms: []\n", "forms: empty"),
        ("properties: {}\n", "properties: empty"),
        ("properties:\n  size:\n    values: [[big], [small, Big]]\n", "properties.size: 'Big' is listed twice"),
        ("properties:\n  size:\n    values: [[big], []]\n", "properties.size: value 2 is empty"),
        ("forms: [with]\naccompaniments: []\n", "accompaniments: empty"),
        ("accompaniments: [hat, sun glasses]\n", "accompaniments: 'sun glasses' is not one word"),
        ("objects:\n  kinds: [bird.n.01]\n  uncountable: [sport.n.01]\n", "objects: uncountable: 'sport.n.01' is not one of the kinds"),
    ],
)
def test_word_lists_that_contradict_themselves_are_refused_naming_the_key(settings_file, yaml_text, problem):
    with pytest.raises(InputError, match=f"add.yaml: {problem}"):
        settings_file("add", yaml_text)


def test_properties_may_be_left_out_when_no_attribute_is_added(settings_file):
    assert settings_file("add", "forms: [object]\nproperties: {}\n").properties == {}
