"""The audit of an MC split's contrasts: a giveaway word is found, no signal reads as chance, the
substitute figures against plain loops, seeds, what the figures say in words, a reference beside the
split, where the figures travel (contrast sidecar, MC sidecar, card, report), and bad input."""

from __future__ import annotations

import contextlib
import html
import io
import json
import math
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from tvrbench.data import sample_path
from tvrbench.errors import InputError
from tvrbench.generators.audit import audit_pairs, pair_reading, substitute_figures, substitute_words
from tvrbench.io.atomic import write_json
from tvrbench.io.mc import MCInstance, write_mc
from tvrbench.lm.models import load_language_model
from tvrbench.mc.audit import audit_split

ROOT = Path(__file__).resolve().parents[2]
WORDS = "man woman dog cat car boy girl horse bird child runs walks jumps sings plays cooks drives swims reads talks".split()


@pytest.fixture(scope="module")
def lm():
    return load_language_model("ngram")


def sentences(rng: np.random.Generator, n: int, length: int = 4) -> list[str]:
    return [" ".join(rng.choice(WORDS, length)) for _ in range(n)]


def write_split(path: Path, positives: list[str], contrasts: list[str], sidecar: bool = True) -> None:
    """An MC split whose contrast sits at a seeded option, with the sidecar tvrbench writes naming it."""
    rng = np.random.default_rng(7)
    instances, options = [], []
    for number, (positive, contrast) in enumerate(zip(positives, contrasts)):
        label, option = rng.choice(5, 2, replace=False)
        endings = [f"filler {number} {k}" for k in range(5)]
        endings[label], endings[option] = positive, contrast
        instances.append(MCInstance(f"v{number}", tuple(endings), int(label)))
        options.append(int(option))
    write_mc(path, instances)
    if sidecar:
        entries = [{"caption_id": None, "contrast_option": option} for option in options]
        write_json(path.with_name(path.name + ".json"), {"kind": "gender", "instances": entries})


def zebra_pairs(n: int = 60) -> tuple[list[str], list[str]]:
    """Contrasts that all say "zebra" where the positive names someone else."""
    positives = sentences(np.random.default_rng(1), n)
    return positives, [f"zebra {p.split(' ', 1)[1]}" for p in positives]


def test_a_giveaway_word_is_found(tmp_path):
    positives, contrasts = zebra_pairs()
    write_split(tmp_path / "zebra.tsv", positives, contrasts)
    result = audit_split(tmp_path / "zebra.tsv", lm="ngram", scorers=("lm",))
    (split,) = result.to_json()["splits"].values()
    hypothesis = split["pairs"]["hypothesis_only"]
    assert hypothesis["accuracy"] >= 0.95 and hypothesis["folds"] == 5
    assert hypothesis["giveaways"]["contrast"][0]["word"] == "zebra"
    assert all(entry["weight"] > 0 for entry in hypothesis["giveaways"]["contrast"])
    assert all(entry["weight"] < 0 for entry in hypothesis["giveaways"]["positive"]) and len(hypothesis["giveaways"]["positive"]) <= 10
    assert split["pairs"]["substitutes"]["top1"] == "zebra" and split["instances"] == split["pairs"]["pairs"] == 60
    assert set(split["scorers"]) == {"lm"} and 0 <= split["scorers"]["lm"]["accuracy"] <= 1
    assert result.rows[2] == ["hypothesis-only accuracy (chance 50 %)", f"{100 * hypothesis['accuracy']:.1f} %"]
    assert result.parts[0].rows[0][1].startswith("zebra +")
    reading = f"zebra.tsv: The wording gives the contrast away: a bag-of-words model finds it in {100 * hypothesis['accuracy']:.1f} % of 60 pairs"
    assert result.reading[0].startswith(reading) and result.parts[-1].notes == tuple(result.reading) and len(result.reading) == 3


def figures(accuracy=0.5, pairs=1000, words=1000, top1=0.01, top10=0.1, prefers=0.5) -> dict:
    """A pair audit's JSON with the figures its reading reads."""
    return {
        "pairs": pairs,
        "hypothesis_only": None if accuracy is None else {"accuracy": accuracy},
        "substitutes": {"tokens": words, "top1": "walking" if words else None, "top1_share": top1, "top10_share": top10},
        "lm_preference": {"pairs": pairs, "prefers_original": prefers},
    }


@pytest.mark.parametrize(
    "given, wording, substitutes, fluency",
    [
        (
            {"accuracy": 0.725},
            "The wording gives the contrast away: a bag-of-words model finds it in 72.5 % of 1,000 pairs, chance 50 %.",
            "are varied",
            "as fluently as real captions",
        ),
        ({"accuracy": 0.53}, "No clear sign that the wording gives the contrast away", "are varied", "within the 45–60 % of Park et al.'s own sets"),
        (
            {"accuracy": 0.6, "pairs": 24, "words": 24, "prefers": 0.7},
            "(chance alone reaches 70.4 % at 24 pairs)",
            "Too few substitute words (24)",
            "may read less fluently",
        ),
        (
            {"top1": 0.39, "top10": 0.95, "prefers": 0.8},
            "No clear sign",
            "A few substitute words do much of the work",
            "less fluently than real captions, so fluency helps",
        ),
        (
            {"top10": 0.33, "prefers": 0.3},
            "No clear sign",
            "A few substitute words",
            "more fluently than real captions, so a model that favours fluent text picks them",
        ),
        (
            {"accuracy": None, "pairs": 9, "words": 0},
            "Too few pairs (9) for the bag-of-words test",
            "No contrast brings in a word of its own",
            "as fluently",
        ),
    ],
)
def test_the_reading_says_what_the_figures_mean(given, wording, substitutes, fluency):
    """One sentence each: the wording against chance (two standard errors of a coin over the pairs), the
    substitute words against the targets (commonest at most 3 %, ten commonest at most 20 %), fluency
    against the 45–60 % band of Park et al.'s sets."""
    said = pair_reading(figures(**given))
    assert len(said) == 3 and wording in said[0] and substitutes in said[1] and fluency in said[2], said


def test_contrasts_from_the_positives_word_distribution_read_as_chance(lm):
    """Each contrast swaps one word of its positive for another drawn from the same words: nothing to learn."""
    rng = np.random.default_rng(3)
    positives = sentences(rng, 2000)
    contrasts = []
    for positive in positives:
        words = positive.split()
        words[rng.integers(len(words))] = rng.choice(WORDS)
        contrasts.append(" ".join(words))
    accuracy = audit_pairs(positives, contrasts, lm).hypothesis_only["accuracy"]
    assert abs(accuracy - 0.5) < 0.04


# Hand-made pairs and, word for word, what each contrast brings in (lower-cased; deletions bring nothing).
HAND_MADE = [
    ("a man is cooking", "a woman is cooking", ["woman"]),
    ("a dog runs in the park", "a dog sleeps in the big park", ["sleeps", "big"]),
    ("two kids sing", "two kids", []),
    ("A Man Talks", "a woman talks loudly", ["woman", "loudly"]),
    ("a girl rides a horse", "a boy rides a woman", ["boy", "woman"]),
    ("people dance", "alpha beta gamma delta epsilon zeta eta theta iota kappa", "alpha beta gamma delta epsilon zeta eta theta iota kappa".split()),
]


def test_substitute_figures_match_plain_loops():
    positives, contrasts, expected = zip(*HAND_MADE)
    words = substitute_words(positives, contrasts)
    assert words == [word for brought in expected for word in brought]
    counts = {}
    for word in words:
        counts[word] = counts.get(word, 0) + 1
    ranked = sorted(counts.items(), key=lambda item: (-item[1], item[0]))
    entropy = 0.0
    for _, count in ranked:
        entropy -= count / len(words) * math.log2(count / len(words))
    top10 = 0
    for _, count in ranked[:10]:
        top10 += count
    figures = substitute_figures(words)
    assert figures == {
        "tokens": 17, "distinct": 15, "entropy_bits": pytest.approx(entropy), "top10_share": pytest.approx(top10 / 17),
        "top1_share": pytest.approx(3 / 17), "top1": "woman", "top10": [{"word": w, "count": c} for w, c in ranked[:10]],
    }  # fmt: skip
    assert top10 == 12 and figures["top10"][1] == {"word": "alpha", "count": 1}  # ties by word
    assert substitute_figures([])["entropy_bits"] is None and substitute_figures(["x"] * 4)["entropy_bits"] == 0.0


def test_the_same_seed_gives_the_same_audit(tmp_path):
    rng = np.random.default_rng(5)
    positives = sentences(rng, 40)
    write_split(tmp_path / "s.tsv", positives, [p.replace("man", "woman", 1) if "man" in p else p + " slowly" for p in positives])
    first, again, other = (audit_split(tmp_path / "s.tsv", lm="ngram", seed=seed, scorers=("lm",)) for seed in (0, 0, 1))
    assert first.to_json() == again.to_json()
    assert "|analysis:mc-audit|mc:" in str(first.signature) and "|seed:0|folds:5|lm:cmu-en-us-3gram" in str(first.signature)
    assert "|seed:1|" in str(other.signature) and "scikit-learn:" in str(other.signature)


def test_too_few_pairs_leave_the_hypothesis_only_figure_empty(lm):
    positives, contrasts = zebra_pairs(9)
    audit = audit_pairs(positives, contrasts, lm).to_json()
    assert audit["hypothesis_only"] is None and audit["pairs"] == 9 and audit["substitutes"]["top1"] == "zebra"
    assert audit["lm_preference"]["pairs"] == 9


def test_the_figures_travel_from_the_contrast_sidecar_to_the_card_and_report(tmp_path):
    """Contrast run → its sidecar → the MC split's sidecar → the dataset card and the report's MC section."""
    from tvrbench.cli.report import mc_items
    from tvrbench.generators import gender_contrasts
    from tvrbench.generators.config import GenderConfig
    from tvrbench.io.captions import read_captions
    from tvrbench.mc.build import build_mc_file
    from tvrbench.publish import mc_artifact, write_dataset
    from tvrbench.report import ReportContent, render_report

    captions = read_captions(sample_path("captions.csv"))
    records, run = gender_contrasts(captions, tmp_path / "gender.jsonl", GenderConfig(lm="ngram"))
    sidecar = run.to_json()
    audit = sidecar["audit"]
    assert audit["pairs"] == len(records) >= 10 and audit["hypothesis_only"]["accuracy"] is not None
    assert audit["lm_preference"] == sidecar["plausibility"]
    assert json.loads((tmp_path / "gender.jsonl.json").read_text())["audit"] == audit
    build_mc_file(captions, "gender", tmp_path / "gender.tsv", contrast_path=tmp_path / "gender.jsonl")
    assert json.loads((tmp_path / "gender.tsv.json").read_text())["audit"] == audit
    accuracy = f"{100 * audit['hypothesis_only']['accuracy']:.1f} %"

    write_dataset(tmp_path / "hf", [mc_artifact(tmp_path / "gender.tsv")])
    card = (tmp_path / "hf" / "README.md").read_text(encoding="utf-8")
    section = card.split("## Text-only audit of the contrasts")[1].split("## Configs")[0]
    assert f"| `mc_gender` | mc | {accuracy} | {audit['substitutes']['entropy_bits']:.2f} | {audit['substitutes']['distinct']} |" in section
    config = card.split("### `mc_gender` (mc)")[1]  # the config's own audit: a small table and what it says, not a line of raw JSON
    assert "- audit:" not in config and "\n| figure | value |\n| --- | ---: |\n| pairs (contrast, positive) |" in config
    assert f"| hypothesis-only accuracy (chance 50 %) | {accuracy} |" in config and " ".join(pair_reading(audit)) in config
    page = render_report(ReportContent(mc={"gender": mc_items(tmp_path / "gender.tsv")}))
    split_pairs = sum(entry["contrast_option"] is not None for entry in json.loads((tmp_path / "gender.tsv.json").read_text())["instances"])
    whose = f"its contrast set ({audit['pairs']} pairs; this split holds {split_pairs} of them)"  # one caption of each video
    assert f"Text-only audit of {whose}: hypothesis-only accuracy (chance 50 %) {accuracy};" in page
    assert html.escape(" ".join(pair_reading(audit))) in page  # and what the figures say

    small = tmp_path / "small.csv"
    small.write_text("caption_id,text,video_id\n" + "".join(f"c{i},a man number {i} walks,v{i}\n" for i in range(4)))
    _, run = gender_contrasts(read_captions(small), tmp_path / "small.jsonl", GenderConfig(lm="ngram"))
    sidecar = run.to_json()
    assert sidecar["audit"]["pairs"] == 4 and sidecar["audit"]["hypothesis_only"] is None  # too few for 5 folds: left out, not failed


def test_a_malformed_audit_in_a_sidecar_is_refused(tmp_path):
    from tvrbench.io.sidecars import read_sidecar

    write_json(tmp_path / "x.tsv.json", {"audit": {"pairs": 3, "substitutes": "many"}})
    with pytest.raises(InputError, match="field 'audit' is not what tvrbench contrast writes"):
        read_sidecar(tmp_path / "x.tsv")


def run_cli(*args) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "tvrbench.cli", *map(str, args)], capture_output=True, text=True, cwd=ROOT)


def test_cli_audits_a_split_beside_a_reference(tmp_path):
    """With the next, the tests that load the sentence model (the blind scorer)."""
    write_split(tmp_path / "zebra.tsv", *zebra_pairs(20))
    rng = np.random.default_rng(9)
    positives = sentences(rng, 20)
    write_split(tmp_path / "human.tsv", positives, [" ".join(rng.permutation(p.split())) for p in positives])
    done = run_cli(
        "mc", "audit", "--mc", tmp_path / "zebra.tsv", "--reference", tmp_path / "human.tsv", "--json", tmp_path / "audit.json", "--lm", "ngram"
    )
    assert done.returncode == 0, done.stderr
    header = next(line for line in done.stdout.splitlines() if "figure" in line)
    assert header.index("zebra.tsv") < header.index("human.tsv")
    assert any(line.startswith("│ blind scorer accuracy") for line in done.stdout.splitlines())
    reading = done.stdout.split("\nReading\n")[1]  # it ends with what the figures say, for each split
    assert reading.startswith("zebra.tsv: The wording gives the contrast away") and "human.tsv: " in reading and "┃" not in reading
    saved = json.loads((tmp_path / "audit.json").read_text())
    assert list(saved["splits"]) == ["zebra.tsv", "human.tsv"]
    assert all(set(split["scorers"]) == {"blind", "lm"} for split in saved["splits"].values())
    assert saved["splits"]["zebra.tsv"]["pairs"]["substitutes"]["top1"] == "zebra"
    assert saved["splits"]["human.tsv"]["pairs"]["substitutes"]["tokens"] <= 4 * 20
    assert "|mc:" in saved["signature"] and "|reference:" in saved["signature"] and "|reference_sidecar:" in saved["signature"]


def test_the_report_states_a_splits_lm_preference_once(tmp_path):
    """Issue 38: above a split's items the report gave its contrast file's LM preference (every record, 47
    pairs on the sample) and its audit table the split's (one caption a video, 23 pairs): one figure, two
    values. Given the split's mc audit, every place the page states it shows the audit's one value."""
    from tvrbench.cli import run

    captions = str(sample_path("captions.csv"))
    out = {name: str(tmp_path / name) for name in ("gender.jsonl", "gender.tsv", "audit.json", "report.html")}
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        assert run(["contrast", "gender", "--captions", captions, "--out", out["gender.jsonl"], "--lm", "ngram"]) == 0
        assert run(["mc", "build", "--captions", captions, "--kind", "gender", "--contrast", out["gender.jsonl"], "--out", out["gender.tsv"]]) == 0
        assert run(["mc", "audit", "--mc", out["gender.tsv"], "--lm", "ngram", "--json", out["audit.json"]]) == 0
        assert run(["report", "--out", out["report.html"], "--mc", f"gender={out['gender.tsv']}", "--analysis", f"audit={out['audit.json']}"]) == 0
    text = html.unescape(re.sub(r"<[^>]+>", " ", Path(out["report.html"]).read_text(encoding="utf-8")))
    stated = re.findall(r"prefers the (?:original|positive)\s+(?:in\s+)?([\d.]+) %", text)
    audit = json.loads(Path(out["audit.json"]).read_text())["splits"]["gender.tsv"]["pairs"]
    value = f"{100 * audit['lm_preference']['prefers_original']:.1f}"
    assert len(stated) == 5 and set(stated) == {value}  # the table and its reading, three above the items
    contrast_set = json.loads((tmp_path / "gender.jsonl.json").read_text())["audit"]
    assert f"of {audit['pairs']} pairs" in text.split("This split's contrasts:")[1] and audit["pairs"] < contrast_set["pairs"]


def assert_clean_error(done: subprocess.CompletedProcess, *texts: str) -> None:
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr and len(done.stderr.strip().splitlines()) == 1
    assert all(text in done.stderr for text in texts), done.stderr


def test_cli_bad_input(tmp_path):
    good = tmp_path / "good.tsv"
    write_split(good, *zebra_pairs(12))
    bare = tmp_path / "bare.tsv"
    write_split(bare, *zebra_pairs(12), sidecar=False)
    random = tmp_path / "random.tsv"
    write_split(random, *zebra_pairs(12))
    write_json(tmp_path / "random.tsv.json", {"kind": "random", "instances": [{"caption_id": None, "contrast_option": None}] * 12})
    small = tmp_path / "small.tsv"
    write_split(small, *zebra_pairs(9))
    out = tmp_path / "o.json"
    assert_clean_error(run_cli("mc", "audit", "--mc", bare, "--json", out), str(bare), "no contrast option known", "no sidecar bare.tsv.json")
    assert_clean_error(run_cli("mc", "audit", "--mc", random, "--json", out), str(random), "no contrast option known", "names none")
    captions = sample_path("captions.csv")
    assert_clean_error(run_cli("mc", "audit", "--mc", good, "--reference", captions, "--json", out), str(captions), "header must be")
    assert_clean_error(run_cli("mc", "audit", "--mc", small, "--json", out), str(small), "9 instance(s) with a contrast option", "at least 10")
    assert not out.exists()
