"""Agreement after an edit: what else must change so that the contrast reads as English.

* the article before a changed word: "a *red* apple" → "an *orange* apple" (:func:`with_articles`);
* a noun's number and what agrees with it when a count changes: "a man *is* playing *his* guitar" →
  "two men *are* playing *their* guitar" (:func:`plural`, :func:`singular`, :func:`agreement`).

Nouns are inflected by ``inflect`` (plural: "person" → "people", "fish" → "fish") and checked by the
round trip, with lemminflect where ``inflect``'s singular does not come back ("cactuses"); verbs by
lemminflect, as the verb kind inflects its verbs.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable, Sequence

from tvrbench.generators.base import match_case, replace_tokens
from tvrbench.generators.records import Replacement

ARTICLES = frozenset({"a", "an"})
_WORD = re.compile(r"[A-Za-z0-9']+")
# The finite forms of the verbs that agree irregularly, singular ↔ plural (present and past).
IRREGULAR = {"is": "are", "was": "were", "has": "have", "does": "do", "'s": "'re"}
PLURAL_OF_IRREGULAR = {**IRREGULAR, "am": "are"}
SINGULAR_OF_IRREGULAR = {plural: singular for singular, plural in IRREGULAR.items()}
# Pronouns of a person or a thing, and what they become for several (or one: "they" of a person is
# "they" again, singular they, unless the noun says the gender).
PLURAL_PRONOUNS = {
    "he": "they", "she": "they", "it": "they", "him": "them", "her/PRP": "them", "his": "their", "her/PRP$": "their",
    "its": "their", "himself": "themselves", "herself": "themselves", "itself": "themselves",
}  # fmt: skip
SINGULAR_PRONOUNS = {
    "male": {"they": "he", "them": "him", "their": "his", "theirs": "his", "themselves": "himself"},
    "female": {"they": "she", "them": "her", "their": "her", "theirs": "hers", "themselves": "herself"},
    "thing": {"they": "it", "them": "it", "their": "its", "themselves": "itself"},
}


@functools.cache
def _inflect():
    import inflect

    return inflect.engine()


def article_for(word: str) -> str:
    """``a`` or ``an`` before ``word`` as it is said ("an hour", "a university", "an 8")."""
    return _inflect().a(word).split(" ", 1)[0].lower()


@functools.lru_cache(maxsize=20000)
def plural(noun: str) -> str:
    """The plural of a singular noun, capitalised as given ("Man" → "Men")."""
    return match_case(_inflect().plural_noun(noun.lower()) or noun.lower(), noun)


@functools.lru_cache(maxsize=20000)
def singular(noun: str) -> str:
    """The singular of a plural noun: ``inflect``'s when it comes back to the noun, else lemminflect's lemma."""
    word = noun.lower()
    found = _inflect().singular_noun(word)
    if not found or _inflect().plural_noun(found) != word:
        from lemminflect import getLemma

        found = (getLemma(word, upos="NOUN") or (word,))[0]
    return match_case(found, noun)


def inflected_verb(token, plural_subject: bool) -> str | None:
    """``token`` (a finite verb or auxiliary) agreeing with a singular or plural subject, or None when
    it does not change (a past tense of a lexical verb, a modal, a form that agrees already)."""
    word = token.lower_
    if plural_subject:
        if word in PLURAL_OF_IRREGULAR:
            return match_case(PLURAL_OF_IRREGULAR[word], token.text)
        if token.tag_ == "VBZ":
            from lemminflect import getInflection

            return match_case((getInflection(token.lemma_.lower(), tag="VBP") or (token.lemma_,))[0], token.text)
        return None
    if word in SINGULAR_OF_IRREGULAR:
        return match_case(SINGULAR_OF_IRREGULAR[word], token.text)
    if token.tag_ == "VBP":
        from lemminflect import getInflection

        return match_case((getInflection(token.lemma_.lower(), tag="VBZ") or (token.lemma_,))[0], token.text)
    return None


def verbs_agreeing_with(noun) -> list:
    """The finite verbs and auxiliaries whose subject is ``noun`` (a spaCy token): the verb it is the
    subject of, that verb's auxiliaries and the verbs coordinated with it that have no subject of their
    own ("a dog *runs* and *jumps*"), and those of a relative clause on it ("a man who *is* singing")."""
    heads = []
    if noun.dep_ in ("nsubj", "nsubjpass"):
        heads.append(noun.head)
    for child in noun.children:  # "a man who is singing"
        if child.dep_ == "relcl" and any(grand.dep_ in ("nsubj", "nsubjpass") and grand.tag_ in ("WDT", "WP") for grand in child.children):
            heads.append(child)
    found = []
    while heads:
        verb = heads.pop(0)
        auxiliaries = [child for child in verb.children if child.dep_ in ("aux", "auxpass") and child.i < verb.i]
        finite = auxiliaries[:1] if auxiliaries else [verb]
        found += finite
        heads += [child for child in verb.children if child.dep_ == "conj" and child.pos_ in ("VERB", "AUX")
                  and not any(grand.dep_ in ("nsubj", "nsubjpass") for grand in child.children)]  # fmt: skip
    return sorted(found, key=lambda token: token.i)


def agreement(noun, plural_subject: bool, pronouns: dict[str, str] | None) -> list[Replacement]:
    """The replacements that make the caption agree with ``noun`` turned plural (or singular): its verbs
    and, with a ``pronouns`` table (``PLURAL_PRONOUNS`` or one of ``SINGULAR_PRONOUNS``; the caller
    gives one when ``noun`` is the only possible referent), the pronouns after it."""
    doc = noun.doc
    changes = []
    for verb in verbs_agreeing_with(noun):
        new = inflected_verb(verb, plural_subject)
        if new is not None and new != verb.text:
            changes.append(replace_tokens(doc, verb.i, verb.i + 1, new))
    for token in doc[noun.i + 1 :] if pronouns else ():
        new = pronouns.get(f"{token.lower_}/{token.tag_}", pronouns.get(token.lower_))
        if new is not None and (token.pos_ == "PRON" or token.tag_ == "PRP$"):
            changes.append(replace_tokens(doc, token.i, token.i + 1, match_case(new, token.text)))
    return changes


def next_word(text: str, position: int) -> str | None:
    """The first word of ``text`` at or after ``position``."""
    found = _WORD.search(text, position)
    return found.group(0) if found else None


def with_articles(doc, replacements: Sequence[Replacement]) -> tuple[Replacement, ...]:
    """``replacements`` and the articles they make wrong: every "a" / "an" of ``doc`` left as it is whose
    next word in the contrast is a new one that wants the other article ("a apple", "an red apple")."""
    replaced = {i for r in replacements for i in range(r.token_start, r.token_end)}
    fixes = []
    for token in doc:
        if token.lower_ not in ARTICLES or token.i in replaced:
            continue
        end = token.idx + len(token.text)
        word = next_word(_contrast_after(doc.text, replacements, end), 0)
        if word is not None and word != next_word(doc.text, end) and article_for(word) != token.lower_:
            fixes.append(replace_tokens(doc, token.i, token.i + 1, match_case(article_for(word), token.text)))
    return (*replacements, *fixes)


def _contrast_after(text: str, replacements: Iterable[Replacement], position: int) -> str:
    """The contrast's text from ``position`` of the original on (replacements at or after it applied)."""
    pieces, cursor = [], position
    for r in sorted(replacements, key=lambda r: r.char_start):
        if r.char_start < position:
            continue
        pieces += [text[cursor : r.char_start], r.replacement]
        cursor = r.char_end
    return "".join(pieces) + text[cursor:]
