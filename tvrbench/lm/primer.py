"""A language model primed on the collection: a few of its own captions read before each sentence.

Read cold, a small LM does not know what kind of text a caption is, nor which events its videos
show; after a few real captions, one a line, it reads the next line as one more of them (issue 47:
after two captions the verb judge's held-out AUC against blind readers is 0.696, against 0.641 read
cold; docs/contrast.md, benchmarks/fit_judge.py). The captions are
drawn with a seed, one per video, and a caption is never primed with itself or with another caption
of its own video: two primers are drawn from distinct videos, and a caption whose video gave one to
the first primer reads after the second. Two primers, whatever the collection's size, so each one's
key-value cache is computed once (:meth:`~tvrbench.lm.models.CausalLM.primed`). A primer holds
captions of at most one video fewer than the collection has, so a collection of one video is read
unprimed (its signature says ``primer:none``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from tvrbench.signature import text_digest

HEADER = "Short descriptions of videos:\n"


@dataclass(frozen=True)
class Primers:
    """The two primers drawn from a collection (``size`` captions each, fewer when the collection
    has too few videos)."""

    seed: int
    first: tuple[str, ...]
    first_videos: frozenset[str]
    second: tuple[str, ...]

    @classmethod
    def draw(cls, texts: Sequence[str], video_ids: Sequence[str], size: int, seed: int) -> "Primers":
        """``size`` captions from as many videos for each primer, the videos in a seeded order and each
        one's caption drawn among its own; the second primer's videos follow the first's."""
        rng = np.random.default_rng(seed)
        by_video: dict[str, list[str]] = {}
        for text, video in zip(texts, video_ids):
            by_video.setdefault(video, []).append(text.strip())
        videos = sorted(by_video)
        size = max(0, min(size, len(videos) - 1))  # a caption whose video is in the first primer reads the second
        chosen = [videos[k] for k in rng.permutation(len(videos))[: 2 * size]] if size else []
        captions = [sorted(by_video[video])[rng.integers(len(by_video[video]))] for video in chosen]
        return cls(seed, tuple(captions[:size]), frozenset(chosen[:size]), tuple(captions[size:]))

    def text(self, video_id: str) -> str:
        """The primer a caption of ``video_id`` reads after ("": none)."""
        captions = self.second if video_id in self.first_videos else self.first
        return HEADER + "".join(f"{caption}\n" for caption in captions) if captions else ""

    @property
    def name(self) -> str:
        """For signatures: how many captions each primer holds, the seed and the digest of their texts."""
        if not self.first:
            return "none"
        return f"{len(self.first)}+{len(self.second)}-captions(seed={self.seed},{text_digest([*self.first, '', *self.second])})"


UNPRIMED = Primers(0, (), frozenset(), ())  # every caption read cold
