"""WordNet's verb facts the verb generator needs, read once from NLTK and cached on disk.

Opening NLTK's WordNet reader takes longer than generating contrasts for 200 captions. The
generator only needs, per verb lemma, its synonyms, antonyms, the lemmas of its sister senses and
the lexicographer files of its senses, and per file its most common verbs; those are the same on
every run, so they are computed once (a few seconds) and kept as JSON in tvrbench's cache, keyed
by the WordNet files and the settings that shape them.
"""

from __future__ import annotations

import functools
import json
from collections import defaultdict
from dataclasses import dataclass

from tvrbench.io.disk_cache import kept_json
from tvrbench.resources import wordnet, wordnet_fingerprint
from tvrbench.signature import text_digest

VERSION = "verb-lexicon-v4"  # bump when what is stored changes
AUXILIARIES = frozenset({"be", "have", "do"})  # never proposed: they make no new action
FIELDS = frozenset({"synonyms", "antonyms", "sisters", "files", "frames", "domain", "attested"})


@dataclass(frozen=True)
class LexiconSettings:
    senses: int  # the verb's most frequent senses whose sisters and files are used
    domain_verbs: int  # common verbs kept per lexicographer file
    min_semcor_count: int  # sister lemmas rarer than this in SemCor are dropped

    @classmethod
    def of(cls, pool) -> "LexiconSettings":
        """From a :class:`~tvrbench.generators.config.WordNetGeneratorConfig`."""
        return cls(pool.senses, pool.domain_verbs, pool.min_semcor_count)


class VerbLexicon:
    """Lower-case verb lemmas (multi-word ones with ``_``) and their relations."""

    def __init__(self, data: dict):
        self.data = data

    def synonyms(self, lemma: str) -> frozenset[str]:
        """Every lemma sharing any verb sense with ``lemma``, and ``lemma`` itself."""
        return frozenset([lemma, *self.data["synonyms"].get(lemma, ())])

    def antonyms(self, lemma: str) -> frozenset[str]:
        return frozenset(self.data["antonyms"].get(lemma, ()))

    def sisters(self, lemma: str) -> tuple[str, ...]:
        """Lemmas of other hyponyms of the hypernyms of the verb's first senses."""
        return tuple(self.data["sisters"].get(lemma, ()))

    def domain_verbs(self, lemma: str) -> tuple[str, ...]:
        """The most common verbs of the lexicographer files (verb.motion, ...) of the verb's first senses."""
        files = dict.fromkeys(self.data["files"].get(lemma, ()))
        return tuple(dict.fromkeys(name for file in files for name in self.data["domain"][file]))

    def files(self, lemma: str, senses: int) -> frozenset[str]:
        """The lexicographer files of the verb's first ``senses`` senses (at most the lexicon's own number)."""
        return frozenset(self.data["files"].get(lemma, ())[:senses])

    def frames(self, lemma: str, senses: int) -> frozenset[int]:
        """WordNet's sentence frames (``Lemma.frame_ids``: 8 is "Somebody ----s something") of the verb's
        first ``senses`` senses (at most the lexicon's own number)."""
        return frozenset(i for ids in self.data["frames"].get(lemma, ())[:senses] for i in ids)

    def known(self, lemma: str) -> bool:
        return lemma in self.data["files"]

    def one_word_verbs(self) -> tuple[str, ...]:
        """Every one-word verb lemma seen as a verb in SemCor (count > 0)."""
        return tuple(self.data["attested"])


def build(settings: LexiconSettings, wn) -> dict:
    """Walk WordNet's verbs once (about a second after the reader is open)."""
    synonyms, antonyms = defaultdict(set), defaultdict(set)
    file_counts: dict[str, dict[str, int]] = defaultdict(dict)
    counts: dict[str, int] = defaultdict(int)
    sense_counts: dict[str, list[tuple[str, int]]] = {}  # synset -> its lemmas and their SemCor counts
    for synset in wn.all_synsets("v"):
        names = [lemma.name().lower() for lemma in synset.lemmas()]
        sense_counts[synset.name()] = [(name, lemma.count()) for lemma, name in zip(synset.lemmas(), names)]
        for lemma, (name, count) in zip(synset.lemmas(), sense_counts[synset.name()]):
            synonyms[name].update(names)
            antonyms[name].update(other.name().lower() for other in lemma.antonyms())
            counts[name] += count
            if "_" not in name and name not in AUXILIARIES:
                in_file = file_counts[synset.lexname()]
                in_file[name] = in_file.get(name, 0) + count
    sisters, files, frames = {}, {}, {}
    for name in synonyms:
        senses = wn.synsets(name, pos="v")[: settings.senses]
        files[name] = [synset.lexname() for synset in senses]
        frames[name] = [sorted({i for lemma in synset.lemmas() if lemma.name().lower() == name for i in lemma.frame_ids()}) for synset in senses]
        found = {
            candidate
            for synset in senses
            for hypernym in synset.hypernyms()
            for sister in hypernym.hyponyms()
            if sister not in senses
            for candidate, count in sense_counts[sister.name()]
            if count >= settings.min_semcor_count
        }
        sisters[name] = sorted(found)
    domain = {
        file: [name for name, _ in sorted(in_file.items(), key=lambda item: (-item[1], item[0]))[: settings.domain_verbs]]
        for file, in_file in file_counts.items()
    }
    return {
        "synonyms": {name: sorted(found - {name}) for name, found in synonyms.items()},
        "antonyms": {name: sorted(found) for name, found in antonyms.items() if found},
        "sisters": sisters,
        "files": files,
        "frames": frames,
        "domain": domain,
        "attested": sorted(name for name, count in counts.items() if count > 0 and "_" not in name and name not in AUXILIARIES),
    }


@functools.lru_cache(maxsize=4)
def verb_lexicon(settings: LexiconSettings) -> VerbLexicon:
    """From the cache, or built from WordNet and cached."""
    key = text_digest([VERSION, wordnet_fingerprint(), json.dumps(settings.__dict__, sort_keys=True)])
    return VerbLexicon(kept_json("verb-lexicon", key, lambda: build(settings, wordnet()), FIELDS))
