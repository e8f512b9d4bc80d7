"""Proxies against the reference definitions: the plain per-pair loops of Wray et al.'s released code.

The oracles below are that code's logic (``create_iou``, ``get_non_stop``, ``get_pos``,
``get_wn_synset``, ``single_meteor_score`` per pair), run with the full spaCy pipeline and NLTK's own
lemmatizer and Lesk. Real captions: the MSR-VTT 1k-A test split (skipped when absent).
"""

from __future__ import annotations

import csv
from collections import Counter
from pathlib import Path

import nltk
import numpy as np
import pytest

from tvrbench.home import cache_dir
from tvrbench.proxies import build_proxy, parse_captions, proxy_matrix
from tvrbench.resources import spacy_package_for, wordnet

MSRVTT = Path(__file__).resolve().parents[3] / "shared" / "data" / "msrvtt" / "MSRVTT_JSFUSION_test.csv"
if not MSRVTT.is_file():
    MSRVTT = Path("/work/shared/data/msrvtt/MSRVTT_JSFUSION_test.csv")


@pytest.fixture(scope="module")
def captions() -> list[str]:
    if not MSRVTT.is_file():
        pytest.skip(f"MSR-VTT sample not present: {MSRVTT} (only in the project's CI)")
    with open(MSRVTT, encoding="utf-8") as handle:
        return [row["sentence"] for row in csv.DictReader(handle)]


@pytest.fixture(scope="module")
def wn():
    reader = wordnet()
    # The reference code calls NLTK's global corpus loader: point it at the same WordNet 3.0.
    nltk.data.path.insert(0, str(cache_dir() / "nltk_data"))
    return reader


@pytest.fixture(scope="module")
def full_nlp():
    """The reference parses with the whole pipeline (parser and NER included)."""
    import spacy

    return spacy.load(spacy_package_for("en_core_web_sm"))


# --------------------------------------------------------------------------- the reference code, per pair


def reference_iou(set_1, set_2):
    intersect_ = set_1.intersection(set_2)
    union_ = set_1.union(set_2)
    denominator = len(union_) if len(union_) != 0 else 0.0001
    return len(intersect_) / denominator


def reference_matrix(columns: list[list[list[str]]], rows: list[list[list[str]]] | None = None) -> np.ndarray:
    """create_relevancy_matrix: Σ over columns of IoU, / number of columns; diagonal of own pairs set to 1."""
    rows = columns if rows is None else rows
    rel = np.zeros((len(rows[0]), len(columns[0])))
    for values_1, values_2 in zip(rows, columns):
        for i, v1 in enumerate(values_1):
            for j, v2 in enumerate(values_2):
                rel[i][j] += reference_iou(set(v1), set(v2))
    return rel / len(columns)


def reference_non_stop(sentence, stop_words):
    return [w for w in sentence.split(" ") if w not in stop_words]


def reference_pos(doc, pos):
    return [w.text for w in doc if w.pos_ == pos]


def reference_synsets(sentence, words, pos):
    from nltk.stem import WordNetLemmatizer
    from nltk.wsd import lesk

    lemmatiser = WordNetLemmatizer()
    found = set()
    for search_word in words:
        synset = lesk(sentence.split(" "), lemmatiser.lemmatize(search_word, pos), pos=pos)
        found.add(synset.name() if synset is not None else search_word)
    return list(found)


def with_unit_diagonal(matrix: np.ndarray) -> np.ndarray:
    np.fill_diagonal(matrix, 1.0)
    return matrix


# --------------------------------------------------------------------------- caption level, exact


def test_bow_equals_reference_loop(captions, full_nlp):
    texts = captions[:500]
    expected = with_unit_diagonal(reference_matrix([[reference_non_stop(t, full_nlp.Defaults.stop_words) for t in texts]]))
    got = proxy_matrix(parse_captions(texts), "bow", dtype=np.float64)
    assert got.shape == (500, 500) and got.dtype == np.float64
    assert np.abs(got - expected).max() <= 1e-12
    assert (expected[~np.eye(500, dtype=bool)] > 0).sum() > 1000  # the comparison covers real overlaps


def test_pos_equals_reference_loop_with_full_pipeline(captions, full_nlp):
    texts = captions[:300]
    docs = [full_nlp(t) for t in texts]
    expected = with_unit_diagonal(reference_matrix([[reference_pos(d, "VERB") for d in docs], [reference_pos(d, "NOUN") for d in docs]]))
    got = proxy_matrix(parse_captions(texts), "pos", dtype=np.float64)
    assert np.abs(got - expected).max() <= 1e-12


def test_syn_equals_reference_loop(captions, full_nlp, wn):
    texts = captions[300:450]
    docs = [full_nlp(t) for t in texts]
    columns = [[reference_synsets(t, reference_pos(d, tag), p) for t, d in zip(texts, docs)] for tag, p in (("VERB", "v"), ("NOUN", "n"))]
    expected = with_unit_diagonal(reference_matrix(columns))
    got = proxy_matrix(parse_captions(texts), "syn", dtype=np.float64, wordnet=wn)
    assert np.abs(got - expected).max() <= 1e-12
    assert not np.array_equal(got, proxy_matrix(parse_captions(texts), "pos", dtype=np.float64))


def test_meteor_equals_nltk_on_all_pairs_of_a_subset_and_random_pairs(captions, wn):
    from nltk.translate.meteor_score import single_meteor_score

    got = proxy_matrix(captions, "met", dtype=np.float64, wordnet=wn)
    assert got.shape == (1000, 1000)
    subset = range(70)
    pairs = [(i, j) for i in subset for j in subset if i != j]
    rng = np.random.default_rng(7)
    pairs += [tuple(p) for p in rng.integers(0, 1000, size=(1500, 2)) if p[0] != p[1]]
    worst = max(abs(got[i, j] - single_meteor_score(captions[i].split(), captions[j].split(), wordnet=wn)) for i, j in pairs)
    assert worst <= 1e-9
    assert np.all(np.diag(got) == 1.0)
    assert not np.allclose(got, got.T)  # METEOR is not symmetric: rows are references


def test_meteor_stages_on_crafted_pairs(wn):
    """Stem and synonym stages, repeated words and word order, where NLTK's alignment order matters."""
    from nltk.translate.meteor_score import single_meteor_score

    texts = [
        "the dogs are running fast",
        "a dog runs quickly the the",
        "Man puts the cup on the table the",
        "a person places a mug on a table",
        "cup the on table puts man",
        "the the the",
        "",
        "a big automobile",
        "car big a car",
        "running dog dog running",
    ]
    got = proxy_matrix(texts, "met", dtype=np.float64, wordnet=wn)
    for i, ref in enumerate(texts):
        for j, hyp in enumerate(texts):
            if i != j:
                assert abs(got[i, j] - single_meteor_score(ref.split(), hyp.split(), wordnet=wn)) <= 1e-9, (ref, hyp)


# --------------------------------------------------------------------------- video level


def pseudo_videos(n_captions: int, seed: int = 3) -> list[str]:
    """Group captions into videos of 1 to 5 captions (MSR-VTT has 20; the rule is the same)."""
    rng = np.random.default_rng(seed)
    owners, video = [], 0
    while len(owners) < n_captions:
        owners += [f"v{video}"] * int(rng.integers(1, 6))
        video += 1
    return owners[:n_captions]


def reference_video_sets(items_per_caption, owners, fraction=0.25):
    videos = list(dict.fromkeys(owners))
    sets = []
    for video in videos:
        members = [items for items, owner in zip(items_per_caption, owners) if owner == video]
        counts = Counter(w for items in members for w in set(items))
        sets.append([w for w, c in counts.items() if c / len(members) >= fraction])
    return videos, sets


def test_video_level_bow_and_pos_follow_the_25_percent_rule(captions, full_nlp):
    texts = captions[:150]
    owners = pseudo_videos(len(texts))
    docs = [full_nlp(t) for t in texts]
    per_part = {
        "bow": [[reference_non_stop(t, full_nlp.Defaults.stop_words) for t in texts]],
        "pos": [[reference_pos(d, "VERB") for d in docs], [reference_pos(d, "NOUN") for d in docs]],
    }
    parsed = parse_captions(texts)
    for proxy, columns in per_part.items():
        videos, _ = reference_video_sets(columns[0], owners)
        rows = [reference_video_sets(col, owners)[1] for col in columns]
        expected = reference_matrix(columns, rows)
        for v, video in enumerate(videos):
            expected[v, [j for j, o in enumerate(owners) if o == video]] = 1.0
        matrix = build_proxy(parsed, proxy, "video", video_ids=owners)
        assert matrix.row_ids == videos
        assert np.abs(matrix.compute(np.float64) - expected).max() <= 1e-12


def test_video_level_meteor_is_the_match_kernel(captions, wn):
    from nltk.translate.meteor_score import single_meteor_score

    texts = captions[:45]
    owners = pseudo_videos(len(texts), seed=5)
    videos = list(dict.fromkeys(owners))
    got = proxy_matrix(texts, "met", "video", video_ids=owners, dtype=np.float64, wordnet=wn)
    assert got.shape == (len(videos), len(texts))
    for v, video in enumerate(videos):
        refs = [t for t, o in zip(texts, owners) if o == video]
        for j, hyp in enumerate(texts):
            if owners[j] == video:
                assert got[v, j] == 1.0
                continue
            k = [single_meteor_score(r.split(), hyp.split(), wordnet=wn) for r in refs]
            assert abs(got[v, j] - 0.5 * (sum(k) / len(k) + max(k))) <= 1e-9


def test_single_caption_videos_equal_caption_level(captions):
    texts = captions[:200]
    parsed = parse_captions(texts)
    caption_level = proxy_matrix(parsed, "pos", dtype=np.float64)
    video_level = proxy_matrix(parsed, "pos", "video", video_ids=[f"v{i}" for i in range(200)], dtype=np.float64)
    assert np.array_equal(caption_level, video_level)


# --------------------------------------------------------------------------- learned proxies


def test_embedding_proxy_is_clipped_cosine_of_the_model():
    from tvrbench.resources import sentence_model

    texts = ["a man plays a guitar", "someone is playing the guitar", "a recipe for pasta", "cars race on a track"]
    got = proxy_matrix(texts, "embedding", dtype=np.float64)
    vectors = sentence_model().encode(texts, convert_to_numpy=True).astype(np.float64)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    expected = with_unit_diagonal(np.clip(vectors @ vectors.T, 0, 1))
    assert np.abs(got - expected).max() <= 1e-6
    assert got[0, 1] > got[0, 2]


def test_visual_proxy_uses_the_features_of_each_captions_video():
    rng = np.random.default_rng(0)
    features = rng.normal(size=(3, 8))
    owners = ["a", "b", "b", "c"]
    got = proxy_matrix(["w x", "y z", "z y", "q"], "visual", "video", video_ids=owners, features=features, dtype=np.float64)
    unit = features / np.linalg.norm(features, axis=1, keepdims=True)
    expected = np.clip(unit @ unit[[0, 1, 1, 2]].T, 0, 1)
    expected[[0, 1, 1, 2], [0, 1, 2, 3]] = 1.0
    assert np.abs(got - expected).max() <= 1e-12


# --------------------------------------------------------------------------- bad input


@pytest.mark.parametrize("proxy", ["bow", "pos", "syn", "met"])
def test_empty_and_stop_word_captions_give_zero_not_nan(proxy, wn):
    texts = ["", "a the of and", "  ", "a man is running", "the of a"]
    got = proxy_matrix(texts, proxy, dtype=np.float64, wordnet=wn)
    assert np.isfinite(got).all()
    assert np.all(np.diag(got) == 1.0)
    assert np.all(got[[0, 0, 2, 3, 3], [1, 2, 0, 0, 2]] == 0.0)  # empty captions match nothing
    if proxy != "met":  # METEOR keeps stop words: "a the of and" and "the of a" do match
        assert np.all(got[[1, 1, 4], [4, 3, 1]] == 0.0)


@pytest.mark.parametrize("proxy", ["bow", "pos", "syn", "met"])
def test_non_english_text_is_handled(proxy, wn):
    texts = ["ein Mann fährt Fahrrad", "一个男人在骑自行车", "a man rides a bike", "un homme fait du vélo", "a man rides a bike"]
    got = proxy_matrix(texts, proxy, dtype=np.float64, wordnet=wn)
    assert np.isfinite(got).all() and got.min() >= 0 and got.max() <= 1
    assert got[2, 4] > 0.5  # the two English duplicates still match


def test_text_that_is_not_valid_unicode_is_an_input_error():
    from tvrbench.errors import InputError

    with pytest.raises(InputError, match="caption 1 is not valid Unicode"):
        parse_captions(["fine", "bad \udcff byte"])


def test_missing_spacy_pipeline_says_how_to_install():
    from tvrbench.errors import MissingResource

    with pytest.raises(MissingResource, match="spacy download xx_no_such_pipeline"):
        parse_captions(["a man"], spacy_model="xx_no_such_pipeline")


def test_missing_wordnet_says_how_to_get_it(tmp_path, monkeypatch):
    import tvrbench.resources as resources
    from tvrbench.errors import MissingResource

    nltk_paths = [p for p in nltk.data.path if "tvrbench" not in p]
    try:
        nltk.data.find("corpora/wordnet", paths=nltk_paths)
        pytest.skip("NLTK's own WordNet data is installed here, so WordNet cannot be missing")
    except LookupError:
        pass
    monkeypatch.setattr(nltk.data, "path", nltk_paths)
    monkeypatch.setenv("TVRBENCH_HOME", str(tmp_path))
    monkeypatch.setenv("TVRBENCH_WORDNET", str(tmp_path / "none"))
    monkeypatch.setattr(resources, "DEBIAN_WORDNET", tmp_path / "none")
    resources.wordnet.cache_clear()
    try:
        with pytest.raises(MissingResource, match="wordnet-base"):
            build_proxy(["a man", "a dog"], "met")
    finally:
        resources.wordnet.cache_clear()
