"""The proxies' parts from Python, each against a plain loop: caption parses (tvrbench.proxies.parsing),
set items and their IoU kernel (sets), video groups (video), cosine kernels and features (learned),
and the METEOR kernel against NLTK's own per-pair score (meteor)."""

from __future__ import annotations

import hashlib

import numpy as np
import pytest

from tvrbench.errors import InputError
from tvrbench.proxies.learned import CosineKernel, read_features, unit_rows, video_embeddings
from tvrbench.proxies.meteor import MeteorKernel
from tvrbench.proxies.parsing import check_texts, parse_captions, text_key
from tvrbench.proxies.sets import IoUKernel, bow_items, incidence, stop_words, video_sets
from tvrbench.proxies.video import VideoGroups
from tvrbench.resources import wordnet

TEXTS = ["a man is cooking pasta", "a man  cooks pasta in a kitchen", "the the the", "a woman is cooking", "a man is cooking pasta"]
VIDEOS = ["v1", "v2", "v1", "v3", "v2"]


def iou(a: set, b: set) -> float:
    return len(a & b) / len(a | b) if a | b else 0.0


def test_bow_sets_and_their_iou_kernel_equal_a_loop_over_pairs():
    items = bow_items(TEXTS)
    assert items[1] == tuple(w for w in TEXTS[1].split(" ") if w and w not in stop_words())  # the double space gives no empty word
    vocabulary: dict[str, int] = {}
    sets = incidence(items, vocabulary)
    assert [{word for word, column in vocabulary.items() if sets[row, column]} for row in range(len(TEXTS))] == [set(i) for i in items]
    got = IoUKernel([(sets, sets, 1.0)]).block(slice(1, 4))
    expected = [[iou(set(items[r]), set(items[c])) for c in range(len(TEXTS))] for r in range(1, 4)]
    assert np.array_equal(got, np.array(expected))
    assert (got[1] == 0).all()  # stop words only: IoU 0 with everything, itself included


def test_video_groups_and_video_sets_follow_first_appearance_and_the_fraction():
    groups = VideoGroups.from_caption_videos(VIDEOS)
    assert groups.video_ids == ["v1", "v2", "v3"] and groups.members == [[0, 2], [1, 4], [3]]
    membership = groups.membership().toarray()
    assert membership.tolist() == [[float(VIDEOS[c] == v) for c in range(len(VIDEOS))] for v in groups.video_ids]
    assert groups.video_of_caption().tolist() == [groups.video_ids.index(v) for v in VIDEOS]
    assert VideoGroups.singletons(["a", "b"]).members == [[0], [1]]
    items = bow_items(TEXTS)
    vocabulary: dict[str, int] = {}
    per_video = video_sets(incidence(items, vocabulary), groups.membership(), 0.5)
    for row, members in enumerate(groups.members):
        kept = {w for w in vocabulary if sum(w in items[m] for m in members) / len(members) >= 0.5}
        assert {w for w, column in vocabulary.items() if per_video[row, column]} == kept


def test_cosine_kernel_is_the_clipped_cosine_and_videos_are_their_captions_mean(tmp_path):
    rng = np.random.default_rng(0)
    vectors = unit_rows(rng.normal(size=(5, 4)))
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0) and (unit_rows(np.zeros((1, 3))) == 0).all()
    groups = VideoGroups.from_caption_videos(VIDEOS)
    videos = video_embeddings(vectors, groups)
    for row, members in enumerate(groups.members):
        mean = vectors[members].mean(axis=0)
        assert np.allclose(videos[row], mean / np.linalg.norm(mean))
    got = CosineKernel(videos, vectors).block(slice(0, 3))
    expected = [[max(0.0, float(v @ c)) for c in vectors] for v in videos]
    assert np.allclose(got, expected, atol=1e-12) and (got == 0).any()
    np.save(tmp_path / "f.npy", np.ones((3, 2), np.int32))
    assert read_features(tmp_path / "f.npy", 3).dtype == np.float64
    for array, message in [(np.ones((2, 2)), "with 3 rows"), (np.array([[np.nan]] * 3), "finite real numbers")]:
        np.save(tmp_path / "bad.npy", array)
        with pytest.raises(InputError, match=message):
            read_features(tmp_path / "bad.npy", 3)


def test_meteor_kernel_equals_nltk_per_pair_and_groups_are_the_match_kernel():
    from nltk.translate.meteor_score import single_meteor_score

    wn = wordnet()
    texts = ["the dogs are running fast", "a dog runs quickly", "a big automobile", "car big a car", "a man is cooking pasta"]
    kernel = MeteorKernel(texts, wn)
    got = kernel.block(slice(0, len(texts)))
    expected = [[single_meteor_score(ref.split(), hyp.split(), wordnet=wn) for hyp in texts] for ref in texts]
    assert np.abs(got - np.array(expected)).max() <= 1e-9
    grouped = MeteorKernel(texts, wn, [[0, 1], [2]]).block(slice(0, 2))
    k = np.array(expected)
    assert np.allclose(grouped[0], 0.5 * (k[[0, 1]].mean(axis=0) + k[[0, 1]].max(axis=0)), atol=1e-9)
    assert np.allclose(grouped[1], k[2], atol=1e-9)
    with pytest.raises(ValueError, match="at least one"):
        MeteorKernel(texts, wn, [[0], []])


def test_captions_are_checked_keyed_and_parsed_once_per_distinct_text():
    assert text_key("é") == hashlib.sha256("é".encode()).hexdigest()
    assert check_texts(t for t in ("a", "b")) == ["a", "b"]
    with pytest.raises(InputError, match="caption 1 is int"):
        check_texts(["a", 3])
    with pytest.raises(InputError, match="caption 0 is not valid Unicode"):
        check_texts(["\udc80"])
    parsed = parse_captions(TEXTS, use_cache=False)
    assert len(parsed) == len(TEXTS) and parsed.parsed_now == len(set(TEXTS))
    assert parsed.tokens[0] == parsed.tokens[4] == ("a", "man", "is", "cooking", "pasta")
    assert parsed.lemmas[0][3] == "cook" and parsed.pos[0][1] == "NOUN" and "ner" not in parsed.pipeline
