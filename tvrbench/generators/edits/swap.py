"""Swap contrasts: two nouns of the caption trade places ("a dog chases a cat" → "a cat chases a dog"),
or two adjectives of one property on two nouns ("a man in a black hat and a white shirt" → "... a
white hat and a black shirt"). The words stay; who does what to whom, or which has which colour,
changes (SugarCrepe's swap).

* targets, nouns: two nouns in different roles of one verb (its subject, also of the verbs it shares
  the subject with and of a participle on the noun, "a man *talking* to a woman"; its object; the
  object of a preposition on it, "by" of a passive among them). Each moves with what describes it
  (adjectives and compounds before it, its own "with" / "in" phrase, participle or relative clause
  after it: "a man *with a mustache*") but without its determiner ("a *big dog* chases the *small
  cat*" → "a *small cat* chases the *big dog*"). The two are of one group of the settings (persons
  with persons, animals with animals, vehicles, foods), or a person and an animal with a verb either
  can do to the other ("chase", "kick"; "a parrot holds a woman" is no caption); of the same number
  (the verb keeps its agreement); different words. Never joined by "and", by a symmetric preposition
  or verb ("a man dances *with* a woman", "... *hugs* a woman": the meaning would not change; "talks
  to" is kept: who speaks changes), with a one-way verb ("a woman *has* a baby"), nor a swap that
  makes a subject of a baby ("a baby is holding a man"), nor two persons before a gendered pronoun
  ("a man points *his* gun at a woman": whose gun would it be?). Never a possessed noun ("his dog"),
  a compound's part, nor a noun that may well be a thing ("stroller", "baby monitor").
* targets, adjectives: two adjectives of one property of the attribute kind's settings on two
  different nouns (each property says which nouns it describes; both must be its), not two words
  of one value ("big", "large");
* source: the one swap, the articles made to agree ("an old man and a young woman" → "a young man and
  an old woman");
* constraints: none but the targets' rules; then the judge and the cap.

A swap's ``substitute`` and ``original`` (what the draw's prior and the cap count) are the two words
joined, sorted: ``dog<cat`` is ``cat<dog`` whichever way round. A swap brings in no word, so no word
gives it away (a bag-of-words reader is at chance); the cap (20 % here) only keeps one pair from
filling the set. The language model's loss is mostly the price of a rarer subject first ("an athlete
is talking to a man" -6.9 nats on Gemma 3 270M), which it also pays on "a baby is holding a man"
(+4.6): the rules above, not the judge, keep the odd swaps out, and the judge's bar is 7 nats.

Measured on MSR-VTT's 1,000 test captions: about 2 % of them have such a pair (most nouns of a caption
are a person and a thing, which never trade); SugarCrepe's swaps come from COCO's longer captions.
The groups, the symmetric and one-way words and the properties are settings (``configs/contrast/swap.yaml``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from tvrbench.generators.base import Candidate, CaptionItem, Request, Target, replace_tokens
from tvrbench.generators.config import AttributeConfig, SwapConfig
from tvrbench.generators.edits.attribute import Adjectives
from tvrbench.generators.edits.grammar import with_articles
from tvrbench.generators.edits.lexicon import WordNetFacts
from tvrbench.generators.edits.recipe import Collection, EditContrasts, Recipe

SUBJECT, OBJECT = "subject", "object"
POST_MODIFIERS = ("prep", "acl", "relcl", "amod")  # what travels with a noun after it
NOUN_PREPOSITIONS = ("with", "in", "without")  # ... of these prepositions: "a man with a mustache", "a woman in a hood"
GENDERED = frozenset({"he", "him", "his", "himself", "she", "her", "hers", "herself"})
PRE_MODIFIERS = ("amod", "compound", "nmod", "advmod", "npadvmod", "hmod", "hyph")  # what travels with a noun
VERBS = ("VERB", "AUX")


@dataclass(frozen=True)
class Swap:
    """Two spans of tokens that trade places (``first`` before ``second``), what they are, and the words
    that name the swap (``words``: the two nouns or adjectives)."""

    first: tuple[int, int]
    second: tuple[int, int]
    what: str  # "nouns" or "adjectives"
    words: tuple[str, str]
    roles: tuple[str, str]

    @property
    def name(self) -> str:
        return "<".join(sorted(self.words))


def roles(noun) -> list[tuple[str, object]]:
    """The roles ``noun`` has, each with its verb: (``subject`` | ``object`` | ``PREP`` (the object of a
    preposition on the verb), verb). A subject is also the subject of the verbs its verb shares it
    with ("a man walks in and *hugs* ...", "... tries to *catch* ...") and of a participle on it ("a
    man *talking* to ...")."""
    found = []
    if noun.dep_ in ("nsubj", "nsubjpass"):
        found += [(SUBJECT, verb) for verb in sharing_subject(noun.head)]
    elif noun.dep_ == "dobj" and verbal(noun.head):
        found.append((OBJECT, noun.head))
    elif noun.dep_ == "pobj" and noun.head.dep_ in ("prep", "agent", "dative") and verbal(noun.head.head):
        preposition = noun.head
        found.append(("by" if preposition.dep_ == "agent" else preposition.lower_, preposition.head))
    for child in noun.children:
        if child.dep_ == "acl" and child.pos_ == "VERB" and child.tag_ in ("VBG", "VBN") and child.i > noun.i:
            found += [(SUBJECT, verb) for verb in sharing_subject(child)]
    return found


def verbal(token) -> bool:
    """A verb, or what the small parser tags a noun but reads as a sentence's verb ("a dog *chases*/NNS a cat")."""
    return token.pos_ in VERBS or (token.dep_ == "ROOT" and any(child.dep_ == "nsubj" for child in token.children))


def sharing_subject(verb) -> list:
    """``verb`` and the verbs that take its subject: coordinated ones and complements without a subject of their own."""
    verbs, todo = [], [verb]
    while todo:
        current = todo.pop()
        verbs.append(current)
        todo += [
            child
            for child in current.children
            if child.dep_ in ("conj", "xcomp") and child.pos_ in VERBS and not any(g.dep_ in ("nsubj", "nsubjpass") for g in child.children)
        ]
    return verbs


def noun_span(noun) -> tuple[int, int]:
    """The noun with what describes it, without its determiner: the adjectives and compounds before it,
    and the phrases after it that are its own ("a man *with a mustache*", "a girl *named lilly*", "a
    woman *who is blind*"), up to a participle that gives it its role ("a woman *talking* to a man");
    a noun that leaves its phrase behind would take another's ("a girl with a mustache")."""
    start = noun.i
    for child in sorted((c for c in noun.children if c.i < noun.i), key=lambda c: c.i):
        if child.dep_ in PRE_MODIFIERS:
            start = min(start, child.left_edge.i)
            break
    while start < noun.i and noun.doc[start].dep_ in ("det", "poss", "nummod", "predet", "case"):
        start += 1
    end = noun.i + 1
    for child in sorted((c for c in noun.children if c.i > noun.i), key=lambda c: c.i):
        if child.left_edge.i != end or child.dep_ not in POST_MODIFIERS or (child.dep_ == "acl" and child.tag_ == "VBG"):
            break
        if child.dep_ == "prep" and child.lower_ not in NOUN_PREPOSITIONS:
            break  # "a man *about* merchant markets", "a celebrity *on* the computer": the verb's, read as the noun's
        end = child.right_edge.i + 1
    return start, end


def new_agent(shared, first, second):
    """The noun the swap makes the one who acts (the subject, or the "by" of a passive), or None."""
    first_role, second_role, _ = shared
    agents = (SUBJECT, "by")
    return second if first_role in agents else first if second_role in agents else None


class SwapTargets:
    """Targets: the pairs of nouns and of adjectives that may trade places (the module's docstring)."""

    def __init__(self, config: SwapConfig, facts: WordNetFacts):
        self.config = config
        self.facts = facts
        self.symmetric_prepositions = [tuple(p.lower().split()) for p in config.symmetric_prepositions]
        self.symmetric_verbs = {v.lower() for v in config.symmetric_verbs}
        self.one_way_verbs = {v.lower() for v in config.one_way_verbs}
        self.animate_verbs = {v.lower() for v in config.animate_verbs}
        self.never_subject = {n.lower() for n in config.never_subject}
        for index, group in enumerate(config.groups):
            facts.check_synsets(group, f"groups.{index + 1}")
        properties = AttributeConfig().properties
        self.adjectives = Adjectives({name: properties[name] for name in config.properties}, facts) if config.properties else None

    def group(self, noun) -> int | None:
        """The first group that names ``noun`` by its first WordNet sense, or None; None too when that
        sense is rare and a thing comes next ("stroller", "monitor": persons first, prams and screens in
        videos) or when the word before it makes another noun with it ("baby monitor", "hot dog")."""
        lemma = noun.lemma_.lower()
        if not self.facts.nouns(lemma) or self.facts.rare_first_sense(lemma):
            return None
        if noun.i > 0 and noun.nbor(-1).is_alpha and self.facts.joined_apart(noun.nbor(-1).lower_, lemma):
            return None
        found = self.facts.noun_class(lemma)
        return next((index for index, names in enumerate(self.config.groups) if self.facts.named(lemma, found, names, senses=1)), None)

    def animate(self, noun) -> str | None:
        """``person`` or ``animal`` (its first sense), else None."""
        above = self.facts.above(noun.lemma_.lower(), 1)
        return "person" if "person.n.01" in above or noun.lemma_.lower() == "people" else "animal" if "animal.n.01" in above else None

    def may_trade(self, first, second, verb) -> bool:
        """Whether the two nouns may trade roles of ``verb``: of one group, or a person and an animal
        with one of the settings' ``animate_verbs``; never with a one-way verb."""
        lemma = verb.lemma_.lower()
        if lemma in self.one_way_verbs:
            return False
        group = self.group(first)
        if group is not None and group == self.group(second):
            return True
        kinds = {self.animate(first), self.animate(second)}
        return kinds == {"person", "animal"} and lemma in self.animate_verbs and self.group(second) is not None and group is not None

    def swappable_noun(self, noun) -> bool:
        if noun.pos_ != "NOUN" or noun.tag_ not in ("NN", "NNS") or not noun.is_alpha:
            return False
        if any(child.dep_ in ("poss", "case") or child.tag_ == "PRP$" for child in noun.children):
            return False  # "his dog", "a man's hand": a possessor or a possessed noun
        if noun.dep_ in ("compound", "poss", "appos") or self.coordinated(noun):
            return False
        if noun.tag_ == "NNS" and any(child.lower_ in ("a", "an") for child in noun.children):
            return False  # "a girls": the caption's number is astray, the swap would carry it on
        return self.group(noun) is not None

    @staticmethod
    def coordinated(noun) -> bool:
        return noun.dep_ == "conj" or any(child.dep_ in ("conj", "cc") for child in noun.children)

    def symmetric(self, role: str, verb, noun) -> bool:
        """Whether the role says the same whichever noun has it: a symmetric preposition ("with", "next
        to": its first word and the words after it) or a symmetric verb."""
        if verb.lemma_.lower() in self.symmetric_verbs:
            return True
        if role in (SUBJECT, OBJECT, "by"):
            return False
        preposition = noun.head
        words = tuple(t.lower_ for t in preposition.doc[max(0, preposition.i - 1) : preposition.i + 2])
        for phrase in self.symmetric_prepositions:
            for start in range(len(words) - len(phrase) + 1):
                if words[start : start + len(phrase)] == phrase and preposition.lower_ in phrase:
                    return True
        return False

    def noun_swaps(self, doc) -> list[Swap]:
        nouns = [(token, roles(token)) for token in doc if self.swappable_noun(token)]
        swaps = []
        for a in range(len(nouns)):
            for b in range(a + 1, len(nouns)):
                (first, first_roles), (second, second_roles) = nouns[a], nouns[b]
                if first.lemma_.lower() == second.lemma_.lower() or first.tag_ != second.tag_:
                    continue
                shared = [
                    (r1, r2, v1)
                    for r1, v1 in first_roles
                    for r2, v2 in second_roles
                    if v1.i == v2.i
                    and r1 != r2
                    and not self.symmetric(r1, v1, first)
                    and not self.symmetric(r2, v2, second)
                    and self.may_trade(first, second, v1)
                ]
                if not shared:
                    continue
                agent = new_agent(shared[0], first, second)
                if agent is not None and agent.lemma_.lower() in self.never_subject:
                    continue  # "a man holds a baby" -> "a baby holds a man"
                if any(t.lower_ in GENDERED for t in doc[first.i + 1 :]) and self.animate(first) == self.animate(second) == "person":
                    continue  # "a man points his gun at a woman" -> "a woman points his gun ...": whose gun is it now?
                span1, span2 = noun_span(first), noun_span(second)
                if span1[1] > span2[0]:
                    continue
                r1, r2, _ = shared[0]
                swaps.append(Swap(span1, span2, "nouns", (first.lemma_.lower(), second.lemma_.lower()), (r1, r2)))
        return swaps

    def adjective_swaps(self, doc) -> list[Swap]:
        if self.adjectives is None:
            return []
        from tvrbench.generators.edits.attribute import described_noun

        found = []
        for token in doc:
            properties = self.adjectives.applicable(token)
            if properties:
                found.append((token, set(properties), described_noun(token)))
        swaps = []
        for a in range(len(found)):
            for b in range(a + 1, len(found)):
                (first, p1, n1), (second, p2, n2) = found[a], found[b]
                shared = sorted(p1 & p2)
                if not shared or n1.i == n2.i or first.lower_ == second.lower_:
                    continue
                values = self.adjectives.properties[shared[0]].values
                if any(first.lower_ in map(str.lower, value) and second.lower_ in map(str.lower, value) for value in values):
                    continue  # two words of one value ("big", "large"): the swap says the same
                words, kinds = (first.lower_, second.lower_), (shared[0], shared[0])
                swaps.append(Swap((first.i, first.i + 1), (second.i, second.i + 1), "adjectives", words, kinds))
        return swaps

    def swaps(self, doc) -> list[Swap]:
        return self.noun_swaps(doc) + self.adjective_swaps(doc)

    def find(self, item: CaptionItem) -> list[Target]:
        return [Target(swap.first[0], swap.second[1], swap.name) for swap in self.swaps(item.doc)]


class Swapped:
    """Candidates: the target's one swap, the articles made to agree."""

    name = "swap"

    def __init__(self, targets: SwapTargets):
        self.targets = targets

    def generate(self, requests: Sequence[Request]) -> list[list[Candidate]]:
        lists = []
        for request in requests:
            doc, target = request.item.doc, request.target
            swaps = [s for s in self.targets.swaps(doc) if (s.first[0], s.second[1], s.name) == (target.start, target.end, target.label)]
            candidates = []
            for swap in swaps[:1]:
                (a0, a1), (b0, b1) = swap.first, swap.second
                first, second = doc[a0:a1].text, doc[b0:b1].text
                if a0 == 0 and first[:1].isupper() and not first.isupper():  # "Dogs chase cats" -> "Cats chase dogs"
                    first, second = first[:1].lower() + first[1:], second[:1].upper() + second[1:]
                edit = with_articles(doc, (replace_tokens(doc, a0, a1, second), replace_tokens(doc, b0, b1, first)))
                details = {"original": swap.name, "substitute": swap.name, "swapped": swap.what, "words": list(swap.words), "roles": list(swap.roles)}
                candidates.append(Candidate(request, edit, details))
            lists.append(candidates)
        return lists


class SwapContrasts(EditContrasts):
    """Swap contrasts: ``SwapContrasts(SwapConfig()).contrasts(captions)``."""

    kind = "swap"

    def __init__(self, config: SwapConfig = SwapConfig()):
        super().__init__(config)

    def recipe(self, collection: Collection) -> Recipe:
        targets = SwapTargets(self.config, self.facts)
        return Recipe(targets, Swapped(targets))
