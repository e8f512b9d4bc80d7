"""Object contrasts: another noun of the same kind, in the original's number and with its article, never a
synonym, hypernym or hyponym, never a person, a compound or a name, a noun that names a kind or one taken
in a wrong sense; the language model's likely nouns of the kind come first; contradictory lists refused."""

from __future__ import annotations

import re

import pytest

from tvrbench.errors import InputError
from tvrbench.generators.config import ObjectConfig
from tvrbench.generators.edits.object import ObjectContrasts


@pytest.fixture(scope="module")
def objects():
    return ObjectContrasts(ObjectConfig(lm="ngram"))


def test_the_issue_example_is_proposed(objects, proposals):
    found = proposals(objects, "a woman plays a song on the cello")
    assert "a woman plays a song on the piano" in found and "a woman plays a song on the guitar" in found
    assert all(re.fullmatch(r"a woman plays a song on the \w+", text) for text in found)


def test_a_sport_is_said_without_an_article_and_a_ball_with_one(objects, proposals):
    assert "a man is playing tennis" in proposals(objects, "a man is playing basketball")
    thrown = proposals(objects, "a boy throws a basketball to a dog")
    assert "a boy throws a football to a dog" in thrown
    assert not any(sport in text for text in thrown for sport in ("tennis", "golf", "volleyball"))


def test_number_and_article_agree(objects, proposals):
    cut = proposals(objects, "a woman is cutting onions")
    assert "a woman is cutting tomatoes" in cut and "a woman is cutting tomato" not in cut
    eaten = proposals(objects, "a man is eating a pear")
    assert "a man is eating an apple" in eaten and "a man is eating a apple" not in eaten


def test_the_meaning_changes(objects, proposals):
    driven = proposals(objects, "a man is driving a car")
    assert "a man is driving a truck" in driven
    new = {text.rsplit(" ", 1)[1] for text in driven}
    assert not new & {"automobile", "auto", "jeep", "sedan", "convertible", "vehicle"}  # synonyms, kinds of car, a kind above
    assert all(objects.facts.related_nouns("car", word) is None for word in new)


@pytest.mark.parametrize(
    "text",
    [
        "a man and a woman talk to the girl",  # persons are the gender and person-ID kinds'
        "a boy plays grand theft auto 5",  # a name
        "a woman creating a fondant baby",  # a compound
        "a man shows a thing",  # too general
        "a man puts a book on the shelf",  # a shelf is no geological formation (WordNet's second sense)
        "a man is wearing glasses",  # glasses are not glass
        "a man sits in a room",  # "room" names the kind: every room is a kind of it
        "the couples are kissing in the game of throne",  # a word of a title
        "the song hero by skillet",  # a band's name
        "a man is holding baskets on his head",  # body parts are no kind (read blind: "... on feet" rejected)
        "polar bear jumps into water",  # an adjective WordNet names the noun with (read blind: "polar cat" rejected)
    ],
)
def test_nouns_that_are_no_target(objects, proposals, text):
    assert proposals(objects, text) == []


def test_a_noun_that_names_its_kind_stays(objects, proposals):
    found = proposals(objects, "a dog plays with a ball")
    assert "a cat plays with a ball" in found and all(text.endswith("plays with a ball") for text in found)


class Proposing:
    """A language model that proposes fixed next words (the judge is not asked in these tests)."""

    name = "proposing"

    def __init__(self, words):
        self.words = words
        self.lefts = []

    def next_words(self, lefts, top):
        self.lefts += lefts
        return [self.words for _ in lefts]


def test_the_language_models_nouns_of_the_kind_come_first(proposals):
    generator = ObjectContrasts(ObjectConfig(lm="ngram", nearest=2))
    lm = generator.__dict__["lm"] = Proposing(["red", "bike", "animal", "stallion", "bull", "elephant", "dog"])
    found = proposals(generator, "a man is riding a horse")
    assert lm.lefts == ["a man is riding a", "a man is riding an"]  # both articles: the model's nouns must not all start alike
    # its first two nouns of the kind ("bike" is a vehicle, "animal" a kind above, "stallion" a kind of horse), then GloVe's nearest
    assert found[:2] == ["a man is riding a bull", "a man is riding an elephant"]
    assert "a man is riding a dog" in found[2:] and len(found) <= 4


def test_records_say_what_changed(objects):
    records = objects.contrasts(["a woman plays a song on the cello", "a man talks"])
    assert [r.caption_id for r in records] == ["0"]
    record = records[0]
    assert record.kind == "object" and record.edit[0]["from"] == "cello" and record.details["kind"] == "musical_instrument.n.01"
    assert record.details["original"] == "cello" and record.details["substitute"] == record.edit[0]["to"]
    assert record.contrast != record.original and record.filters["reads-as-real"]["passed"]


@pytest.mark.parametrize(
    "yaml_text, problem",
    [
        ("kinds: []\nuncountable: []\n", "kinds: empty"),
        ("kinds: [bird.n.01, Bird.n.01]\nuncountable: []\n", "kinds: 'Bird.n.01' is listed twice"),
        ("kinds: [bird.n.01]\nuncountable: [sport.n.01]\n", "uncountable: 'sport.n.01' is not one of the kinds"),
        ("skip: [thing, '  ']\n", "skip: an empty entry"),
    ],
)
def test_word_lists_that_contradict_themselves_are_refused_naming_the_key(settings_file, yaml_text, problem):
    with pytest.raises(InputError, match=f"object.yaml: {problem}"):
        settings_file("object", yaml_text)


def test_a_kind_wordnet_does_not_have_is_refused():
    generator = ObjectContrasts(ObjectConfig(lm="ngram", kinds=["musical_instrument.n.01", "vehicule.n.01"], uncountable=[]))
    with pytest.raises(InputError, match="kinds: WordNet has no synset 'vehicule.n.01'"):
        generator.contrasts(["a woman plays a song on the cello"])
