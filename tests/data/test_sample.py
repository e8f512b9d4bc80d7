"""The embedded sample: consistent ids and shapes, labels that follow its rule, a reproducible build."""

import json
import subprocess
import sys

import numpy as np
import pytest

from tvrbench.data import SAMPLE_DIR, SAMPLE_FILES, load_sample, sample_path
from tvrbench.data.sample import build_sample
from tvrbench.io.fire import iter_fire


@pytest.fixture(scope="module")
def sample():
    return load_sample()


@pytest.fixture(scope="module")
def facets():
    return json.loads(sample_path("facets.json").read_text())


def test_shapes_and_ids_agree_across_files(sample, facets):
    n_captions, n_videos = len(sample.captions), len(sample.video_ids)
    assert (n_captions, n_videos) == (112, 36)
    assert set(sample.captions.video_ids) == set(sample.video_ids)
    assert list(facets["videos"]) == sample.video_ids
    assert list(facets["captions"]) == sample.captions.caption_ids
    assert len(set(sample.captions.texts)) == n_captions
    for matrix in (*sample.scores.values(), sample.relevance):
        assert matrix.shape == (n_captions, n_videos) and matrix.dtype == np.float32
    assert sorted(sample.scores) == ["genderblind", "objectonly", "strong"]
    assert sorted(p.name for p in SAMPLE_DIR.iterdir() if p.is_file()) == sorted((*SAMPLE_FILES, "build_sample.py"))


def test_relevance_is_the_facet_coverage(sample, facets):
    videos = [set(facets["videos"][v]["facets"]) for v in sample.video_ids]
    for row, caption_id in enumerate(sample.captions.caption_ids):
        mentioned = set(facets["captions"][caption_id]["facets"])
        expected = [len(mentioned & shown) / len(mentioned) for shown in videos]
        assert np.allclose(sample.relevance[row], expected)
        assert sample.relevance[row, sample.video_ids.index(sample.captions.video_ids[row])] == 1.0


def test_fire_labels_pool_top5_and_mostly_follow_the_rule(sample):
    fire = sample.fire
    assert fire.datasets() == ["SAMPLE"]
    assert set(fire.label.tolist()) == {1, 0, -1}
    rows = {text: i for i, text in enumerate(sample.captions.texts)}
    columns = {video: j for j, video in enumerate(sample.video_ids)}
    pairs = [(rows[q], columns[v]) for q, v in zip(fire.query, fire.video_id)]
    assert len(set(pairs)) == len(pairs)
    for (row, column), models in zip(pairs, fire.models):
        assert sample.captions.video_ids[row] != sample.video_ids[column]  # own video is never pooled
        for model in models:  # a pooled pair is in that model's top 6 (top 5 plus the skipped own video)
            assert (sample.scores[model][row] > sample.scores[model][row, column]).sum() < 6
    decided = fire.label >= 0
    rule = np.array([sample.relevance[r, c] == 1.0 for r, c in pairs])
    assert (rule[decided] == (fire.label[decided] == 1)).mean() > 0.95
    for label, votes in zip(fire.label.tolist(), fire.annotator_labels):
        assert label == (-1 if 2 * sum(votes) == len(votes) else int(2 * sum(votes) > len(votes)))


def test_models_differ_in_quality(sample):
    own = np.array([sample.video_ids.index(v) for v in sample.captions.video_ids])
    correct_at_1 = {name: (m.argmax(axis=1) == own).mean() for name, m in sample.scores.items()}
    assert correct_at_1["strong"] > correct_at_1["genderblind"] > correct_at_1["objectonly"]


def test_fire_file_streams_with_the_reader():
    records = list(iter_fire(sample_path("fire.json")))
    assert len(records) == len(load_sample().fire)
    assert all(r.dataset == "SAMPLE" for r in records)


def test_unknown_sample_file():
    with pytest.raises(ValueError, match="has no file 'scores.npy'"):
        sample_path("scores.npy")


def test_build_reproduces_every_file_byte_for_byte(tmp_path):
    subprocess.run([sys.executable, str(SAMPLE_DIR / "build_sample.py"), "--out", str(tmp_path)], check=True)
    built = sorted(p.name for p in tmp_path.iterdir())
    assert built == sorted(name for name in SAMPLE_FILES if name != "README.md")
    for name in built:
        assert (tmp_path / name).read_bytes() == sample_path(name).read_bytes(), name


def test_the_builders_parts_give_the_shipped_captions_and_relevance():
    """In process, beside the script run above: facets closed under IMPLIES, every caption's facets
    shown by its own video, the captions table and the coverage matrix as shipped."""
    shown = build_sample.video_facets()
    for facets in shown.values():
        for facet in facets:
            assert build_sample.IMPLIES.get(facet, set()) <= facets
    build_sample.check_ground_truth(shown)
    assert build_sample.captions_csv() == sample_path("captions.csv").read_text(encoding="utf-8")
    relevance = build_sample.relevance_matrix(shown)
    assert np.array_equal(relevance, np.load(sample_path("relevance.npy")))
    mentioned = [set(facets.split()) for _, _, facets in build_sample.CAPTIONS]
    own = [[v[0] for v in build_sample.VIDEOS].index(video) for video, _, _ in build_sample.CAPTIONS]
    assert all(relevance[row, column] == 1.0 and mentioned[row] <= shown[build_sample.VIDEOS[column][0]] for row, column in enumerate(own))
