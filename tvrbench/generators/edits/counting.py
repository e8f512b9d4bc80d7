"""Counting contrasts: a number or a quantity becomes another that means other counts, the noun, its verbs
and its pronouns made to agree ("two men are cooking" → "three men are cooking", "a dog runs" → "two
dogs run", "kids are playing with their dog" → "a kid is playing with their dog").

* targets: a noun phrase whose head noun is counted: by a quantity of the settings' table before it
  ("a", "one", "two", "a few", "several", "a group of", ...) or a digit, or a bare plural subject or
  object ("kids are playing"). A noun that "a", a bare plural or a vague plural ("some", "various")
  counts must be one the settings' ``nouns`` name (persons and animals by their first WordNet sense:
  "a man is singing" → "two men are singing" reads like a real caption, "a woman cuts an onion" →
  "... two onions" too often not); a noun a number or another quantity counts may be any ("three
  songs" → "two songs"). Never a definite or possessive phrase ("the man", "his dog"), a possessor
  ("a man's hand"), a noun inside a compound or a name ("hot dog"), a quantity's own noun ("a *lot*
  of"), a noun whose plural is its singular ("sheep"), a noun that may well be a thing ("stroller"),
  a complement ("a man is a chef"), a generic plural ("a show for kids"), nor a plural the small
  parser has likely misread a verb of ("a girl *talks*/NNS to a baby"). A single person or animal
  is no target where several would share one thing: the object of its verb ("a man is playing *a
  guitar*", "a girl using *her phone*"), a garment or a name of its own ("a woman in *a yellow top*",
  "a lady *named lizzy*").
* source: every quantity of the table whose counts do not overlap the original's ("a few" never
  becomes "four"; a bare plural, which means two or more, only becomes one; a singular may become a
  bare plural: "a boy is singing" → "boys are singing"), the noun made singular or plural, the verbs
  it is the subject of made to agree (also in a relative clause, after "there is"), and the pronouns
  that can only refer to it ("his" → "their"; "their" → "his" of men, "her" of women, left as it is
  of other persons: singular "they"). A plural that acts as several ("hug each other", "together")
  never becomes one, nor what a plural subject acts on ("people are riding *horses*"), nor one of two
  ("they *both*") several.
* constraints: none beyond the table (the counts say what a contrast is); the judge (looser than the
  other kinds': a count's word costs the language model its rarity, 3 to 7 nats for "two" instead of
  "a", and every candidate is grammatical by construction), the draw and the cap.

The quantities, the nouns counted and the genders are settings (``configs/contrast/counting.yaml``).
A record's ``substitute`` is its new quantity, or the noun's plural where it has none ("a boy" →
"boys": the contrast brings in no quantity word); ``quantity`` names the table's entry either way.

Measured on MSR-VTT's 1,000 test captions (Gemma 3 270M judge): about 43 % of the captions have a
target, and most targets count one person ("a man ..."), so two thirds of the contrasts go from one to
several. The cap (no quantity in over 5 % of the records) then has every quantity of the table come
in, most of which captions hardly use ("a single", "a dozen", "a number of"): each is a word only
contrasts bring, and a bag-of-words reader tells the contrast from the original in about 90 % of
pairs. The draw spreads the quantities evenly (its prior is -log(1 + expected uses), the caption's
originals left out: the shared prior would draw "two" for most singulars and the cap then throw them
back). Without the cap, with the shared prior (bare plurals and "a" then come in about as often as
they leave), the same targets read 72 %; with a cap of 20 %, 80 %: the cap is what costs it.
"""

from __future__ import annotations

import functools
import math
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from tvrbench.generators.base import Candidate, CaptionItem, Request, Target, match_case, replace_tokens
from tvrbench.generators.config import CountingConfig, Quantity
from tvrbench.generators.edits.grammar import article_for, inflected_verb, plural, singular, verbs_agreeing_with
from tvrbench.generators.edits.lexicon import WordNetFacts
from tvrbench.generators.edits.recipe import Collection, EditContrasts, Recipe, substitute_of
from tvrbench.generators.records import Replacement
from tvrbench.io.captions import Captions

BARE = "plural"  # the name of a bare plural's (absent) quantity, as a target's label and a record's "original"
MAX_DIGITS = 100  # a digit above this is a year, a score or a name ("in 2002", "grand theft auto 5" is after its noun)
ONE_OF = frozenset({"a", "an", "the", "this", "that", "his", "her", "its", "their", "my", "your", "our"})  # before one thing
PERSON = ("person", "Tops", "person.n.01", "people")  # what makes a noun a person's for the pronouns
# The pronouns of one and of several, by what they refer to.
SINGULAR_PRONOUNS = {
    "male": {"he": "they", "him": "them", "his": "their", "himself": "themselves"},
    "female": {"she": "they", "her/PRP": "them", "her/PRP$": "their", "hers": "theirs", "herself": "themselves"},
    "thing": {"it": "they", "its": "their", "itself": "themselves"},
}
PLURAL_PRONOUNS = {
    "male": {"they": "he", "them": "him", "their": "his", "theirs": "his", "themselves": "himself"},
    "female": {"they": "she", "them": "her", "their": "her", "theirs": "hers", "themselves": "herself"},
    "thing": {"they": "it", "them": "it", "their": "its", "themselves": "itself"},
}


@dataclass(frozen=True)
class Counted:
    """A counted noun phrase: ``noun`` (whose number changes), ``head`` (what its verbs agree with: the
    noun, or the quantity's own noun: "a *group* of people are"), the quantity's tokens ``[start, end)``
    (empty for a bare plural: where one goes), its ``name`` in the table and the ``counts`` it means."""

    noun: object
    head: object
    start: int
    end: int
    name: str
    counts: tuple[int, int | None]

    @property
    def plural(self) -> bool:
        return self.counts[0] > 1


def overlapping(a: Sequence, b: Sequence) -> bool:
    (low, high), (other_low, other_high) = a, b
    return (high is None or other_low <= high) and (other_high is None or low <= other_high)


def forms(noun) -> tuple[str, str] | None:
    """The noun's singular and plural (as the caption writes it: "Man", "men"), or None when they are one
    word ("sheep") or do not come back to each other."""
    if not noun.text.isalpha():  # inflect refuses an empty word; "t-shirts", "3d" are not worth the risk
        return None
    if noun.tag_ == "NN":
        one, several = noun.text, plural(noun.text)
    elif noun.tag_ == "NNS":
        one, several = singular(noun.text), noun.text
    else:
        return None
    if not one.isalpha() or one.lower() == several.lower() or plural(one).lower() != several.lower():
        return None
    return one, several


class CountedNouns:
    """Targets: the counted noun phrases (the module's docstring says which)."""

    def __init__(self, config: CountingConfig, facts: WordNetFacts):
        self.config = config
        self.facts = facts
        self.quantities = {" ".join(name.lower().split()): q for name, q in config.quantities.items()}
        self.phrases = sorted((tuple(name.split()) for name in self.quantities), key=len, reverse=True)
        self.excepted = tuple(word.lower() for word in config.except_)
        self.male, self.female = {w.lower() for w in config.male}, {w.lower() for w in config.female}
        self.together = [tuple(phrase.lower().split()) for phrase in config.together]
        for key in ("nouns", "objects", "except"):
            facts.check_synsets(getattr(config, key.replace("except", "except_")), key)
        for name, q in config.quantities.items():
            facts.check_synsets([*q.nouns, *q.except_], f"quantities.{name}")

    def lemma(self, noun) -> str:
        found = forms(noun)
        return (found[0] if found else noun.lemma_).lower()

    def names(self, noun, names: Sequence[str]) -> bool:
        """Whether ``names`` name the noun by its first WordNet sense alone (``WordNetFacts.named``)."""
        lemma = self.lemma(noun)
        return self.facts.named(lemma, self.facts.noun_class(lemma), names, senses=1)

    def is_person(self, noun) -> bool:
        return self.names(noun, PERSON)

    def gender(self, noun) -> str | None:
        """``male``, ``female`` (the settings' lists), ``person`` (another person) or ``thing``."""
        lemma = self.lemma(noun)
        if lemma in self.male:
            return "male"
        if lemma in self.female:
            return "female"
        return "person" if self.is_person(noun) else "thing"

    def matched(self, doc, start: int, stop: int) -> tuple[str, int] | None:
        """The longest quantity of the table whose words begin at token ``start`` and end by ``stop``
        ("an" read as "a"), or a digit there: its name and its length."""
        words = [("a" if t.lower_ == "an" else t.lower_) for t in doc[start:stop]]
        for phrase in self.phrases:
            if tuple(words[: len(phrase)]) == phrase:
                return " ".join(phrase), len(phrase)
        if words and words[0].isdigit() and doc[start].dep_ == "nummod" and 1 <= int(words[0]) <= MAX_DIGITS:
            return words[0], 1
        return None

    def counts(self, name: str) -> tuple[int, int | None]:
        if name == BARE:
            return tuple(self.config.bare_plural.counts)
        if name.isdigit():
            return int(name), int(name)
        return tuple(self.quantities[name].counts)

    @functools.lru_cache(maxsize=4096)  # noqa: B019 - tokens of the parses a run holds
    def counted(self, noun) -> Counted | None:
        """The counted phrase whose noun is ``noun``, or None (see the module's docstring)."""
        if noun.pos_ != "NOUN" or forms(noun) is None or noun.dep_ in ("compound", "poss", "npadvmod", "appos"):
            return None
        if noun.dep_ in ("attr", "acomp", "oprd") and not any(child.dep_ == "expl" for child in noun.head.children):
            return None  # "a man is a chef": the subject would have to change too
        if any(child.dep_ == "case" for child in noun.children):  # "a man's hand"
            return None
        if self.lemma(noun) in self.excepted:  # "a *lot*", "a *group* of"
            return None
        doc = noun.doc
        before = [child for child in noun.children if child.i < noun.i]
        if any(child.dep_ == "poss" or child.tag_ in ("PRP$", "WP$") for child in before):
            return None
        left = min((child.left_edge.i for child in before), default=noun.i)
        found = self.matched(doc, left, noun.i)
        head, start, end = noun, left, left
        if found is not None:
            name, length = found
            end = left + length
            if any(t.dep_ in ("det", "nummod", "poss", "quantmod") or t.like_num for t in doc[end : noun.i]):
                return None
        elif noun.dep_ == "pobj" and noun.head.lower_ == "of" and noun.head.head.pos_ == "NOUN" and noun.head.head.i < noun.i:
            quantity = noun.head.head
            start = quantity.left_edge.i
            phrase = " ".join(("a" if t.lower_ == "an" else t.lower_) for t in doc[start:left])
            if phrase not in self.quantities:
                return None
            name, head, end = phrase, quantity, left
        elif noun.tag_ == "NNS" and not any(child.dep_ in ("det", "nummod", "quantmod") for child in before):
            name = BARE
        else:
            return None
        counts = self.counts(name)
        if (counts[0] > 1) != (noun.tag_ == "NNS"):  # "two man", "a people": a parse or a caption astray
            return None
        if not self.countable(noun, name, counts):
            return None
        if head.dep_ in ("nsubj", "nsubjpass") and any(c.dep_ == "attr" and c.pos_ == "NOUN" for c in head.head.children):
            return None  # "a man is a chef": its complement would have to change too
        if misread_verb(head):
            return None
        return Counted(noun, head, start, end, name, counts)

    def countable(self, noun, name: str, counts) -> bool:
        """Whether the settings let ``noun`` be counted as the caption counts it."""
        if self.names(noun, self.excepted) or self.in_compound(noun):
            return False
        vague = counts[0] <= 2 and counts[1] is None  # a bare plural, "some", "various": no count the video shows of a thing
        if not vague and counts != (1, 1):  # a number or a quantity counts it already
            return True
        if name == BARE and noun.dep_ not in ("nsubj", "nsubjpass", "dobj", "ROOT", "attr"):
            return False  # "a show for kids", "exercises for women": a kind of person, not a count
        if counts == (1, 1) and (self.described_as_one(noun) or self.acts_on_one(noun)):
            return False
        if self.thing_too(noun):
            return False
        return self.names(noun, self.config.nouns) or (noun.dep_ == "dobj" and self.names(noun, self.config.objects))

    def thing_too(self, noun) -> bool:
        """Whether the noun may well be a thing (``WordNetFacts.rare_first_sense``: "stroller", "monitor")."""
        return self.facts.rare_first_sense(self.lemma(noun))

    def in_compound(self, noun) -> bool:
        """Whether the word before the noun makes with it a noun that is no kind of it ("hot dog", "teddy bear")."""
        return noun.i > 0 and noun.nbor(-1).is_alpha and self.facts.joined_apart(noun.nbor(-1).lower_, self.lemma(noun))

    @staticmethod
    def described_as_one(noun) -> bool:
        """Whether a phrase of the noun's own says one thing of it ("a woman in *a yellow top*", "a man
        dressed as *a woman*", "a man who is wearing *a hat*", "a lady *named lizzy*"): several would be
        "in yellow tops"."""
        for child in noun.children:
            if child.dep_ in ("acl", "appos") and (child.lemma_.lower() in ("name", "call") or child.pos_ == "PROPN"):
                return True  # "a lady *named lizzy*": one person's name
            if child.dep_ in ("prep", "acl", "relcl") and child.i > noun.i:
                for token in child.subtree:
                    if token.dep_ in ("pobj", "dobj") and token.tag_ == "NN" and any(d.lower_ in ("a", "an") for d in token.children):
                        return True
        return False

    def acts_on_one(self, noun) -> bool:
        """Whether ``noun`` is the subject of a verb whose object is one thing ("a man is playing *a guitar*",
        "a girl using *her phone*") or who does it in one garment ("dresses up in *a wig*"): several persons
        playing one guitar is what a reader doubts."""
        verbs = [noun.head] if noun.dep_ in ("nsubj", "nsubjpass") else []
        verbs += [child for child in noun.children if child.dep_ == "acl" and child.tag_ == "VBG"]  # "a girl *using* her phone"
        verbs += [child for verb in verbs for child in verb.children if child.dep_ in ("conj", "xcomp") and child.pos_ == "VERB"]
        for verb in verbs:
            for child in verb.children:
                objects = [child] if child.dep_ == "dobj" else [g for g in child.children if g.dep_ == "pobj"] if child.lower_ == "in" else []
                for thing in objects:  # "girls dress up *in a bright wig*": one wig
                    one = thing.tag_ == "NN" and any(d.dep_ in ("det", "poss") and d.lower_ in ONE_OF for d in thing.children)
                    if one and (child.dep_ == "dobj" or "clothing.n.01" in self.facts.above(self.lemma(thing), 1)):
                        return True
        return False

    def allows(self, quantity: Quantity, noun) -> bool:
        return self.names(noun, quantity.nouns) and not self.names(noun, quantity.except_)

    def acts_together(self, counted: Counted) -> bool:
        """Whether the caption says the plural acts as several ("each other", "together")."""
        words = [t.lower_ for t in counted.noun.doc]
        return any(tuple(words[k : k + len(phrase)]) == phrase for phrase in self.together for k in range(len(words)))

    def find(self, item: CaptionItem) -> list[Target]:
        """The caption's counted phrases; only its plural ones when it has any (most captions count one
        thing, "a man ..."; a plural is the rarer original, and a contrast that goes back to one keeps
        the directions balanced)."""
        found = [counted for counted in map(self.counted, item.doc) if counted is not None]
        several = [counted for counted in found if counted.plural]
        return [Target(counted.start, counted.noun.i + 1, counted.name) for counted in several or found]


def each_has_one(noun) -> bool:
    """Whether the noun is what a plural subject acts on ("people are riding *horses*": a horse each);
    made one, several would share it ("people are riding a single horse" was rejected blind)."""
    verb = noun.head if noun.dep_ == "dobj" else noun.head.head if noun.dep_ == "pobj" else None
    return verb is not None and any(
        child.dep_ in ("nsubj", "nsubjpass") and (child.tag_ == "NNS" or child.lower_ in ("they", "we")) for child in verb.children
    )


def verb_form(token) -> bool:
    """Whether ``token`` could be a verb's third person singular ("talks", "plays"), whatever its tag."""
    from lemminflect import getInflection

    return token.lower_.endswith("s") and token.lower_ in (getInflection(token.lemma_.lower(), tag="VBZ") or ())


def misread_verb(head) -> bool:
    """Whether the small parser has likely read a verb of ``head`` as a noun ("a girl *talks*/NNS to a
    baby", "a man plays a game and *talks*/NNS"): its verbs could not be made to agree."""
    if head.dep_ in ("nsubj", "nsubjpass") and head.head.tag_ in ("NN", "NNS"):
        return True
    if head.dep_ in ("nsubj", "nsubjpass") and sum(child.dep_ in ("nsubj", "nsubjpass") for child in head.head.children) > 1:
        return True  # "a crowd of people sitting ... as one man plays": two subjects of one verb
    if head.dep_ == "ROOT" and any(subjectless_finite(token) for token in head.doc):
        return True  # "a cartoon man in sunglasses *waves*/NNS at the crowd and *smiles*": a verb of a fragment's noun
    return any(
        token.tag_ == "NNS" and token.dep_ in ("conj", "ROOT") and token.nbor(-1).lower_ == "and" and verb_form(token)
        for token in head.doc[head.i + 1 :]
    )


def subjectless_finite(token) -> bool:
    """A present-tense verb or auxiliary whose clause has no subject of its own."""
    if token.tag_ not in ("VBZ", "VBP"):
        return False
    verb = token.head if token.dep_ in ("aux", "auxpass") else token
    return not any(child.dep_ in ("nsubj", "nsubjpass", "expl", "csubj") for child in verb.children)


def coordinated(token) -> bool:
    """Whether ``token`` is one of nouns joined by "and" / "or" ("a man and a woman are")."""
    nominal = ("NOUN", "PROPN", "PRON", "NUM")
    return (token.dep_ == "conj" and token.head.pos_ in nominal) or any(child.dep_ == "conj" and child.pos_ in nominal for child in token.children)


def agreeing_verbs(head) -> list:
    """The finite verbs that agree with ``head``: grammar's, and "there *is* a man"."""
    verbs = verbs_agreeing_with(head)
    if head.dep_ == "attr" and any(child.dep_ == "expl" for child in head.head.children):
        verb = head.head
        auxiliaries = [child for child in verb.children if child.dep_ in ("aux", "auxpass") and child.i < verb.i]
        verbs += auxiliaries[:1] or [verb]
    return verbs


class OtherCounts:
    """Candidates: each quantity of the table whose counts do not overlap the original's, with the noun,
    verbs and pronouns made to agree."""

    name = "other-counts"

    def __init__(self, nouns: CountedNouns):
        self.nouns = nouns

    def generate(self, requests: Sequence[Request]) -> list[list[Candidate]]:
        lists = []
        for request in requests:
            doc = request.item.doc
            counted = self.nouns.counted(doc[request.target.end - 1])
            candidates = []
            for name, quantity in [*self.nouns.quantities.items(), (BARE, self.nouns.config.bare_plural)]:
                if not quantity.substitute or overlapping(counted.counts, quantity.counts) or not self.nouns.allows(quantity, counted.noun):
                    continue
                several = quantity.counts[0] > 1
                if counted.plural and not several and (self.nouns.acts_together(counted) or each_has_one(counted.noun)):
                    continue
                if several != counted.plural and coordinated(counted.head) and self.pronoun_after(counted):
                    continue  # "a young man and his dad" -> "young men and his dad": whose dad?
                if not counted.plural and several and any(t.lower_ == "both" for t in counted.noun.doc[counted.noun.i + 1 :]):
                    continue  # "... followed by a dog; they both run": two things, which a plural would make more
                substitute = forms(counted.noun)[1].lower() if name == BARE else name  # a bare plural brings in only the noun's plural
                counts = [list(counted.counts), list(quantity.counts)]
                details = {"original": counted.name, "substitute": substitute, "quantity": name, "counts": counts}
                candidates.append(Candidate(request, self.edit(counted, name, several), details))
            lists.append(candidates)
        return lists

    @staticmethod
    def pronoun_after(counted: Counted) -> bool:
        """Whether a personal or possessive pronoun of one or of several follows the noun."""
        tables = [*SINGULAR_PRONOUNS.values(), *PLURAL_PRONOUNS.values()]
        words = {key.split("/")[0] for table in tables for key in table}
        return any(token.lower_ in words for token in counted.noun.doc[counted.noun.i + 1 :])

    def edit(self, counted: Counted, name: str, several: bool) -> tuple[Replacement, ...]:
        """The phrase from the quantity to the noun rewritten ("a young man" -> "two young men", "kids"
        -> "a kid", "a group of people" -> "a person"), and what agrees with it."""
        doc, noun = counted.noun.doc, counted.noun
        one, many = forms(noun)
        new_noun = match_case(many if several else one, noun.text) if several != counted.plural else noun.text
        pieces = [token.text_with_ws for token in doc[counted.end : noun.i]] + [new_noun]
        first = doc[counted.start].text
        capital = counted.start == 0 and first[:1].isupper() and not (len(first) > 1 and first.isupper())  # "A man", not "TV"
        if capital:
            pieces[0] = pieces[0][:1].lower() + pieces[0][1:]
        quantity = "" if name == BARE else article_for(pieces[0]) if name == "a" else name
        text = f"{quantity} {''.join(pieces)}" if quantity else "".join(pieces)
        changes = [replace_tokens(doc, counted.start, noun.i + 1, text[:1].upper() + text[1:] if capital else text)]
        if not coordinated(counted.head):
            for verb in agreeing_verbs(counted.head):
                new = inflected_verb(verb, several)
                if new is not None and new != verb.text:
                    changes.append(replace_tokens(doc, verb.i, verb.i + 1, new))
            if several != counted.plural:
                changes += self.pronouns(counted, several)
        return tuple(sorted(changes, key=lambda r: r.char_start))

    def pronouns(self, counted: Counted, several: bool) -> list[Replacement]:
        """The pronouns after the noun that can only refer to it, made to agree, and the verbs they are
        the subject of. One person whose gender the noun does not say keeps "they" (singular they)."""
        doc, noun = counted.noun.doc, counted.noun
        gender = self.nouns.gender(noun)
        if gender == "person" and not several:
            return []
        groups = ("male", "female") if gender == "person" else (gender,)
        changes = []
        for token in doc[noun.i + 1 :]:
            if not (token.pos_ == "PRON" or token.tag_ == "PRP$"):
                continue
            for group in groups:
                table = (SINGULAR_PRONOUNS if several else PLURAL_PRONOUNS)[group]
                new = table.get(f"{token.lower_}/{token.tag_}", table.get(token.lower_))
                if new is None or not self.only_referent(counted, token, group):
                    continue
                changes.append(replace_tokens(doc, token.i, token.i + 1, match_case(new, token.text)))
                if token.dep_ in ("nsubj", "nsubjpass") and not coordinated(token):
                    for verb in verbs_agreeing_with(token):
                        inflected = inflected_verb(verb, several)
                        if inflected is not None and inflected != verb.text:
                            changes.append(replace_tokens(doc, verb.i, verb.i + 1, inflected))
                break
        return changes

    def only_referent(self, counted: Counted, pronoun, group: str) -> bool:
        """Whether no other noun before ``pronoun`` could be what it refers to: a noun of the same number
        (before the edit) and of a gender the pronoun can have."""
        inside = range(counted.start, counted.noun.i + 1)
        for token in pronoun.doc[: pronoun.i]:
            if token.i in inside or token.pos_ not in ("NOUN", "PROPN", "PRON") or token.lower_ in ("who", "that", "which"):
                continue
            if token.pos_ == "PRON" and token.tag_ != "PRP":
                continue
            was_plural = token.tag_ in ("NNS", "NNPS") or token.lower_ in ("they", "them", "we")
            if was_plural != counted.plural:
                continue
            if token.pos_ == "PRON" and token.lower_ in ("he", "him", "she", "her", "it", "they", "them"):
                continue  # the pronouns of the same referent, before this one
            if group == "thing":
                if not self.nouns.is_person(token):
                    return False
                continue
            other = self.nouns.gender(token) if token.pos_ == "NOUN" else "person"
            if other == "person" or other == group:
                return False
        return True


class CountingContrasts(EditContrasts):
    """Counting contrasts: ``CountingContrasts(CountingConfig()).contrasts(captions)``."""

    kind = "counting"

    def __init__(self, config: CountingConfig = CountingConfig()):
        super().__init__(config)

    def recipe(self, collection: Collection) -> Recipe:
        nouns = CountedNouns(self.config, self.facts)
        return Recipe(nouns, OtherCounts(nouns))

    def prepare(self, captions: Captions) -> tuple[list[CaptionItem], Collection]:
        """As every kind's, with another prior: each quantity's log draw weight is -log(1 + its expected
        uses as a substitute) (a caption taking a uniform target and a uniform quantity), its uses as an
        original left out. The shared prior ((uses as an original + 1) / (expected uses + 1)) would
        bring "a" back as often as it leaves, which the cap forbids, and draw "two" for most of the
        singulars, the commonest plural original; here the quantities come about evenly, as the cap
        wants them."""
        items, collection = super().prepare(captions)
        search = self.search(collection)
        expected: Counter = Counter()
        for item in items:
            targets = search.finder.find(item) if item.doc.text else []
            for candidates, _ in search.eligible([Request(item, target, targets, None) for target in targets]):
                distinct = {substitute_of(candidate) for candidate in candidates}
                expected.update({word: 1 / len(distinct) / len(targets) for word in distinct})
        collection.prior.clear()
        collection.prior.update({word: -math.log(1 + uses) for word, uses in expected.items()})
        return items, collection
