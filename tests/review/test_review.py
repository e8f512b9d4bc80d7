"""The blind review of contrast sets: the kit, the scoring (against peers and hand computations), the
verdicts flowing on into MC splits and the card, and bad input."""

from __future__ import annotations

import csv
import json
import shutil
from pathlib import Path

import numpy as np
import pytest

from tvrbench.cli import run
from tvrbench.data import sample_path
from tvrbench.errors import InputError
from tvrbench.evaluation.reliability import cohen_kappa, krippendorff_alpha_nominal, wilson_interval
from tvrbench.io.captions import read_captions
from tvrbench.review import score_review
from tvrbench.review.kit import make_kit, write_kit
from tvrbench.review.score import agreement

CAPTIONS = sample_path("captions.csv")
# Source names no sentence can contain, so a test of the reader's files can look for them.
FIRST, SECOND = "setqx", "setzv"


def swapped(text: str) -> str | None:
    words = text.split()
    return " ".join("woman" if w == "man" else "man" if w == "woman" else w for w in words) if {"man", "woman"} & set(words) else None


def write_contrasts(path: Path, keep=lambda index: True) -> list[dict]:
    """Gender contrasts of the sample's captions by a plain word swap, as `contrast gender` writes them."""
    captions = read_captions(CAPTIONS)
    records = [
        {"caption_id": c, "video_id": v, "original": t, "contrast": swapped(t), "kind": "gender"}
        for c, t, v in zip(captions.caption_ids, captions.texts, captions.video_ids)
        if swapped(t)
    ]
    records = [r for index, r in enumerate(records) if keep(index)]
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return records


@pytest.fixture
def kit(tmp_path):
    write_contrasts(tmp_path / "a.jsonl", lambda i: i % 2 == 0)
    write_contrasts(tmp_path / "b.jsonl", lambda i: i % 2 == 1)
    contrasts = ["--contrast", f"{FIRST}={tmp_path / 'a.jsonl'}", "--contrast", f"{SECOND}={tmp_path / 'b.jsonl'}"]
    assert run(["contrast", "review-kit", *contrasts, "--captions", str(CAPTIONS), "--per-source", "8", "--controls", "10", "--seed", "3",
                "--out", str(tmp_path / "kit")]) == 0  # fmt: skip
    return tmp_path / "kit"


def key_of(kit: Path) -> dict:
    return json.loads((kit / "key.json").read_text(encoding="utf-8"))


def fill(kit: Path, path: Path, reader: str, say_no=lambda entry: False, rows=None) -> Path:
    """A reader's verdict file: yes unless ``say_no(key entry)``; ``rows`` edits the rows first."""
    entries = key_of(kit)["sentences"]
    table = [{"number": e["number"], "verdict": "no" if say_no(e) else "yes", "reader": reader} for e in entries]
    table = rows(table) if rows else table
    with open(path, "w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, fieldnames=["number", "verdict", "reader"])
        writer.writeheader()
        writer.writerows(table)
    return path


# --------------------------------------------------------------------------- oracles


def test_wilson_interval_against_hand_computations():
    # Wilson (1927) / Newcombe (1998) table values: 0 of 10, 5 of 10 and 81 of 263.
    assert wilson_interval(0, 10) == pytest.approx((0.0, 0.2775), abs=5e-5)
    assert wilson_interval(5, 10) == pytest.approx((0.2366, 0.7634), abs=5e-5)
    assert wilson_interval(81, 263) == pytest.approx((0.2553, 0.3662), abs=5e-5)
    low, high = wilson_interval(25, 40)  # by hand: p = 0.625, z² = 3.8415
    centre = (0.625 + 3.841459 / 80) / (1 + 3.841459 / 40)
    half = 1.959964 * np.sqrt(0.625 * 0.375 / 40 + 3.841459 / 6400) / (1 + 3.841459 / 40)
    assert (low, high) == pytest.approx((centre - half, centre + half), abs=1e-6)
    assert wilson_interval(0, 0) is None


def test_kappa_matches_scikit_learn():
    metrics = pytest.importorskip("sklearn.metrics")
    rng = np.random.default_rng(0)
    for _ in range(20):
        first = rng.choice(["yes", "no", "maybe"][: rng.integers(2, 4)], size=rng.integers(5, 60))
        second = np.where(rng.random(len(first)) < 0.7, first, rng.choice(["yes", "no"], size=len(first)))
        assert cohen_kappa(first, second) == pytest.approx(metrics.cohen_kappa_score(first, second), abs=1e-12)


def test_alpha_of_readers_matches_krippendorff():
    krippendorff = pytest.importorskip("krippendorff")
    rng = np.random.default_rng(1)
    for readers in (3, 4, 5):
        truth = rng.random(40) < 0.6
        yes = np.array([np.where(rng.random(40) < 0.85, truth, ~truth) for _ in range(readers)])
        expected = krippendorff.alpha(reliability_data=yes.astype(int), level_of_measurement="nominal")
        figures = agreement(yes)
        assert figures["statistic"] == "krippendorff_alpha" and figures["value"] == pytest.approx(expected, abs=1e-12)
        counts = np.stack([yes.sum(axis=0), (~yes).sum(axis=0)], axis=1)
        assert krippendorff_alpha_nominal(counts) == pytest.approx(expected, abs=1e-12)
    two = np.array([[True, True, False, True], [True, False, False, True]])
    assert agreement(two) == {"statistic": "cohen_kappa", "value": pytest.approx(0.5), "unanimous": 0.75}


# --------------------------------------------------------------------------- the kit


def test_same_seed_same_kit_another_seed_another(tmp_path):
    write_contrasts(tmp_path / "a.jsonl")
    captions = read_captions(CAPTIONS)
    kits = [make_kit({FIRST: tmp_path / "a.jsonl"}, captions, CAPTIONS, 10, 6, seed) for seed in (0, 0, 1)]
    assert kits[0].key() == kits[1].key()
    assert [s.sentence for s in kits[0].sentences] != [s.sentence for s in kits[2].sentences]
    write_kit(kits[0], tmp_path / "k1")
    write_kit(kits[1], tmp_path / "k2")
    for name in ("key.json", "reader/sentences.csv", "reader/form.html", "reader/instructions.md"):
        assert (tmp_path / "k1" / name).read_bytes() == (tmp_path / "k2" / name).read_bytes()


def test_readers_never_see_sources_controls_or_originals(kit):
    key = key_of(kit)
    seen = "\n".join(path.read_text(encoding="utf-8") for path in (kit / "reader").iterdir()).lower()
    entries = key["sentences"]
    assert {e["source"] for e in entries} == {FIRST, SECOND, "real captions"}
    assert sum(e["role"] == "caption" for e in entries) == 10 and sum(e["source"] == FIRST for e in entries) == 8
    for hidden in (FIRST, SECOND, "real caption", "a.jsonl", "b.jsonl", "captions.csv", "contrast", "control", "cap0", "video0"):
        assert hidden not in seen, hidden
    shown = {e["sentence"] for e in entries}
    for entry in entries:
        if entry["role"] == "contrast":  # nobody sees the caption a contrast was made from
            assert entry["original"] not in shown
    rows = list(csv.DictReader(open(kit / "reader" / "sentences.csv", encoding="utf-8")))
    assert [(int(r["number"]), r["sentence"]) for r in rows] == [(e["number"], e["sentence"]) for e in entries]


def test_an_mc_split_is_reviewed_by_its_contrast_option(tmp_path):
    from tvrbench.mc.build import build_mc_file

    write_contrasts(tmp_path / "g.jsonl")
    captions = read_captions(CAPTIONS)
    split = build_mc_file(captions, "gender", tmp_path / "g.tsv", contrast_path=tmp_path / "g.jsonl")
    kit = make_kit({FIRST: tmp_path / "g.tsv"}, captions, CAPTIONS, 100, 0, 0)
    pairs = {instance.endings[option]: instance.positive for instance, option in zip(split.instances, split.contrast_options)}
    shown = {s.sentence for s in kit.sentences}
    assert shown <= set(pairs) and all(s.original == pairs[s.sentence] for s in kit.sentences)
    used = shown | {s.original for s in kit.sentences}
    # a contrast left out shares its text or its original with one shown ("a man is cooking" is both)
    assert all(contrast in used or positive in used for contrast, positive in pairs.items() if contrast not in shown)
    assert len(shown) >= len(pairs) // 2


# --------------------------------------------------------------------------- scoring, and on to the split and the card


def test_review_flows_into_the_split_audit_and_card(kit, tmp_path, capsys):
    from tvrbench.publish import contrast_artifact, mc_artifact, write_dataset

    key = key_of(kit)
    rejected = {e["number"] for e in key["sentences"] if e["source"] == FIRST}
    rejected = set(sorted(rejected)[:3])
    fill(kit, tmp_path / "r1.csv", "ann", lambda e: e["number"] in rejected)
    fill(kit, tmp_path / "r2.csv", "bo", lambda e: e["role"] == "caption" and e["number"] % 2 == 0)  # careless: rejects real captions
    assert run(["contrast", "review-score", "--kit", str(kit), "--verdicts", str(tmp_path / "r1.csv"), "--verdicts", str(tmp_path / "r2.csv"),
                "--json", str(tmp_path / "review.json")]) == 0  # fmt: skip
    review = json.loads((tmp_path / "review.json").read_text())
    assert review["sources"][FIRST]["accepted"] == 5 and review["sources"][FIRST]["sentences"] == 8
    assert review["sources"][FIRST]["interval"] == pytest.approx(list(wilson_interval(5, 8)))
    assert review["sources"][SECOND]["share"] == 1.0
    real_no = sum(e["role"] == "caption" and e["number"] % 2 == 0 for e in key["sentences"])
    assert review["care"]["bo"] == {"real_accepted": pytest.approx(1 - real_no / 10), "flagged": real_no > 2}
    assert review["care"]["ann"] == {"real_accepted": 1.0, "flagged": False}
    assert review["agreement"]["statistic"] == "cohen_kappa"
    printed = capsys.readouterr().out
    assert "62.5 %" in printed and "Cohen's κ" in printed

    # mc build --reviewed: the rejected contrasts are left out, the split carries the review.
    out = tmp_path / "g.tsv"
    assert run(["mc", "build", "--captions", str(CAPTIONS), "--kind", "gender", "--contrast", str(tmp_path / "a.jsonl"),
                "--reviewed", str(tmp_path / "review.json"), "--out", str(out)]) == 0  # fmt: skip
    assert "the 3 contrast record(s) a reader rejected were left out" in capsys.readouterr().err
    rejected_texts = {e["sentence"] for e in key["sentences"] if e["number"] in rejected}
    assert not rejected_texts & {ending for line in out.read_text().splitlines()[1:] for ending in line.split("\t")[1:6]}
    saved = json.loads((tmp_path / "g.tsv.json").read_text())["review"]
    assert saved["set"] == FIRST and saved["dropped"] == 3 and saved["share"] == 0.625 and saved["readers"] == 2
    assert "reviewed:" in json.loads((tmp_path / "g.tsv.json").read_text())["signature"]

    # The report: the review's own tables from its JSON, and the split's note beside the machine figures.
    from tvrbench.cli.report import mc_items
    from tvrbench.report.html import mc_section
    from tvrbench.report.tables import result_tables

    assert [table.title for table in result_tables(review)] == [f"Blind review: {review['question']}", "Readers' care"]
    assert "Blind review of its contrast set: 2 readers accepted 62.5 % (95 % CI 31–86 %) of 8 sampled contrasts" in mc_section("g", mc_items(out))

    # The audit's table and reading, and the card.
    from tvrbench.mc.audit import audit_reading, audit_tables

    payload = {"splits": {"g.tsv": {"instances": 1, "pairs": {}, "scorers": {}, "review": saved}}}
    assert (
        "g.tsv: 2 readers accepted 62.5 % (95 % CI 31–86 %) of 8 sampled contrasts"
        in audit_reading({"splits": {"g.tsv": {**payload["splits"]["g.tsv"], "pairs": _pairs()}}})[-1]
    )  # noqa: E501
    table = audit_tables({"splits": {"g.tsv": {**payload["splits"]["g.tsv"], "pairs": _pairs()}}})[0]
    assert ["readers accept (blind review)", "62.5 % (31–86 %, n = 8)"] in table.rows
    folder = tmp_path / "hf"
    write_dataset(folder, [mc_artifact(out), contrast_artifact(tmp_path / "a.jsonl")])
    card = (folder / "README.md").read_text(encoding="utf-8")
    assert "## Human review of the contrasts" in card
    assert "| `mc_g` | mc | 62.5 % (31–86 %, n = 8) | 2 |" in card or "62.5 % (31–86 %, n = 8)" in card
    assert "- blind review: 2 readers accepted 62.5 %" in card


def _pairs() -> dict:
    """A pair audit's JSON with no figures (the review's row and line do not depend on them)."""
    return {
        "pairs": 0,
        "hypothesis_only": None,
        "substitutes": {"tokens": 0, "distinct": 0, "entropy_bits": None, "top10_share": None, "top1": None, "top1_share": None, "top10": []},
        "lm_preference": {"pairs": 0, "prefers_original": None, "median_gap_nats_per_token": None},
    }


# --------------------------------------------------------------------------- bad input


def _error(capsys, argv: list[str]) -> str:
    capsys.readouterr()
    assert run(argv) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "Traceback" not in err
    return err


@pytest.mark.parametrize(
    "rows, message",
    [
        (lambda t: t + [{"number": 99, "verdict": "yes", "reader": "ann"}], "line {n}: number 99 is not in the kit"),
        (lambda t: t[:-2], "reader 'ann' has no verdict for 2 of"),
        (lambda t: [{**t[0], "verdict": "maybe"}, *t[1:]], "line 2: verdict 'maybe' for number 1; every verdict must be yes or no"),
        (lambda t: [{**t[0], "verdict": ""}, *t[1:]], "line 2: verdict '' for number 1"),
        (lambda t: t + [t[0]], "line {n}: reader 'ann' answers number 1 twice"),
    ],
)
def test_bad_verdict_files_are_one_line_naming_file_and_row(kit, tmp_path, capsys, rows, message):
    path = fill(kit, tmp_path / "bad.csv", "ann", rows=rows)
    n = len(path.read_text().splitlines())
    err = _error(capsys, ["contrast", "review-score", "--kit", str(kit), "--verdicts", str(path)])
    assert err.startswith(f"tvrbench: error: {path}: ") and message.format(n=n) in err


def test_a_verdict_file_of_another_kit_is_refused(kit, tmp_path, capsys):
    path = tmp_path / "other.csv"
    entries = key_of(kit)["sentences"]
    path.write_text("number,sentence,verdict\n" + "".join(f'{e["number"]},"another sentence",yes\n' for e in entries), encoding="utf-8")
    err = _error(capsys, ["contrast", "review-score", "--kit", str(kit), "--verdicts", str(path)])
    assert f"{path}: line 2: sentence 1 is not the kit's" in err


def test_a_kit_whose_inputs_changed_is_refused(kit, tmp_path, capsys):
    fill(kit, tmp_path / "r.csv", "ann")
    assert run(["contrast", "review-score", "--kit", str(kit), "--verdicts", str(tmp_path / "r.csv"), "--json", str(tmp_path / "review.json")]) == 0
    shutil.copy(tmp_path / "a.jsonl", tmp_path / "a.saved")
    with open(tmp_path / "a.jsonl", "a", encoding="utf-8") as handle:
        handle.write("\n")
    err = _error(capsys, ["contrast", "review-score", "--kit", str(kit), "--verdicts", str(tmp_path / "r.csv")])
    assert err == f"tvrbench: error: {(tmp_path / 'a.jsonl').resolve()}: has changed since the review kit {kit} was made from it; make a new kit"
    err = _error(capsys, ["mc", "build", "--captions", str(CAPTIONS), "--kind", "gender", "--contrast", str(tmp_path / "a.jsonl"),
                          "--reviewed", str(tmp_path / "review.json"), "--out", str(tmp_path / "g.tsv")])  # fmt: skip
    assert f"{tmp_path / 'a.jsonl'}: has changed since the review kit of {tmp_path / 'review.json'} was made from it" in err
    assert not (tmp_path / "g.tsv").exists()


def test_a_kit_does_not_replace_a_folder_it_did_not_make(tmp_path, capsys):
    write_contrasts(tmp_path / "a.jsonl")
    (tmp_path / "mine").mkdir()
    (tmp_path / "mine" / "notes.txt").write_text("keep me")
    argv = ["contrast", "review-kit", "--contrast", f"{FIRST}={tmp_path / 'a.jsonl'}", "--captions", str(CAPTIONS), "--out", str(tmp_path / "mine")]
    assert "no tvrbench command wrote as one; choose a new or empty folder" in _error(capsys, argv)
    kit = make_kit({FIRST: tmp_path / "a.jsonl"}, read_captions(CAPTIONS), CAPTIONS, 5, 2, 0)
    with pytest.raises(InputError, match="no tvrbench command wrote as one"):  # the Python API too, even told to overwrite
        write_kit(kit, tmp_path / "mine", overwrite=True)
    assert (tmp_path / "mine" / "notes.txt").read_text() == "keep me"
    assert run([*argv[:-1], str(tmp_path / "kit")]) == 0
    assert "holds a review kit already; --overwrite replaces it" in _error(capsys, [*argv[:-1], str(tmp_path / "kit")])
    assert run([*argv[:-1], str(tmp_path / "kit"), "--overwrite"]) == 0


# --------------------------------------------------------------------------- the form, in a browser


def test_the_form_saves_a_verdict_file_that_scores(kit, tmp_path):
    playwright = pytest.importorskip("playwright.sync_api", reason="the playwright package is not installed (pip install playwright)")
    chromium = shutil.which("chromium") or "/usr/bin/chromium"
    if not Path(chromium).is_file():
        pytest.skip("Chromium is not installed (Debian package 'chromium'; bash scripts/setup.sh --test installs it)")
    entries = key_of(kit)["sentences"]
    with playwright.sync_playwright() as driver:
        browser = driver.chromium.launch(executable_path=chromium, args=["--no-sandbox", "--disable-gpu"])
        try:
            page = browser.new_page(accept_downloads=True)
            errors = []
            page.on("pageerror", lambda error: errors.append(str(error)))
            page.goto((kit / "reader" / "form.html").as_uri())
            page.fill("#reader", "Dana")
            items = page.locator("li.item")
            assert items.count() == len(entries)
            page.click("#save")
            assert "Sentence 1 has no answer yet" in page.inner_text("#message")
            for index in range(len(entries) - 1):  # one click each
                items.nth(index).locator("button.no" if index % 3 == 0 else "button.yes").click()
            page.keyboard.press("y")  # the last, highlighted one, by key
            assert page.inner_text("#progress") == f"{len(entries)} of {len(entries)} answered"
            with page.expect_download() as download:
                page.click("#save")
            saved = tmp_path / download.value.suggested_filename
            download.value.save_as(saved)
            assert not errors
        finally:
            browser.close()
    assert saved.name == "verdicts-Dana.csv"
    rows = list(csv.DictReader(open(saved, encoding="utf-8")))
    assert [(int(r["number"]), r["sentence"], r["verdict"]) for r in rows] == [
        (e["number"], e["sentence"], "no" if i % 3 == 0 else "yes") for i, e in enumerate(entries)
    ]
    result = score_review(kit, [saved])
    assert result.figures["readers"] == ["Dana"]
    assert sum(s["accepted"] for s in result.figures["sentences"]) == sum(i % 3 != 0 for i in range(len(entries)))


def test_refine_after_review_leaves_out_what_readers_rejected_first(kit, tmp_path):
    key = key_of(kit)
    rejected = set(sorted(e["number"] for e in key["sentences"] if e["source"] == FIRST)[:2])
    fill(kit, tmp_path / "r1.csv", "ann", lambda e: e["number"] in rejected)
    assert run(["contrast", "review-score", "--kit", str(kit), "--verdicts", str(tmp_path / "r1.csv"), "--json", str(tmp_path / "review.json")]) == 0
    out = tmp_path / "refined.jsonl"
    assert run(["contrast", "refine", "--contrast", str(tmp_path / "a.jsonl"), "--reviewed", str(tmp_path / "review.json"),
                "--scorer", "lm", "--lm", "ngram", "--out", str(out)]) == 0  # fmt: skip
    sidecar = json.loads((tmp_path / "refined.jsonl.json").read_text())
    given = len((tmp_path / "a.jsonl").read_text().splitlines())
    assert sidecar["counts"]["rejected by readers"] == 2 and sidecar["refinement"]["pairs"] == given - 2
    assert sidecar["review"]["set"] == FIRST and "|reviewed:" in sidecar["signature"]
    rejected_texts = {e["sentence"] for e in key["sentences"] if e["number"] in rejected}
    assert not rejected_texts & {json.loads(line)["contrast"] for line in out.read_text().splitlines()}
