"""Multiple-choice splits: construction, the TSV format, scoring (against plain loops), bad input."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from tvrbench.data import sample_path
from tvrbench.errors import InputError
from tvrbench.generators import gender_contrasts
from tvrbench.generators.config import GenderConfig, MCConfig
from tvrbench.io.captions import Captions, read_captions
from tvrbench.io.mc import MC_COLUMNS, MCInstance, read_mc, write_mc
from tvrbench.mc.build import build_mc_file, import_mc_file
from tvrbench.mc.score import mc_outcomes, score_mc_file

ROOT = Path(__file__).resolve().parents[2]
MSRVTT = Path("/work/shared/data/msrvtt/MSRVTT_JSFUSION_test.csv")
GENDER = GenderConfig(lm="ngram")  # the plausibility line's LM: these tests are not about it (test_offline_lms.py is)


@pytest.fixture(scope="module")
def splits(tmp_path_factory):
    if not MSRVTT.is_file():
        pytest.skip(f"MSR-VTT sample not present: {MSRVTT}")
    folder = tmp_path_factory.mktemp("mc")
    captions = read_captions(MSRVTT)
    records, _ = gender_contrasts(captions, folder / "gender.jsonl", GENDER)
    random = build_mc_file(captions, "random", folder / "random.tsv")
    gender = build_mc_file(captions, "gender", folder / "gender.tsv", contrast_path=folder / "gender.jsonl")
    return folder, captions, records, random, gender


def test_random_mc_has_one_instance_per_video_and_valid_options(splits):
    folder, captions, _, random, _ = splits
    assert len(random.instances) == len(captions.distinct_videos()) == 1000
    video_of_text = {}
    for text, video in zip(captions.texts, captions.video_ids):
        video_of_text.setdefault(text, set()).add(video)
    for instance in random.instances:
        assert len(instance.endings) == 5 and 0 <= instance.label < 5
        assert len({e.lower() for e in instance.endings}) == 5
        negatives = [e for i, e in enumerate(instance.endings) if i != instance.label]
        assert all(instance.clip not in video_of_text[n] for n in negatives)
        assert len({min(video_of_text[n]) for n in negatives}) == 4  # four distinct other videos


def test_gender_mc_is_the_random_instance_with_one_contrast_in_place(splits):
    _, captions, records, random, gender = splits
    contrast_of = {r.caption_id: r.contrast for r in records}
    texts = set(captions.texts)
    assert len(gender.instances) == len(records) == 501
    by_clip = {i.clip: i for i in random.instances}
    for instance, caption_id, option in zip(gender.instances, gender.caption_ids, gender.contrast_options):
        base = by_clip[instance.clip]
        assert instance.label == base.label and instance.positive == base.positive
        differing = [i for i in range(5) if instance.endings[i] != base.endings[i]]
        assert differing == [option] and instance.endings[option] == contrast_of[caption_id]
        others = [e for i, e in enumerate(instance.endings) if i not in (option, instance.label)]
        assert all(e in texts for e in others)  # the 3 other negatives are real captions of other videos
        assert instance.endings.count(contrast_of[caption_id]) == 1  # exactly one contrast negative


def test_splits_are_seeded_and_round_trip_through_the_tsv(splits, tmp_path):
    folder, captions, _, random, gender = splits
    assert read_mc(folder / "gender.tsv") == gender.instances
    assert read_mc(folder / "random.tsv") == random.instances
    header = (folder / "gender.tsv").read_text().splitlines()[0]
    assert tuple(header.split("\t")) == MC_COLUMNS
    again = build_mc_file(captions, "gender", tmp_path / "g.tsv", contrast_path=folder / "gender.jsonl")
    assert (tmp_path / "g.tsv").read_bytes() == (folder / "gender.tsv").read_bytes()
    assert again.contrast_options == gender.contrast_options
    other = build_mc_file(captions, "random", tmp_path / "r1.tsv", MCConfig(seed=1))
    assert [i.endings for i in other.instances] != [i.endings for i in random.instances]
    sidecar = json.loads((folder / "gender.tsv.json").read_text())
    assert sidecar["counts"] == {"instances": 501, "dropped: positive has no gender contrast": 499}


def test_same_movie_negatives(tmp_path):
    rows = [(f"c{m}{k}", f"caption {k} of movie {m}", f"M{m}_00.00.0{k}.000-00.00.0{k}.500") for m in range(3) for k in range(6)]
    captions = Captions([r[0] for r in rows], [r[1] for r in rows], [r[2] for r in rows])
    split = build_mc_file(captions, "random", tmp_path / "l.tsv", MCConfig(negatives_from="same_movie"))
    assert len(split.instances) == 18
    for instance in split.instances:
        movie = instance.clip.split("_")[0][1:]
        assert all(e.endswith(f"movie {movie}") for e in instance.endings)


def oracle_outcomes(scores, labels):
    correct, tie = [], []
    for row, label in zip(scores, labels):
        best_other = max(s for i, s in enumerate(row) if i != label)
        correct.append(row[label] > best_other)
        tie.append(row[label] == best_other)
    return np.array(correct), np.array(tie)


def test_scoring_matches_a_plain_loop():
    rng = np.random.default_rng(0)
    scores = rng.integers(0, 4, size=(500, 5)).astype(float)  # many ties on purpose
    labels = rng.integers(0, 5, size=500)
    correct, tie = mc_outcomes(scores, labels)
    expected_correct, expected_tie = oracle_outcomes(scores, labels)
    assert (correct == expected_correct).all() and (tie == expected_tie).all()
    assert 0 < tie.mean() < 1


def test_score_file_with_subsets_and_blind_scorer(splits, tmp_path):
    folder, captions, _, _, _ = splits
    small = captions.subset(range(240))  # a smaller split keeps the sentence model's work short
    gender_contrasts(small, folder / "small.jsonl", GENDER)
    gender = build_mc_file(small, "gender", folder / "small.tsv", contrast_path=folder / "small.jsonl")
    labels = np.array([i.label for i in gender.instances])
    scores = np.zeros((len(labels), 5))
    scores[np.arange(len(labels)), labels] = 1.0
    scores[:40, 0] = 1.0  # ties or wrong answers on the first 40
    np.save(tmp_path / "s.npy", scores)
    result = score_mc_file(folder / "small.tsv", scores_path=tmp_path / "s.npy", contrast_path=folder / "small.jsonl").to_json()
    correct, tie = oracle_outcomes(scores, labels)
    assert result["accuracy"] == pytest.approx(correct.mean()) and result["ties"] == pytest.approx(tie.mean())
    assert result["n"] == len(labels)
    subsets = result["subsets"]
    assert subsets["most_similar_15"]["n"] == subsets["least_similar_15"]["n"] == round(0.15 * len(labels))
    assert subsets["antonym"]["n"] == 0  # gender contrasts have no antonyms
    assert result["signature"].startswith("tvrbench:")
    blind = score_mc_file(folder / "small.tsv", scorer="blind").to_json()
    assert blind["blind_reference"] == {"other options (nothing known of the video)": len(labels)}
    assert blind["ties"] < 0.01 and 0.2 < blind["accuracy"] < 0.8  # the contrast narrows 5 options to about 2


def test_similarity_subsets_reuse_the_cosines_contrast_records_carry(splits, tmp_path):
    import dataclasses

    from tvrbench.mc.score import contrast_cosines, score_mc
    from tvrbench.resources import sentence_model

    folder, captions, _, _, _ = splits
    records, _ = gender_contrasts(captions.subset(range(240)), tmp_path / "small.jsonl", GENDER)
    split = build_mc_file(captions.subset(range(240)), "gender", tmp_path / "small.tsv", contrast_path=tmp_path / "small.jsonl")
    instances, options = split.instances, split.contrast_options
    scores = np.random.default_rng(0).random((len(instances), 5))
    encoded_texts = []

    class Counting:  # the real model, counting what it is asked to encode
        def encode(self, texts, **kwargs):
            encoded_texts.extend(texts)
            return sentence_model().encode(texts, **kwargs)

    encoded = score_mc(instances, scores, options, records, Counting)
    assert len(encoded_texts) == 2 * len(instances)  # gender records carry no cosine: every pair encoded
    by_pair = {(r.original, r.contrast): r for r in records}
    matched = [by_pair[i.positive, i.endings[o]] for i, o in zip(instances, options)]
    cosines = contrast_cosines(instances, options, [None] * len(instances), np.arange(len(instances)), Counting)
    carried = [dataclasses.replace(r, filters={**r.filters, "meaning-changed": {"sentence_cosine": float(c)}}) for r, c in zip(matched, cosines)]
    never = lambda: pytest.fail("every record carries its cosine: no sentence model")  # noqa: E731
    assert score_mc(instances, scores, options, carried, never) == encoded
    encoded_texts.clear()
    half = [c if k % 2 == 0 else r for k, (c, r) in enumerate(zip(carried, matched))]  # the odd ones lack the cosine
    assert score_mc(instances, scores, options, half, Counting) == encoded
    assert len(encoded_texts) == 2 * (len(instances) // 2)


def test_the_split_keeps_what_the_subsets_need_so_scoring_needs_neither_records_nor_a_sentence_model(splits, tmp_path, monkeypatch):
    """Records with cosines and antonyms (as verb contrasts carry them): `mc score` without
    --contrast gives the subsets it gives with the records, and loads no sentence model."""
    import dataclasses

    import tvrbench.mc.score
    from tvrbench.generators.records import read_contrast_records

    folder, captions, _, _, _ = splits
    small = captions.subset(range(240))
    records, _ = gender_contrasts(small, tmp_path / "plain.jsonl", GENDER)
    rng = np.random.default_rng(3)
    verb_like = [
        dataclasses.replace(r, filters={"meaning-changed": {"antonym": bool(a), "sentence_cosine": None if a else round(float(c), 6)}})
        for r, a, c in zip(records, rng.random(len(records)) < 0.2, rng.random(len(records)))
    ]
    (tmp_path / "verb.jsonl").write_text("".join(json.dumps(r.to_json()) + "\n" for r in verb_like), encoding="utf-8")
    build_mc_file(small, "gender", tmp_path / "split.tsv", contrast_path=tmp_path / "verb.jsonl")
    saved = json.loads((tmp_path / "split.tsv.json").read_text())["instances"]
    assert any(e["antonym"] for e in saved) and all(("sentence_cosine" in e) != e["antonym"] for e in saved)

    def no_model(*args, **kwargs):
        raise AssertionError("the split carries every cosine: no sentence model")

    monkeypatch.setattr(tvrbench.mc.score, "sentence_model", no_model)
    without = score_mc_file(tmp_path / "split.tsv", scorer="lm", lm="ngram").to_json()
    with_records = score_mc_file(tmp_path / "split.tsv", scorer="lm", contrast_path=tmp_path / "verb.jsonl", lm="ngram").to_json()
    assert read_contrast_records(tmp_path / "verb.jsonl")  # the records are well formed
    assert without["subsets"] == with_records["subsets"] and set(without["subsets"]) == {"antonym", "most_similar_15", "least_similar_15"}
    assert without["subsets"]["antonym"]["n"] == sum(e["antonym"] for e in saved)


def test_blind_scorer_uses_other_captions_of_the_video(tmp_path):
    captions = Captions(["a1", "a2", "b1", "c1", "d1", "e1"],
                        ["a man plays a guitar", "a person playing guitar", "a dog runs on grass", "soup is cooked",
                         "cars race on a track", "a woman sings on stage"],
                        ["A", "A", "B", "C", "D", "E"])  # fmt: skip
    split = build_mc_file(captions, "random", tmp_path / "r.tsv")
    result = score_mc_file(tmp_path / "r.tsv", scorer="blind", captions=captions).to_json()
    assert result["blind_reference"]["other captions of the video"] == 1  # only video A has another caption
    assert result["n"] == len(split.instances) == 5


FLUENT = [
    "a man is cooking in the kitchen",
    "a dog runs on the grass",
    "a woman is singing on stage",
    "two men are playing tennis",
    "a girl is riding a horse",
    "a cat is sleeping on the bed",
]


def fluent_split(path: Path) -> list[MCInstance]:
    """Per instance one fluent caption (option i % 5) among four others' words reversed (clearly not English);
    the fluent one is the positive in the first four instances and a negative in the last two."""
    instances = []
    for i, text in enumerate(FLUENT):
        endings = [" ".join(reversed(FLUENT[(i + k) % len(FLUENT)].split())) for k in range(1, 5)]
        endings.insert(i % 5, text)
        instances.append(MCInstance(f"v{i}", tuple(endings), i % 5 if i < 4 else (i + 1) % 5))
    write_mc(path, instances)
    return instances


def test_lm_scorer_picks_the_option_the_lm_finds_most_probable(tmp_path, monkeypatch):
    from tvrbench.lm.models import load_language_model, mean_logprobs
    from tvrbench.mc import score
    from tvrbench.mc.score import lm_scores

    monkeypatch.setattr(score, "sentence_model", lambda *_: pytest.fail("a split without contrast options needs no sentence model"))
    instances = fluent_split(tmp_path / "mc.tsv")
    result = score_mc_file(tmp_path / "mc.tsv", scorer="lm", lm="ngram").to_json()
    lm = load_language_model("ngram")
    oracle = np.array([mean_logprobs(lm, instance.endings) for instance in instances])
    assert oracle.argmax(axis=1).tolist() == [i % 5 for i in range(len(FLUENT))]  # the LM prefers every fluent caption
    assert lm_scores(instances, lm) == pytest.approx(oracle)
    correct, tie = oracle_outcomes(oracle, [instance.label for instance in instances])
    assert correct.tolist() == [True] * 4 + [False] * 2 and not tie.any()
    assert (result["accuracy"], result["ties"], result["n"]) == (pytest.approx(4 / 6), 0.0, 6)
    assert f"|scores:scorer=lm|lm:{lm.name}|" in result["signature"]


def test_cli_lm_scorer_names_its_lm_and_lm_needs_it(tmp_path):
    fluent_split(tmp_path / "mc.tsv")
    done = run_cli("mc", "score", "--mc", str(tmp_path / "mc.tsv"), "--scorer", "lm", "--lm", "ngram", "--json", str(tmp_path / "lm.json"))
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == {"accuracy": pytest.approx(4 / 6), "ties": 0.0, "n": 6}
    assert "|scores:scorer=lm|lm:cmu-en-us-3gram(pocketsphinx-" in json.loads((tmp_path / "lm.json").read_text())["signature"]
    np.save(tmp_path / "s.npy", np.zeros((6, 5)))
    for given in (["--scorer", "blind"], ["--scores", str(tmp_path / "s.npy")]):
        done = run_cli("mc", "score", "--mc", str(tmp_path / "mc.tsv"), *given, "--lm", "ngram", "--json", str(tmp_path / "o.json"))
        assert_clean_error(done, "--lm needs --scorer lm")
    assert not (tmp_path / "o.json").exists()


def test_contrast_plausibility_travels_with_the_mc_split(tmp_path):
    captions = read_captions(sample_path("captions.csv"))
    gender_contrasts(captions, tmp_path / "gender.jsonl", GENDER)
    saved = json.loads((tmp_path / "gender.jsonl.json").read_text())["plausibility"]
    assert saved["lm"].startswith("cmu-en-us-3gram") and saved["pairs"] > 0 and 0 <= saved["prefers_original"] <= 1
    build_mc_file(captions, "gender", tmp_path / "gender.tsv", contrast_path=tmp_path / "gender.jsonl")
    assert json.loads((tmp_path / "gender.tsv.json").read_text())["plausibility"] == saved
    build_mc_file(captions, "random", tmp_path / "random.tsv")
    assert "plausibility" not in json.loads((tmp_path / "random.tsv.json").read_text())


def test_human_tsv_imports_as_its_own_split(tmp_path):
    rows = [MCInstance("video1", ("a man fixes the bike", "a man breaks the bike", "a dog barks", "a cat sleeps", "rain falls"), 0),
            MCInstance("video2", ("kids sing", "a car drives", "kids cry loudly", "kids singing loudly", "a bird flies"), 3)]  # fmt: skip
    write_mc(tmp_path / "human.tsv", rows)
    imported = import_mc_file(tmp_path / "human.tsv", tmp_path / "verb_h.tsv", "verb-human")
    assert imported == rows == read_mc(tmp_path / "verb_h.tsv")
    sidecar = json.loads((tmp_path / "verb_h.tsv.json").read_text())
    assert [i["contrast_option"] for i in sidecar["instances"]] == [1, 2]
    assert sidecar["kind"] == "verb-human"


def run_cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "tvrbench.cli", *args], capture_output=True, text=True, cwd=ROOT)


def assert_clean_error(done: subprocess.CompletedProcess, text: str) -> None:
    assert done.returncode == 2, done.stderr
    assert text in done.stderr and "Traceback" not in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1


def test_cli_bad_input(tmp_path):
    captions = tmp_path / "c.csv"
    captions.write_text("caption_id,text,video_id\n" + "".join(f"c{i},a man number {i} walks,v{i}\n" for i in range(8)))
    records = tmp_path / "x.jsonl"
    records.write_text(json.dumps({"caption_id": "zz", "video_id": "v1", "original": "a", "contrast": "b", "kind": "gender"}) + "\n")
    out = tmp_path / "mc.tsv"
    assert_clean_error(run_cli("mc", "build", "--captions", str(captions), "--kind", "colour", "--out", str(out)), "unknown MC kind 'colour'")
    assert_clean_error(run_cli("mc", "build", "--captions", str(captions), "--kind", "gender", "--contrast", str(records), "--out", str(out)),
                       "caption ids not in")  # fmt: skip
    assert_clean_error(run_cli("mc", "build", "--captions", str(captions), "--kind", "gender", "--out", str(out)), "needs --contrast")
    bad_tsv = tmp_path / "bad.tsv"
    bad_tsv.write_text("\t".join(MC_COLUMNS) + "\nv1\ta\tb\tc\td\te\t7\n")
    assert_clean_error(run_cli("mc", "score", "--mc", str(bad_tsv), "--scorer", "blind", "--json", str(tmp_path / "o.json")),
                       "line 2: label '7'")  # fmt: skip
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bad.tsv", "c.csv", "x.jsonl"]


def test_contrast_records_with_malformed_checks_are_one_line(tmp_path):
    record = {"caption_id": "c1", "video_id": "v1", "original": "a man walks", "contrast": "a man runs", "kind": "verb"}
    records = tmp_path / "x.jsonl"
    mc = tmp_path / "mc.tsv"
    mc.write_text("\t".join(MC_COLUMNS) + "\nv1\ta man walks\ta man runs\tc\td\te\t0\n")
    for checks, problem in (({"meaning-changed": "oops"}, "filters.meaning-changed must be an object"),
                            ({"meaning-changed": {"sentence_cosine": "x"}}, "filters.meaning-changed.sentence_cosine must be a number")):  # fmt: skip
        records.write_text(json.dumps(record | {"filters": checks}) + "\n")
        done = run_cli("mc", "score", "--mc", str(mc), "--scorer", "lm", "--contrast", str(records), "--json", str(tmp_path / "o.json"))
        assert_clean_error(done, f"{records}: line 1: {problem}")


def test_score_rejects_wrong_shape(splits, tmp_path):
    folder = splits[0]
    np.save(tmp_path / "s.npy", np.zeros((3, 5)))
    with pytest.raises(InputError, match="needs \\(501, 5\\)"):
        score_mc_file(folder / "gender.tsv", scores_path=tmp_path / "s.npy")


@pytest.mark.parametrize("facts", [{"sentence_cosine": "high"}, {"sentence_cosine": True}, {"antonym": "yes"}, {"rare_original": 1.5}])
def test_a_sidecar_with_malformed_facts_is_one_clear_error(tmp_path, facts):
    write_mc(tmp_path / "s.tsv", [MCInstance("v0", ("a", "b", "c", "d", "e"), 0)])
    (tmp_path / "s.tsv.json").write_text(json.dumps({"kind": "verb", "instances": [{"caption_id": "c0", "contrast_option": 1, **facts}]}))
    with pytest.raises(InputError, match="s.tsv.json.*contrast_option .0-4 or null. and the contrast's facts"):
        score_mc_file(tmp_path / "s.tsv", scores_path=None, scorer="lm")
