"""The verb recipe's parts (issue 40): the names a settings file may use are the recipe's registries;
each part's signature name carries its settings that differ from the defaults; the pool credits a verb
to the first listed source that proposes it."""

from __future__ import annotations

from typing import get_args

from tvrbench.generators.base import described
from tvrbench.generators.config import ChoiceConfig, FrequencyConfig, Generator, PerplexityConfig, Relation
from tvrbench.generators.verb.constraints import FormFrequency
from tvrbench.generators.verb.filters import Perplexity, ReadsAsReal
from tvrbench.generators.verb.lexicon import LexiconSettings, verb_lexicon
from tvrbench.generators.verb.measures import SpanScores
from tvrbench.generators.verb.pool import VerbPool
from tvrbench.generators.verb.recipe import GENERATORS, RELATIONS
from tvrbench.generators.verb.sources import ListedVerbs, WordNetRelation
from tvrbench.lm.models import load_language_model


def test_the_settings_name_exactly_the_recipes_parts():
    assert set(RELATIONS) == set(get_args(Relation)) and set(GENERATORS) == set(get_args(Generator))


def test_a_part_is_named_with_its_changed_settings_as_ir_measures_names_a_measure():
    spans = SpanScores(load_language_model("ngram"))
    assert described(ReadsAsReal(spans, ChoiceConfig())) == "reads-as-real"
    assert described(ReadsAsReal(spans, ChoiceConfig(max_loss=2, spread=3))) == "reads-as-real(max_loss=2.0)"  # spread is the draw's
    assert described(Perplexity(spans, PerplexityConfig(ppl_fluent_max=500))) == "perplexity(ppl_fluent_max=500.0)"
    assert described(FormFrequency(frozenset(), FrequencyConfig(min_form_log10=-7, min_train_count=3))) == "form-frequency(min_form_log10=-7.0)"


def test_the_pool_credits_a_verb_to_the_first_listed_source():
    """ "open" is an antonym of "close" and one of the listed verbs: which source names it follows the list."""
    lexicon = verb_lexicon(LexiconSettings(5, 100, 1))
    assert "open" in lexicon.antonyms("close")
    listed = ListedVerbs("captions", ["open", "walk"])
    first_antonym = dict(VerbPool([WordNetRelation("antonym", lexicon.antonyms), listed], lexicon).alternatives("close", "close"))
    first_listed = dict(VerbPool([listed, WordNetRelation("antonym", lexicon.antonyms)], lexicon).alternatives("close", "close"))
    assert first_antonym["open"] == "antonym" and first_listed["open"] == "captions"
    assert first_antonym.keys() == first_listed.keys() and first_listed["walk"] == "captions"
    assert "close" not in first_antonym and "shut" not in first_antonym  # never the verb itself or a synonym
