"""The verb phrases a contrast replaces: a verb, or a verb followed by its particle or preposition
("picking up", "walking down"), matched on spaCy's tags (Park et al. App. A.3), and only verbs that
head a clause: not auxiliaries, modals, passives, names read as verbs or past participles describing
a noun. T5 fine-tuning masks the same phrases.
"""

from __future__ import annotations

from tvrbench.generators.base import CaptionItem, Target
from tvrbench.generators.verb.lexicon import AUXILIARIES

CLAUSE_HEADS = frozenset({"ROOT", "acl", "relcl", "conj", "advcl", "xcomp", "ccomp", "pcomp", "csubj"})
MODALS = frozenset({"will", "shall", "would", "can", "could", "may", "might", "must", "should"})  # "an interview about will smith"
# Participles that work as prepositions: "a girl *according* to her mom", "*including* the movie".
PREPOSITION_PARTICIPLES = frozenset({"according", "including", "regarding", "concerning", "considering", "excluding", "following", "given"})


def heads_a_clause(verb) -> bool:
    """A verb that makes its own clause: not an auxiliary, a modal read as a verb or a name ("will
    smith"), a passive, or a past participle describing a noun ("a forest *filled* with trees"); and a
    word the parser hung where a verb cannot be ("the movie *ali*", a preposition, an object)."""
    return (
        verb.dep_ in CLAUSE_HEADS
        and verb.lemma_.lower() not in AUXILIARIES | MODALS
        and verb.tag_.startswith("VB")
        and verb.is_alpha
        and len(verb) > 1  # "people *s* involved"
        and verb.lower_ not in PREPOSITION_PARTICIPLES
        and not (verb.tag_ == "VBN" and verb.dep_ in ("acl", "amod"))
        and not any(child.dep_ in ("auxpass", "nsubjpass") for child in verb.children)
    )


# Targets follow Park et al. App. A.3: a verb, or a verb followed by its particle or preposition.
VERB_PATTERNS = [[{"POS": "VERB"}, {"TAG": {"IN": ["RP", "IN"]}, "OP": "?"}]]


class VerbPhrases:
    """Targets: spaCy matches of verb, or verb + particle / preposition (longest match wins), whose
    verb heads a clause (when the doc is parsed)."""

    def __init__(self, nlp):
        from spacy.matcher import Matcher

        self.matcher = Matcher(nlp.vocab)
        self.matcher.add("VERB_PHRASE", VERB_PATTERNS, greedy="LONGEST")

    def find(self, item: CaptionItem) -> list[Target]:
        return self.in_doc(item.doc)

    def in_doc(self, doc) -> list[Target]:
        spans = sorted(self.matcher(doc, as_spans=True), key=lambda span: span.start)
        parsed = doc.has_annotation("DEP")
        return [Target(span.start, span.end, "verb") for span in spans if not parsed or heads_a_clause(span[0])]
