"""Event-order contrasts: two events whose order the caption states are told in the other order ("a man
opens the door and then walks in" → "a man walks in and then opens the door").

* targets: (a) two events joined by a sequence connective of the settings ("A and then B", "A, then
  B", "first A then B", "A and after that B"): two verb phrases of one subject, two clauses with their
  own subjects, or two noun phrases each with its participle ("two kids talking ... and then a woman
  talking ..."); (b) an event ordered against another by a connective with a counterpart ("A before
  B-ing" ↔ "A after B-ing", "A after the dog catches the ball"). Not a target: an elliptical second
  event ("drives onto a field and then back on to the street": it has no verb), a "then" inside a
  list of things ("her pot of meat then tomato sauce"), a second clause whose subject is a pronoun
  ("... and then they hug": told first, "they" would come before what it stands for), a moved event
  with a pronoun in it ("picks up a ball and then throws it"), and any caption with a word that would
  contradict the new order ("afterwards", "first" inside an event, a negation);
* source: (a) the two events trade places, each keeping its words: verb phrases of one subject swap
  their verbs' forms where they differ ("is speaking and then sings" → "is singing and then speaks",
  the shared auxiliary staying where it is); clauses trade whole, with the sentence's capital moving
  to the new first word; the connective and its commas stay; (b) the connective becomes its
  counterpart;
* constraints: none beyond the finder's guards; the language model judges the reordered caption.

What MSR-VTT 1k-A offers: 52 of its 1,000 captions have "then", "after", "before", "while" or
"first", 40 of them "while". Of the 10 with "then", 5 are targets; the others are a second event with
no verb ("... and then back on to the street"), a list of things ("meat then tomato sauce"), a
pronoun subject ("and then they hug each other"), a "then" inside a clause ("they both then run up
the hill") and a misparse ("attempt" read as a noun). The one "before" ends with "afterwards", the
one "after" is "looks after".

``simultaneous`` (off by default) would also order two events told as simultaneous ("a man drives
while talking" → "... after talking" / "before"). With ``while: [before, after]``, 18 of the 40
"while" captions pass its guards (no state: "singing while holding a coke"; no progressive clause:
"while people are fighting"; no negation), and 12 of the 17 contrasts the trigram judge kept read
like a real caption to a strict reader ("customers wait in line before employees tend to them"; not "a man is singing and dancing in
an elevator after people watch", "meeting on a bridge after it s raining"). But "while" would only
leave and "before" / "after" only come in, which the bag-of-words audit learns at once, and the 5 %
cap on a substitute lets about one of each into a set of this size: they would be targets that can
almost never get a record.

A swap brings no new word in; its ``substitute`` (what the draw spreads and the cap counts) is the
verb of the event the contrast now tells first, its ``original`` the verb of the one the caption told
first. A changed connective's are the connectives.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from tvrbench.generators.base import Candidate, CaptionItem, Request, Target, match_case, replace_tokens
from tvrbench.generators.config import EventOrderConfig
from tvrbench.generators.edits.recipe import Collection, EditContrasts, Recipe

VERB_TAGS = ("VB", "VBD", "VBG", "VBN", "VBP", "VBZ")
SUBJECTS = ("nsubj", "nsubjpass", "expl")
NOMINAL = ("NOUN", "PROPN", "NUM")
# Pronouns that stand for something said before them: an event that moves first must have none.
BACK_PRONOUNS = frozenset({"it", "them", "they", "him", "he", "she", "her", "this", "these", "those", "itself", "themselves", "himself", "herself"})


@dataclass(frozen=True)
class Swap:
    """Two events told in order: tokens ``[first_start, first_end)`` and ``[second_start, second_end)``
    with the connective between them; ``first_verb`` and ``second_verb`` their verbs (or participles);
    ``reinflect``: whether each verb takes the other's form (verb phrases sharing an auxiliary or forms)."""

    first_start: int
    first_end: int
    second_start: int
    second_end: int
    first_verb: int
    second_verb: int
    connective: str
    reinflect: bool
    whole: bool  # clauses (or noun phrases) that trade whole, the sentence's first word among them


@dataclass(frozen=True)
class Change:
    """A connective that becomes another: token ``index``, the new words in ``to``."""

    index: int
    connective: str
    to: tuple[str, ...]
    kind: str  # "order" or "simultaneous"


def is_verb(token) -> bool:
    return token.tag_ in VERB_TAGS and token.pos_ in ("VERB", "AUX")


def words_at(doc, start: int, words: Sequence[str]) -> bool:
    return tuple(t.lower_ for t in doc[start : start + len(words)]) == tuple(words)


class OrderedEvents:
    """Targets: the pairs of events a sequence connective orders, and the connectives with a counterpart."""

    def __init__(self, config: EventOrderConfig):
        self.sequence = sorted((tuple(p.lower().split()) for p in config.sequence), key=lambda w: -len(w))
        self.order = {k.lower(): [w.lower() for w in v] for k, v in config.order.items()}
        self.simultaneous = {k.lower(): [w.lower() for w in v] for k, v in config.simultaneous.items()}
        self.stative = frozenset(w.lower() for w in config.stative)
        self.contradicting = frozenset(w.lower() for w in config.contradicting)

    # ------------------------------------------------------------------ what a caption offers

    def analyse(self, doc) -> list[Swap | Change]:
        if any(t.dep_ == "neg" for t in doc):
            return []  # "a guy doesn t move": an order of something that does not happen
        found: list[Swap | Change] = []
        for i in range(len(doc)):
            words = next((w for w in self.sequence if words_at(doc, i, w)), None)
            if words is not None:
                swap = self.swap(doc, i, i + len(words))
                if swap is not None:
                    found.append(swap)
            change = self.change(doc[i])
            if change is not None:
                found.append(change)
        if len([f for f in found if isinstance(f, Swap)]) > 1:
            return [f for f in found if not isinstance(f, Swap)]  # several orders in one caption: which pair moves is unclear
        return found

    def swap(self, doc, start: int, end: int) -> Swap | None:
        """The two events around the connective at tokens ``[start, end)``, or None when they cannot
        trade places cleanly (see the module's docstring)."""
        lead = start
        while lead > 0 and (doc[lead - 1].lower_ in ("and", ",")):
            lead -= 1  # ", and then": the connective's words stay between the events
        if lead == 0 or end >= len(doc):
            return None
        second_end = len(doc)
        while second_end > end and doc[second_end - 1].is_punct:
            second_end -= 1
        second = doc[end:second_end]
        first_token = second[0]
        if is_verb(first_token) and not any(c.dep_ in SUBJECTS for c in first_token.children):
            return self.verb_phrases(doc, lead, start, end, second_end)
        return self.clauses(doc, lead, start, end, second_end)

    def verb_phrases(self, doc, lead: int, start: int, end: int, second_end: int) -> Swap | None:
        """Two verb phrases of one subject ("a man opens the door and then walks in"): the first is the
        second verb's head (or a verb it heads), from its verb (its own auxiliary when the second has
        one too) to the connective."""
        second = doc[end]
        first = second.head if second.head.i < lead and is_verb(second.head) else None
        if first is None:
            first = next((c for c in second.children if c.i < lead and is_verb(c) and c.dep_ in ("ccomp", "advcl", "conj", "dep")), None)
        if first is None:
            return None
        own = [c for c in second.children if c.dep_ in ("aux", "auxpass") and c.i >= end]
        first_aux = sorted(c.i for c in first.children if c.dep_ in ("aux", "auxpass") and c.i < first.i)
        first_start = first_aux[0] if own and first_aux else first.i
        second_end = self.second_end(doc, second, lead, second_end)
        reinflect = not own and first.tag_ != second.tag_
        return self.checked(doc, Swap(first_start, lead, end, second_end, first.i, second.i, self.connective(doc, start), reinflect, False))

    def clauses(self, doc, lead: int, start: int, end: int, second_end: int) -> Swap | None:
        """Two clauses with their own subjects ("a woman speaks and then a button appears"), or two noun
        phrases with their participles, trade whole; the first from its subject on."""
        verb = next((t for t in doc[end:second_end] if is_verb(t) and any(c.dep_ in SUBJECTS and c.left_edge.i == end for c in t.children)), None)
        if verb is not None:
            subject = next(c for c in verb.children if c.dep_ in SUBJECTS and c.left_edge.i == end)
            if subject.lower_ in BACK_PRONOUNS or subject.pos_ == "PRON":
                return None
            first = next((t for t in doc[:lead] if is_verb(t) and any(c.dep_ in SUBJECTS for c in t.children) and t.dep_ != "relcl"), None)
            if first is None:
                return None
            first_subject = next(c for c in first.children if c.dep_ in SUBJECTS)
            first_start = first_subject.left_edge.i
        else:  # "two kids talking to the camera and then a woman talking to the camera"
            noun = doc[end].head if doc[end].head.pos_ in NOMINAL else doc[end]
            participle = next((c for c in noun.children if c.dep_ == "acl" and c.tag_ == "VBG"), None)
            if noun.pos_ not in NOMINAL or min(t.i for t in noun.subtree if not lead <= t.i < end) != end or participle is None:
                return None
            first_noun = noun.head if noun.dep_ == "conj" and noun.head.i < lead else None
            first = next((c for c in first_noun.children if c.dep_ == "acl" and c.tag_ == "VBG"), None) if first_noun is not None else None
            if first is None:
                return None
            verb, first_start = participle, first_noun.left_edge.i
        return self.checked(doc, Swap(first_start, lead, end, second_end, first.i, verb.i, self.connective(doc, start), False, True))

    @staticmethod
    def second_end(doc, second, lead: int, limit: int) -> int:
        """Where the second verb phrase ends: its verb's subtree when that lies after the connective."""
        if second.left_edge.i >= lead and second.right_edge.i < limit:
            return second.right_edge.i + 1
        return limit

    def checked(self, doc, swap: Swap) -> Swap | None:
        first, second = doc[swap.first_start : swap.first_end], doc[swap.second_start : swap.second_end]
        if not len(first) or not len(second) or not any(is_verb(t) for t in first) or not any(is_verb(t) for t in second):
            return None
        if any(t.lower_ in self.contradicting for t in (*first, *second)):
            return None  # "opens the door first and then ...": the word would travel with its event
        if any(t.lower_ in BACK_PRONOUNS and t.pos_ == "PRON" and (t.tag_ != "PRP$" or swap.whole) for t in second):
            return None  # told first, the pronoun would come before what it stands for (a clause's "her" too: "a button to her webcasts")
        if any(t.lower_ in self.contradicting for t in doc[swap.second_end :]):
            return None
        return swap

    def connective(self, doc, start: int) -> str:
        return next(" ".join(w) for w in self.sequence if words_at(doc, start, w))

    def change(self, token) -> Change | None:
        """A connective of ``order`` (or ``simultaneous``) that joins an event (a gerund or a clause) to a
        verb: "cooks pasta *before* eating it", "runs *after* the dog catches the ball"."""
        word = token.lower_
        table = "order" if word in self.order else "simultaneous" if word in self.simultaneous else None
        if table is None or token.dep_ not in ("prep", "mark"):
            return None
        if token.dep_ == "prep":
            event = next((c for c in token.children if c.dep_ == "pcomp" and c.tag_ == "VBG"), None)
        else:
            event = token.head if token.head.dep_ == "advcl" and is_verb(token.head) else None
        if event is None or not is_verb(token.head if token.dep_ == "prep" else event.head):
            return None
        if any(t.lower_ in self.contradicting for t in token.doc if t.i != token.i):
            return None
        if table == "simultaneous":
            if event.lemma_.lower() in self.stative:
                return None  # "singing while holding a coke": a state has no order
            if any(c.dep_ == "aux" and c.lemma_ == "be" for c in event.children):
                return None  # "while people are fighting": "before people are fighting" reads wrong
        targets = self.order if table == "order" else self.simultaneous
        return Change(token.i, word, tuple(targets[word]), table)

    # ------------------------------------------------------------------ the parts

    def find(self, item: CaptionItem) -> list[Target]:
        targets = []
        for found in self.analyse(item.doc):
            if isinstance(found, Swap):
                targets.append(Target(found.first_start, found.second_end, item.doc[found.first_verb].lemma_.lower()))
            else:
                targets.append(Target(found.index, found.index + 1, found.connective))
        return targets

    def at(self, doc, target: Target) -> Swap | Change:
        for found in self.analyse(doc):
            start = found.first_start if isinstance(found, Swap) else found.index
            if start == target.start:
                return found
        raise KeyError(target)


def inflected(token, tag: str) -> str:
    """``token`` in the form ``tag`` (lemminflect), or as it is when it has none."""
    from lemminflect import getInflection

    if token.tag_ == tag:
        return token.text
    forms = getInflection(token.lemma_.lower(), tag=tag)
    return match_case(forms[0], token.text) if forms else token.text


def span_text(doc, start: int, end: int, replace: dict[int, str]) -> str:
    """The text of tokens ``[start, end)`` with some tokens' words replaced."""
    return "".join((replace.get(t.i, t.text)) + t.whitespace_ for t in doc[start:end]).rstrip()


class Reordered:
    """Candidates: the events traded (a swap), or each counterpart of the connective."""

    name = "event-order"

    def __init__(self, events: OrderedEvents):
        self.events = events

    def generate(self, requests: Sequence[Request]) -> list[list[Candidate]]:
        lists = []
        for request in requests:
            doc = request.item.doc
            found = self.events.at(doc, request.target)
            lists.append(self.swapped(request, doc, found) if isinstance(found, Swap) else self.counterparts(request, doc, found))
        return lists

    def swapped(self, request: Request, doc, swap: Swap) -> list[Candidate]:
        first_verb, second_verb = doc[swap.first_verb], doc[swap.second_verb]
        forms = {}
        if swap.reinflect:
            forms = {second_verb.i: inflected(second_verb, first_verb.tag_), first_verb.i: inflected(first_verb, second_verb.tag_)}
        new_first = span_text(doc, swap.second_start, swap.second_end, forms)
        new_second = span_text(doc, swap.first_start, swap.first_end, forms)
        if swap.whole and swap.first_start == 0:  # the sentence's capital goes with its place
            opening = doc[0]
            if opening.text[:1].isupper():
                new_first = new_first[:1].upper() + new_first[1:]
                if opening.pos_ != "PROPN" and opening.text != "I":
                    new_second = new_second[:1].lower() + new_second[1:]
        edit = (replace_tokens(doc, swap.first_start, swap.first_end, new_first), replace_tokens(doc, swap.second_start, swap.second_end, new_second))
        details = {
            "pattern": "sequence",
            "connective": swap.connective,
            "original": first_verb.lemma_.lower(),
            "substitute": second_verb.lemma_.lower(),
        }
        return [Candidate(request, edit, details)]

    def counterparts(self, request: Request, doc, change: Change) -> list[Candidate]:
        token = doc[change.index]
        candidates = []
        for word in change.to:
            edit = (replace_tokens(doc, token.i, token.i + 1, match_case(word, token.text)),)
            details = {"pattern": change.kind, "connective": change.connective, "original": change.connective, "substitute": word}
            candidates.append(Candidate(request, edit, details))
        return candidates


class EventOrderContrasts(EditContrasts):
    """Event-order contrasts: ``EventOrderContrasts(EventOrderConfig()).contrasts(captions)``."""

    kind = "event-order"

    def __init__(self, config: EventOrderConfig = EventOrderConfig()):
        super().__init__(config)

    def recipe(self, collection: Collection) -> Recipe:
        events = OrderedEvents(self.config)
        return Recipe(events, Reordered(events))
