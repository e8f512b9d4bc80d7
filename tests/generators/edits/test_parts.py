"""The parts the word-edit kinds share, each against its own oracle: agreement and articles (``grammar``),
WordNet's relations (``lexicon``), the meaning and new-word checks (``constraints``), the judge's
scores against whole-sentence log-probabilities (``judge``), the collection's counts (``recipe``) and
one command per registered kind (``cli.contrast_kinds``)."""

from __future__ import annotations

import numpy as np
import pytest
import typer

from tvrbench.generators.base import Request, replace_tokens, replaced_text
from tvrbench.generators.config import AttributeConfig, ObjectConfig
from tvrbench.generators.core import as_captions
from tvrbench.generators.edits import EDIT_KINDS
from tvrbench.generators.edits.attribute import AttributeContrasts
from tvrbench.generators.edits.constraints import MeaningChanged, NewToCaption
from tvrbench.generators.edits.grammar import PLURAL_PRONOUNS, agreement, article_for, plural, singular, with_articles
from tvrbench.generators.edits.judge import EditScores
from tvrbench.generators.edits.lexicon import WordNetFacts
from tvrbench.generators.edits.object import ObjectContrasts
from tvrbench.generators.edits.recipe import Collection, substitute_of
from tvrbench.lm.models import load_language_model, total_logprobs
from tvrbench.resources import spacy_pipeline


def parsed(text: str):
    return spacy_pipeline(disable=("ner",))(text)  # the kinds' pipeline: the parser tells subjects


def raw_candidates(generator, text: str) -> list:
    """Every candidate ``generator``'s source proposes for ``text``, before any check."""
    items, collection = generator.prepare(as_captions([text]))
    search = generator.search(collection)
    targets = search.finder.find(items[0])
    return [c for found in search.source.generate([Request(items[0], t, targets, None) for t in targets]) for c in found]


@pytest.mark.parametrize(("word", "expected"), [("person", "people"), ("Man", "Men"), ("fish", "fish"), ("knife", "knives")])
def test_plural_and_singular_come_back_to_the_noun(word, expected):
    assert plural(word) == expected
    assert singular(expected) == word


@pytest.mark.parametrize(("word", "article"), [("apple", "an"), ("hour", "an"), ("university", "a"), ("red", "a")])
def test_the_article_is_the_one_the_word_is_said_with(word, article):
    assert article_for(word) == article


def test_a_subject_made_plural_brings_its_verbs_and_pronouns_along():
    doc = parsed("a man is playing his guitar and sings")
    changes = agreement(doc[1], plural_subject=True, pronouns=PLURAL_PRONOUNS)
    assert replaced_text(doc.text, changes) == "a man are playing their guitar and sing"


def test_an_article_follows_the_word_put_after_it():
    doc = parsed("a man eats a red apple")
    edit = replace_tokens(doc, 4, 5, "orange")
    assert replaced_text(doc.text, with_articles(doc, [edit])) == "a man eats an orange apple"


def test_wordnet_relations_tell_a_changed_meaning_from_a_kept_one():
    facts = WordNetFacts()
    assert facts.related_nouns("dog", "animal") is not None  # a hypernym
    assert facts.related_nouns("dog", "poodle") is not None  # a hyponym
    assert facts.related_nouns("dog", "cat") is None
    assert facts.related_adjectives("big", "large") is not None
    assert facts.related_adjectives("red", "blue") is None


def test_the_meaning_and_new_word_checks_refuse_what_they_name():
    generator = ObjectContrasts(ObjectConfig(lm="ngram"))
    candidates = raw_candidates(generator, "a woman plays a song on the cello")
    assert candidates
    meaning = MeaningChanged(WordNetFacts(), "noun").check(candidates)
    new = NewToCaption().check(candidates)
    for candidate, by_meaning, by_word in zip(candidates, meaning, new):
        original, substitute = candidate.details["original"], substitute_of(candidate)
        assert by_meaning.passed == (WordNetFacts().related_nouns(original, substitute) is None)
        assert by_word.passed == (substitute not in {"woman", "play", "plays", "a", "song", "on", "the", "cello"})


def test_the_judge_gap_is_the_whole_sentences_log_probability_gap():
    """The judge scores from the first changed word on, after the shared words, and groups targets with
    the same words before their cut; each gap still equals the two whole sentences' difference."""
    lm = load_language_model("ngram")
    candidates = raw_candidates(AttributeContrasts(AttributeConfig(lm="ngram")), "a man in a red shirt is holding a small box")
    assert len({c.request.target.start for c in candidates}) > 1
    scored = EditScores(lm).of(candidates)
    for candidate, (left, original, contrast) in zip(candidates, scored):
        whole = total_logprobs(lm, [candidate.original, candidate.text])
        np.testing.assert_allclose([left.total + original.total, left.total + contrast.total], whole, atol=1e-4)


def test_the_collection_counts_each_word_by_lemma_and_part_of_speech():
    docs = list(spacy_pipeline().pipe(["a dog runs", "two dogs run fast", "the man runs"]))
    words = Collection.of(docs).words
    assert words[("dog", "NOUN")] == 2 and words[("run", "VERB")] == 3 and ("fast", "ADV") in words


def test_every_registered_kind_is_a_contrast_command_with_its_example():
    from tvrbench.cli import load_commands
    from tvrbench.cli.contrast_kinds import edit_command  # noqa: F401  (registers the commands)

    group = typer.main.get_command(load_commands()).commands["contrast"]
    for kind in EDIT_KINDS.values():
        assert kind.example in group.commands[kind.name].help
