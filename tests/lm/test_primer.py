"""The judge's primers (:mod:`tvrbench.lm.primer`): seeded, one caption per video, never a caption's
own video, and nothing to read for a collection of one video."""

from __future__ import annotations

import pytest

from tvrbench.lm.primer import HEADER, UNPRIMED, Primers


def collection(videos: int, per_video: int) -> tuple[list[str], list[str]]:
    texts = [f"caption {k} of video {v}" for v in range(videos) for k in range(per_video)]
    return texts, [f"video{v}" for v in range(videos) for _ in range(per_video)]


@pytest.mark.parametrize("videos, per_video, size", [(30, 3, 4), (30, 1, 8), (5, 2, 4), (2, 20, 4)])
def test_a_caption_never_reads_its_own_video_s_captions(videos, per_video, size):
    texts, video_ids = collection(videos, per_video)
    primers = Primers.draw(texts, video_ids, size, seed=0)
    expected = min(size, videos - 1)
    assert len(primers.first) == expected and len(primers.second) == min(expected, videos - expected)
    for text, video in zip(texts, video_ids):
        primer = primers.text(video)
        assert primer.startswith(HEADER) and primer.endswith("\n")
        read = primer[len(HEADER) :].splitlines()
        assert read and text not in read and not any(line.endswith(f"of {video}") for line in read)
        assert len({line.rsplit(" ", 1)[1] for line in read}) == len(read)  # one caption per video


def test_primers_are_seeded_and_named_by_their_captions():
    texts, video_ids = collection(50, 2)
    first, again, other = (Primers.draw(texts, video_ids, 4, seed) for seed in (0, 0, 1))
    assert first == again and first.name == again.name
    assert first.first != other.first and first.name != other.name
    assert first.name.startswith("4+4-captions(seed=0,")
    assert Primers.draw(texts, video_ids, 0, 0).name == "none"


def test_a_collection_of_one_video_is_read_unprimed():
    for texts, video_ids in ([["a man is cooking"], ["video1"]], collection(1, 3)):
        primers = Primers.draw(texts, video_ids, 4, seed=0)
        assert primers == UNPRIMED and primers.name == "none" and primers.text(video_ids[0]) == ""
