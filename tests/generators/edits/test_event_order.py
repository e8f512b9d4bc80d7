"""Event-order contrasts: two events told in order trade places (verb forms, capitals and commas made
right), a connective with a counterpart becomes it, captions whose events cannot trade cleanly are no
target; connective lists that contradict themselves refused."""

from __future__ import annotations

import pytest

from tvrbench.errors import InputError
from tvrbench.generators.config import EventOrderConfig
from tvrbench.generators.edits.event_order import EventOrderContrasts


@pytest.fixture(scope="module")
def event_order():
    return EventOrderContrasts(EventOrderConfig(lm="ngram"))


def test_the_issue_example_is_proposed(event_order, proposals):
    assert proposals(event_order, "a man opens the door and then walks in") == ["a man walks in and then opens the door"]


def test_clauses_trade_whole_with_the_capital_and_the_commas_in_place(event_order, proposals):
    assert proposals(event_order, "A woman speaks, and then a button appears.") == ["A button appears, and then a woman speaks."]
    assert proposals(event_order, "First a woman speaks and then a button appears") == ["First a button appears and then a woman speaks"]
    assert proposals(event_order, "A man opens the door, then walks in.") == ["A man walks in, then opens the door."]
    assert proposals(event_order, "two kids talking to the camera and then a woman talking to the camera") == [
        "a woman talking to the camera and then two kids talking to the camera"
    ]


def test_verb_forms_are_fixed_where_they_differ(event_order, proposals):
    assert proposals(event_order, "a woman is singing and then speaks") == ["a woman is speaking and then sings"]
    assert proposals(event_order, "a man opens the door and after that walks in") == ["a man walks in and after that opens the door"]


def test_a_connective_with_a_counterpart_becomes_it(event_order, proposals):
    assert proposals(event_order, "a man cooks pasta before eating it") == ["a man cooks pasta after eating it"]
    assert proposals(event_order, "a man runs after the dog catches the ball") == ["a man runs before the dog catches the ball"]


@pytest.mark.parametrize(
    "text",
    [
        "a man picks up a ball and then throws it",  # "throws it" told first: the pronoun before its noun
        "an old man shakes hands with another man and then they hug each other",  # a pronoun subject
        "a police officer drives his car onto a field and then back on to the street",  # no second verb
        "a woman pours water into her pot of meat then tomato sauce",  # a list of things
        "two astronauts experiencing a tense situation before relaxing afterwards",  # "afterwards" would contradict
        "a man opens the door first and then walks in",  # "first" would travel with its event
        "a woman looks after abandoned children",  # "look after"
        "a man drives while talking",  # simultaneous: off by default
        "a man sings and plays the guitar",  # no order stated
        "a blonde woman is speaking and then a button to her channel appears",  # "her" told before the woman (read blind: rejected)
    ],
)
def test_events_that_cannot_trade_cleanly_are_no_target(event_order, proposals, text):
    assert proposals(event_order, text) == []


def test_simultaneous_events_may_be_ordered_when_asked(proposals):
    generator = EventOrderContrasts(EventOrderConfig(lm="ngram", simultaneous={"while": ["before", "after"]}))
    assert proposals(generator, "a man drives while discussing his car") == [
        "a man drives before discussing his car",
        "a man drives after discussing his car",
    ]
    assert proposals(generator, "a group of people are singing while holding coke") == []  # a state has no order
    assert proposals(generator, "a man is on a cell phone while people are fighting") == []  # "before people are fighting"


def test_records_say_what_changed(event_order):
    records = event_order.contrasts(["a female nurse washes her hands and then cleans off a surface", "a dog runs"])
    assert [r.caption_id for r in records] == ["0"]
    record = records[0]
    assert record.contrast == "a female nurse cleans off a surface and then washes her hands"
    assert record.details == {"pattern": "sequence", "connective": "then", "original": "wash", "substitute": "clean"}
    assert [e["from"] for e in record.edit] == ["washes her hands", "cleans off a surface"]
    assert record.filters["reads-as-real"]["passed"]


def test_the_settings_file_is_the_defaults():
    from pathlib import Path

    import yaml

    written = yaml.safe_load((Path(__file__).parents[3] / "tvrbench" / "configs" / "contrast" / "event-order.yaml").read_text())
    assert EventOrderConfig.model_validate(written) == EventOrderConfig()


@pytest.mark.parametrize(
    "yaml_text, problem",
    [
        ("order:\n  before: [Before]\n", "order.before: 'before' is its own counterpart"),
        ("order:\n  before: []\n", "order.before: empty"),
        ("simultaneous:\n  while: ['']\n", "simultaneous.while: empty"),
        ("sequence: []\norder: {}\nsimultaneous: {}\n", "sequence, order, simultaneous: all empty"),
        ("order:\n  then: [before]\n", "order.then: also a sequence connective"),
    ],
)
def test_connective_lists_that_cannot_contrast_are_refused_naming_the_key(settings_file, yaml_text, problem):
    with pytest.raises(InputError, match=f"event-order.yaml: {problem}"):
        settings_file("event-order", yaml_text)
