"""Person-ID contrasts for LSMDC-IDs (Park et al. App. A.2, SPEC §5).

The first character name of a caption becomes another character of the same movie and gender
(uniform, seeded); each later name is kept or swapped with equal chance, the same way. Names already
in the caption are never swapped in, so "Jenko and Schmidt" cannot become "Schmidt and Schmidt". If
the first name has no possible replacement, the next name is tried as the first.

Inputs: captions with the names in their text, and a characters file (CSV ``movie,name,gender``).
With the LSMDC captions format (``names`` column) only the listed names are targets; otherwise any
character name of the movie found in the text (whole words, multi-word names whole). A caption's
movie is its ``movie`` column, or else its LSMDC clip id without the trailing time span
(``3001_21_JUMP_STREET_00.00.51.034-00.00.53.462`` → ``3001_21_JUMP_STREET``).
"""

from __future__ import annotations

import csv
import functools
import io
import re
from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from tvrbench.errors import InputError
from tvrbench.generators.base import Candidate, CaptionItem, ContrastSearch, Request, Target, replace_tokens
from tvrbench.generators.config import PersonIdConfig
from tvrbench.generators.core import ContrastGenerator
from tvrbench.io.captions import Captions
from tvrbench.io.files import read_text_file
from tvrbench.resources import spacy_pipeline
from tvrbench.signature import input_digest

CHARACTER_COLUMNS = ("movie", "name", "gender")
_CLIP_TIME = re.compile(r"_\d{2}\.\d{2}\.\d{2}\.\d{3}-\d{2}\.\d{2}\.\d{2}\.\d{3}$")


@dataclass(frozen=True)
class Characters:
    """Per movie: each character's gender."""

    gender: dict[str, dict[str, str]]  # movie -> name -> gender

    def others(self, movie: str, name: str, exclude: set[str]) -> list[str]:
        """Characters of ``movie`` with ``name``'s gender, other than ``exclude``, in file order."""
        cast = self.gender.get(movie, {})
        return [other for other, g in cast.items() if g == cast.get(name) and other not in exclude and other != name]


def read_characters(path: str | Path) -> Characters:
    path = Path(path)
    with io.StringIO(read_text_file(path), newline="") as handle:
        reader = csv.DictReader(handle)
        if not set(CHARACTER_COLUMNS) <= set(reader.fieldnames or ()):
            raise InputError(path, f"needs the columns {', '.join(CHARACTER_COLUMNS)}")
        gender: dict[str, dict[str, str]] = defaultdict(dict)
        for number, row in enumerate(reader, start=2):
            movie, name, sex = (str(row.get(c) or "").strip() for c in CHARACTER_COLUMNS)
            if not (movie and name and sex):
                raise InputError(path, f"line {number}: empty movie, name or gender")
            gender[movie][name] = sex
    if not gender:
        raise InputError(path, "no characters")
    return Characters(dict(gender))


def caption_movies(captions: Captions, column: str) -> list[str]:
    """Each caption's movie: its ``column`` value, else its clip id without the time span."""
    if column in captions.extra:
        return captions.extra[column]
    return [_CLIP_TIME.sub("", video_id) for video_id in captions.video_ids]


class CharacterNames:
    """Targets: occurrences of the caption's movie's character names (multi-word names match whole);
    only the caption's listed names when it has a list."""

    def __init__(self, characters: Characters):
        self.characters = characters

    def find(self, item: CaptionItem) -> list[Target]:
        cast = self.characters.gender.get(item.movie, {})
        wanted = item.names if item.names is not None else list(cast)
        names = sorted((n for n in wanted if n in cast), key=lambda n: -len(n.split()))
        words = [t.text for t in item.doc]
        targets, taken = [], set()
        for name in names:
            parts = name.split()
            for start in range(len(words) - len(parts) + 1):
                span = range(start, start + len(parts))
                if words[start : start + len(parts)] == parts and not taken.intersection(span):
                    taken.update(span)
                    targets.append(Target(start, start + len(parts), name))
        return sorted(targets, key=lambda t: t.start)


class NameSwap:
    """Candidates: each possible new first name; later names kept or swapped by the caption's stream."""

    name = "same-movie-same-gender"

    def __init__(self, characters: Characters, swap_later: float, counts: Counter | None):
        self.characters = characters
        self.swap_later = swap_later
        self.counts = counts

    def generate(self, requests: Sequence[Request]) -> list[list[Candidate]]:
        lists = []
        for request in requests:
            movie = request.item.movie
            present = {t.label for t in request.targets}
            first = request.target
            later = [t for t in request.targets if t.start > first.start]
            candidates = []
            for new_first in self.characters.others(movie, first.label, present):
                swaps = {first.label: new_first}
                for target in later:
                    if target.label in swaps or request.rng.random() >= self.swap_later:
                        continue
                    options = self.characters.others(movie, target.label, present | set(swaps.values()))
                    if options:
                        swaps[target.label] = options[request.rng.integers(len(options))]
                changed = [first] + [t for t in later if t.label in swaps]
                replacements = tuple(replace_tokens(request.item.doc, t.start, t.end, swaps[t.label]) for t in changed)
                details = {"movie": movie, "swaps": swaps}
                if self.counts is not None:
                    details["train_counts"] = {name: self.counts[name] for name in (*swaps, *swaps.values())}
                    details["rare_original"] = self.counts[first.label] < self.counts[new_first]
                candidates.append(Candidate(request, replacements, details))
            lists.append(candidates)
        return lists


def name_counts(texts: Sequence[str], characters: Characters) -> Counter:
    """How often each character name occurs (as whole words) in training captions."""
    names = {name for cast in characters.gender.values() for name in cast}
    counts: Counter = Counter()
    if not names:
        return counts
    pattern = re.compile(r"\b(" + "|".join(re.escape(n) for n in sorted(names, key=len, reverse=True)) + r")\b")
    for text in texts:
        counts.update(pattern.findall(text))
    return counts


class PersonIdContrasts(ContrastGenerator):
    """Person-ID contrasts of captions with movies (a ``movie`` column, else LSMDC clip ids), from the
    characters file at ``characters_path``; with ``train_captions``, records say whether the new name
    is more frequent there."""

    kind = "id"

    def __init__(self, characters_path: str | Path, config: PersonIdConfig = PersonIdConfig(), train_captions: Captions | None = None):
        super().__init__(config)
        self.characters = read_characters(characters_path)
        self.characters_digest = input_digest("characters", characters_path)
        self.counts = name_counts(train_captions.texts, self.characters) if train_captions is not None else None

    @functools.cached_property
    def nlp(self):
        return spacy_pipeline("en_core_web_sm")

    def items(self, captions: Captions) -> list[CaptionItem]:
        movies = caption_movies(captions, self.config.movie_column)
        listed = captions.extra.get("names")  # ';'-joined, as the LSMDC reader keeps them
        return [
            replace(item, movie=movies[item.index], names=tuple(n for n in listed[item.index].split(";") if n) if listed is not None else None)
            for item in super().items(captions)
        ]

    def search(self, context=None) -> ContrastSearch:
        finder, swap = CharacterNames(self.characters), NameSwap(self.characters, self.config.swap_later, self.counts)
        return ContrastSearch("id", finder, swap, (), seed=self.config.seed, target_order="first")

    def signature_fields(self, search: ContrastSearch) -> dict:
        return {"characters": self.characters_digest, "train": "yes" if self.counts is not None else "none", "lm": self.lm.name}
