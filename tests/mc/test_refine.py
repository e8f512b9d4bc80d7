"""Adversarial refinement (tvrbench.mc.refine): the balanced subset against a brute-force search, chance
reached on a set with a known bias, determinism, the hypothesis-only gaps against the audit, and the
files and commands (contrast refine, mc build --refine, mc audit, the card) with their bad input."""

from __future__ import annotations

import itertools
import json
from pathlib import Path

import numpy as np
import pytest

from tvrbench.cli import run
from tvrbench.generators.audit import hypothesis_only, hypothesis_only_gaps
from tvrbench.generators.config import RefineConfig
from tvrbench.mc.refine import Pairs, balanced_subset, grid_cells, scorer_accuracy, scorer_gaps

NGRAM = RefineConfig(lm="ngram")  # the bundled trigram: a real language model that loads in a second


def balanced(cells: np.ndarray, subset) -> bool:
    """The contract, stated plainly: every cell holds as many of the subset as its mirror does."""
    counts: dict[tuple, int] = {}
    for index in subset:
        cell = tuple(cells[index])
        counts[cell] = counts.get(cell, 0) + 1
    return all(counts.get(tuple(-c for c in cell), 0) == count for cell, count in counts.items())


@pytest.mark.parametrize("bins", [1, 2])
@pytest.mark.parametrize("trial", range(4))
def test_the_subset_is_balanced_and_as_large_as_a_brute_force_search_finds(bins, trial):
    rng = np.random.default_rng(trial)
    gaps = np.round(rng.normal(0.4, 1.0, size=(12, 2)), 1)  # biased toward the original, some ties at 0
    gaps[rng.integers(12)] = 0.0
    cells = grid_cells(gaps, bins)
    largest = max(len(subset) for size in range(13) for subset in itertools.combinations(range(12), size) if balanced(cells, subset))
    kept = balanced_subset(gaps, bins, seed=trial)
    assert balanced(cells, kept)
    assert len(kept) == largest


def test_the_grid_cuts_each_scorer_by_sign_and_by_quantiles_of_its_size():
    gaps = np.array([[-4.0], [-1.0], [0.0], [0.5], [2.0], [3.0]])
    # Sizes 4, 1, 0.5, 2, 3 (0 is its own cell): medians split at 2; the sign gives the side.
    assert grid_cells(gaps, 2)[:, 0].tolist() == [-2, -1, 0, 1, 2, 2]
    assert grid_cells(gaps, 1)[:, 0].tolist() == [-1, -1, 0, 1, 1, 1]


def test_a_known_bias_is_brought_to_chance_for_every_scorer_and_a_correlated_third():
    rng = np.random.default_rng(7)
    truth = rng.normal(0.5, 1.0, 4000)  # a bias both scorers see, each with its own noise
    first, second, third = (truth + rng.normal(0, s, truth.size) for s in (0.5, 0.8, 0.6))
    kept = balanced_subset(np.stack([first, second], axis=1), bins=4, seed=0)
    assert scorer_accuracy(first)["accuracy"] > 0.65 and scorer_accuracy(third)["accuracy"] > 0.65
    for scorer in (first, second):
        assert scorer_accuracy(scorer[kept])["accuracy"] == 0.5
    assert abs(scorer_accuracy(third[kept])["accuracy"] - 0.5) < 0.04  # not balanced against, moved to chance with them
    assert len(kept) > 0.4 * truth.size


def test_the_draw_is_seeded():
    gaps = np.random.default_rng(1).normal(0.3, 1, size=(300, 2))
    same = balanced_subset(gaps, 3, seed=5)
    assert np.array_equal(same, balanced_subset(gaps, 3, seed=5))
    other = balanced_subset(gaps, 3, seed=6)
    assert len(other) == len(same) and not np.array_equal(other, same)


def test_accuracy_counts_a_tie_half_with_wilsons_interval():
    figures = scorer_accuracy(np.array([1.0, 0.5, -2.0, 0.0]))
    assert figures["right"] == 2 and figures["ties"] == 1 and figures["accuracy"] == 2.5 / 4
    low, high = figures["interval"]
    assert low < 0.625 < high


def test_the_hypothesis_only_gaps_are_the_audits_classifier_held_out():
    verbs, things = ("riding", "washing", "painting", "selling"), ("car", "boat", "bike", "horse", "cart")
    positives = [f"a man is {verb} a {thing}" for verb in verbs for thing in things]
    contrasts = [text.replace("a man", "a clown") if index % 3 else text.replace("is", "was") for index, text in enumerate(positives)]
    gaps, accuracy = hypothesis_only_gaps(positives, contrasts, seed=2)
    assert accuracy == hypothesis_only(positives, contrasts, seed=2)["accuracy"]
    # Every pair the classifier had evidence on (a nonzero gap) is right exactly when its gap is positive.
    assert np.mean(gaps > 0) <= accuracy <= np.mean(gaps >= 0)
    assert hypothesis_only_gaps(positives[:9], contrasts[:9]) is None

    # The refinement's gap averages cross-fittings of successive seeds; its accuracy is the first one's (mc audit's).
    pairs = Pairs(positives, contrasts, np.arange(20), 20)
    scored = scorer_gaps("hypothesis-only", pairs, RefineConfig(seed=2, repeats=3))
    mean = np.mean([hypothesis_only_gaps(positives, contrasts, seed=seed)[0] for seed in (2, 3, 4)], axis=0)
    assert np.allclose(scored.gaps, mean, atol=5e-7) and scored.accuracy["accuracy"] == accuracy
    assert scored.described == "hypothesis-only(5-fold,3x,seed=2)"


# --------------------------------------------------------------------------- files and commands


def biased_records(count: int = 120) -> list[dict]:
    """Contrasts with a giveaway: three in four bring in "purple"; the fourth takes it away (its original is purple)."""
    colours = ["red", "blue", "green", "black", "white", "yellow"]
    things = ["car", "ball", "dog", "shirt", "house", "boat", "hat", "bag"]
    records = []
    for index in range(count):
        colour, thing = colours[index % 6], things[(index // 6) % 8]
        colour, new = (colour, "purple") if index % 4 else ("purple", colour)
        original = f"a man shows a {colour} {thing} to the camera number {index}"
        records.append({"caption_id": f"c{index}", "video_id": f"video{index}", "original": original,
                        "contrast": original.replace(f"{colour} {thing}", f"{new} {thing}"), "kind": "attribute"})  # fmt: skip
    return records


def write_records(path: Path, records: list[dict]) -> Path:
    path.write_text("".join(json.dumps(record) + "\n" for record in records), encoding="utf-8")
    return path


def write_captions(path: Path, records: list[dict]) -> Path:
    """The records' originals as captions, one video each, and a few other videos for the random negatives."""
    rows = [(r["caption_id"], r["original"], r["video_id"]) for r in records] + [(f"x{i}", f"a woman is cooking dish {i}", f"o{i}") for i in range(8)]
    path.write_text("caption_id,text,video_id\n" + "".join(f"{c},{t},{v}\n" for c, t, v in rows), encoding="utf-8")
    return path


def test_contrast_refine_keeps_whole_records_and_says_what_it_did(tmp_path, capsys):
    source = write_records(tmp_path / "attr.jsonl", biased_records())
    out = tmp_path / "refined.jsonl"
    args = ["contrast", "refine", "--contrast", str(source), "--lm", "ngram", "--check", "lm:smollm2", "--out", str(out)]
    assert run(args) == 0
    shown = capsys.readouterr()
    assert "Adversarial refinement: 120 pairs in" in shown.out and "wrote" in shown.err
    kept = [json.loads(line) for line in out.read_text().splitlines()]
    given = {record["caption_id"]: {"edit": [], "filters": {}, "details": {}, **record} for record in biased_records()}
    assert all(record == given[record["caption_id"]] for record in kept)  # whole records, as the generators write them
    assert [record["caption_id"] for record in kept] == sorted((record["caption_id"] for record in kept), key=lambda c: int(c[1:]))  # file order
    sidecar = json.loads((tmp_path / "refined.jsonl.json").read_text())
    refinement = sidecar["refinement"]
    assert refinement["pairs"] == 120 and refinement["kept"] == len(kept) == sidecar["counts"]["records kept"]
    by_role = {scorer["role"]: scorer for scorer in refinement["scorers"]}
    hypothesis = next(s for s in refinement["scorers"] if s["name"].startswith("hypothesis-only"))
    assert hypothesis["before"]["accuracy"] >= 0.65  # "purple" gives most away
    assert by_role["check"]["name"].startswith("lm:causal=smollm2")
    lm = next(s for s in refinement["scorers"] if s["name"].startswith("lm:cmu"))
    assert lm["after"]["right"] == len(kept) - lm["after"]["ties"] - lm["after"]["right"]  # as many wrong as right
    assert sidecar["audit"]["pairs"] == len(kept) and sidecar["plausibility"]["pairs"] == len(kept)
    assert refinement["substitutes"]["before"]["top1"] == "purple"
    assert refinement["substitutes"]["after"]["top1_share"] < refinement["substitutes"]["before"]["top1_share"]
    assert "refine:lm:cmu-en-us-3gram" in sidecar["signature"] and "|bins:1|seed:0|" in sidecar["signature"]

    # The same settings give the same bytes; another seed another draw, named in the signature.
    again = tmp_path / "again.jsonl"
    assert run([*args[:-1], str(again)]) == 0
    assert again.read_bytes() == out.read_bytes()
    assert run([*args[:-1], str(tmp_path / "seed1.jsonl"), "--seed", "1"]) == 0
    assert "|seed:1|" in json.loads((tmp_path / "seed1.jsonl.json").read_text())["signature"]


def test_a_split_of_a_refined_file_carries_the_refinement_to_the_audit_the_report_and_the_card(tmp_path, capsys):
    from tvrbench.publish import mc_artifact, write_dataset

    records = biased_records()
    source = write_records(tmp_path / "attr.jsonl", records)
    captions = write_captions(tmp_path / "captions.csv", records)
    assert run(["contrast", "refine", "--contrast", str(source), "--lm", "ngram", "--out", str(tmp_path / "refined.jsonl")]) == 0
    split = tmp_path / "attr.tsv"
    assert (
        run(["mc", "build", "--captions", str(captions), "--kind", "attribute", "--contrast", str(tmp_path / "refined.jsonl"), "--out", str(split)])
        == 0
    )
    sidecar = json.loads((tmp_path / "attr.tsv.json").read_text())
    assert sidecar["refinement"]["kept"] == sidecar["counts"]["instances"]
    capsys.readouterr()
    assert run(["mc", "audit", "--mc", str(split), "--lm", "ngram", "--json", str(tmp_path / "audit.json")]) == 0
    printed = capsys.readouterr().out
    assert "attr.tsv: Adversarial refinement: 120 pairs in" in printed and "Adversarially refined:" in printed
    from tvrbench.cli.report import mc_items
    from tvrbench.report.html import mc_section

    assert "Adversarially refined: " in mc_section("attr", mc_items(split))
    folder = tmp_path / "dataset"
    write_dataset(folder, [mc_artifact(split)])
    text = (folder / "README.md").read_text()
    assert "## Adversarial refinement" in text and "hypothesis-only(5-fold,5x,seed=0)" in text


def test_mc_build_refine_balances_the_splits_own_pairs(tmp_path):
    from tvrbench.io.captions import read_captions
    from tvrbench.mc.build import build_mc_file

    records = biased_records()
    source = write_records(tmp_path / "attr.jsonl", records)
    table = read_captions(write_captions(tmp_path / "captions.csv", records))
    plain = build_mc_file(table, "attribute", tmp_path / "plain.tsv", contrast_path=source)
    refined = build_mc_file(table, "attribute", tmp_path / "refined.tsv", contrast_path=source, refine=NGRAM)
    assert 0 < len(refined.instances) < len(plain.instances)
    assert refined.dropped["not kept by refinement"] == len(plain.instances) - len(refined.instances)
    assert set(refined.caption_ids) <= set(plain.caption_ids)
    sidecar = json.loads((tmp_path / "refined.tsv.json").read_text())
    assert "refined:lm:cmu-en-us-3gram" in sidecar["signature"]
    assert sidecar["audit"]["pairs"] == len(refined.instances)  # the kept pairs' own audit, not the file's
    with pytest.raises(Exception, match="applies to a contrast MC"):
        build_mc_file(table, "random", tmp_path / "random.tsv", refine=NGRAM)


def test_a_set_that_cannot_be_balanced_is_one_line_and_no_file(tmp_path, capsys):
    records = biased_records(40)
    for record in records:  # every contrast adds a word: the hypothesis-only scorer is always right
        record["contrast"] = record["original"].replace("a man", "a tall man")
    source = write_records(tmp_path / "add.jsonl", records)
    out = tmp_path / "refined.jsonl"
    assert run(["contrast", "refine", "--contrast", str(source), "--lm", "ngram", "--out", str(out)]) == 2
    error = capsys.readouterr().err.strip()
    assert error.count("\n") == 0 and "add.jsonl" in error and "no balanced subset" in error and "hypothesis-only" in error
    assert not out.exists() and not (tmp_path / "refined.jsonl.json").exists()

    write_records(tmp_path / "few.jsonl", biased_records(6))
    assert run(["contrast", "refine", "--contrast", str(tmp_path / "few.jsonl"), "--lm", "ngram", "--out", str(out)]) == 2
    assert "6 pair(s) to refine: too few to balance" in capsys.readouterr().err


def test_a_users_gaps_are_read_without_pickle_and_checked(tmp_path, capsys):
    source = write_records(tmp_path / "attr.jsonl", biased_records(60))
    gaps = np.linspace(-1, 2, 60)
    np.save(tmp_path / "gaps.npy", gaps)
    out = tmp_path / "refined.jsonl"
    assert run(["contrast", "refine", "--contrast", str(source), "--scorer", str(tmp_path / "gaps.npy"), "--lm", "ngram", "--out", str(out)]) == 0
    refinement = json.loads((tmp_path / "refined.jsonl.json").read_text())["refinement"]
    assert refinement["scorers"][0]["name"].startswith("file=gaps.npy:") and refinement["scorers"][0]["after"]["accuracy"] == 0.5
    assert refinement["kept"] == 2 * int(np.sum(gaps < 0))  # every wrong pair matched by one right one

    np.save(tmp_path / "short.npy", gaps[:10])
    np.save(tmp_path / "objects.npy", np.array([{"a": 1}] * 60, dtype=object), allow_pickle=True)
    for bad, problem in (("short.npy", "one gap per contrast record (60)"), ("objects.npy", "saved without pickle")):
        assert run(["contrast", "refine", "--contrast", str(source), "--scorer", str(tmp_path / bad), "--out", str(out)]) == 2
        error = capsys.readouterr().err
        assert bad in error and problem in error
    assert run(["contrast", "refine", "--contrast", str(source), "--scorer", "vibes", "--out", str(out)]) == 2
    assert "unknown scorer 'vibes'" in capsys.readouterr().err


def test_the_help_names_the_settings_defaults(capsys):
    from tvrbench.cli.contrast_refine import refine

    defaults = RefineConfig()
    assert run(["contrast", "refine", "--help"]) == 0
    shown = " ".join(capsys.readouterr().out.replace("│", " ").split())
    assert f"[default: {' and '.join(defaults.scorers)}]" in shown and f"[default: {defaults.bins}]" in shown
    assert "adversarial refinement" in refine.__doc__
