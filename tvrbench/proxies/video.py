"""Videos with several captions (MSR-VTT has 20): which captions belong to which video."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp


@dataclass(frozen=True)
class VideoGroups:
    """Videos in order of first appearance and, for each, the indices of its captions."""

    video_ids: list[str]
    members: list[list[int]]
    n_captions: int

    @classmethod
    def from_caption_videos(cls, caption_video_ids: Sequence[str]) -> "VideoGroups":
        members: dict[str, list[int]] = {}
        for index, video in enumerate(caption_video_ids):
            members.setdefault(video, []).append(index)
        return cls(list(members), list(members.values()), len(caption_video_ids))

    @classmethod
    def singletons(cls, caption_ids: Sequence[str]) -> "VideoGroups":
        """Caption level: every caption is its own row."""
        return cls(list(caption_ids), [[i] for i in range(len(caption_ids))], len(caption_ids))

    def membership(self) -> sp.csr_matrix:
        """0/1 matrix videos x captions: 1 where the caption belongs to the video."""
        rows = np.repeat(np.arange(len(self.members)), [len(m) for m in self.members])
        columns = np.asarray([i for m in self.members for i in m], dtype=np.int64)
        return sp.csr_matrix((np.ones(len(columns)), (rows, columns)), shape=(len(self.members), self.n_captions))

    def video_of_caption(self) -> np.ndarray:
        owner = np.empty(self.n_captions, dtype=np.int64)
        for video, captions in enumerate(self.members):
            owner[captions] = video
        return owner
