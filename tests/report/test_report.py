"""``report.html``: the viewer's data against plain loops, the page's parts, and the page itself in a
real headless Chromium (no console errors, no network request, tables, a working query viewer).

The browser test keeps a screenshot in ``tests/artifacts/report.png``.
"""

from __future__ import annotations

import html
import json
import re
import shutil
from pathlib import Path

import numpy as np
import pytest

from tvrbench.data import load_sample, sample_path
from tvrbench.evaluation import Judgments
from tvrbench.io.atomic import write_json
from tvrbench.io.mc import MCInstance, write_mc
from tvrbench.report import ReportContent, render_report
from tvrbench.report.html import highlight_edit, json_block
from tvrbench.report.viewer import viewer_payload

ARTIFACTS = Path(__file__).resolve().parents[1] / "artifacts"  # tests/artifacts, as .gitignore and docs/publish.md name it
CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


@pytest.fixture(scope="module")
def sample():
    return load_sample()


def test_viewer_payload_matches_loops(sample):
    judgments = Judgments.build(sample.captions, sample.video_ids, fire=sample.fire)
    scores = {name: sample.scores[name] for name in ("strong", "objectonly")}
    payload = viewer_payload(sample.captions, sample.video_ids, scores, judgments, sample.relevance, "coverage", k=5)
    positive, irrelevant, judged, original = (m.toarray() for m in (judgments.positive, judgments.irrelevant, judgments.judged, judgments.original))
    for model, matrix in scores.items():
        for q in range(len(sample.captions)):
            order = sorted(range(len(sample.video_ids)), key=lambda v: (-matrix[q, v], v))[:5]
            assert payload["top"][model][q] == order
            assert payload["score"][model][q] == [round(float(matrix[q, v]), 4) for v in order]
            assert payload["relevance"][model][q] == [round(float(sample.relevance[q, v]), 3) for v in order]
            expected = []
            for v in order:
                if positive[q, v] and not original[q, v]:
                    expected.append(1)
                elif irrelevant[q, v]:
                    expected.append(0)
                elif judged[q, v] and not original[q, v]:
                    expected.append(-1)
                else:
                    expected.append(None)
            assert payload["label"][model][q] == expected
    assert [len(p) for p in payload["fire_positives"]] == (positive & ~original).sum(axis=1).tolist()
    assert sum(len(p) for p in payload["fire_positives"]) > 0
    assert payload["queries"][0] == {"id": "cap000", "text": "a man is cooking", "video": 0}


def test_tables_highlight_and_escaping():
    table = json_block({"SAMPLE": {"pairs": 3, "alpha": 0.5, "by_count": {"2": {"pairs": 1}}}})
    assert "<th>pairs</th>" in table and '<td class="num">0.5000</td>' in table and "SAMPLE › by_count" in table
    assert json_block([{"a": 1, "b": "x"}]).count("<tr>") == 2
    assert highlight_edit("a man is cooking", "a woman is cooking") == "a <mark>woman</mark> is cooking"
    hostile = "</script><script>alert(1)</script>"
    from tvrbench.io.captions import Captions

    captions = Captions(["c1"], [hostile], ["v1"], "memory")
    page = render_report(ReportContent(title=hostile, viewer=viewer_payload(captions, ["v1"], {"m": np.ones((1, 1))})))
    assert hostile not in page  # neither the title nor the embedded data can close the script element
    data = page.split('id="viewer-data">')[1].split("</script>")[0]
    assert json.loads(data)["queries"][0]["text"] == hostile


def test_mc_split_shows_its_contrasts_plausibility(tmp_path, sample):
    """From a contrast sidecar through the MC split built from it (and its sidecar) into the report's MC section."""
    from tvrbench.cli.report import mc_items
    from tvrbench.mc.build import build_mc_file

    record = {"caption_id": "cap000", "video_id": "video01", "original": "a man is cooking", "contrast": "a woman is cooking", "kind": "gender"}
    (tmp_path / "gender.jsonl").write_text(json.dumps(record) + "\n", encoding="utf-8")
    write_json(
        tmp_path / "gender.jsonl.json",
        {"plausibility": {"lm": "some-3gram", "pairs": 784, "prefers_original": 0.48, "median_gap_nats_per_token": 0.0123}},
    )
    build_mc_file(sample.captions, "gender", tmp_path / "gender.tsv", contrast_path=tmp_path / "gender.jsonl")
    build_mc_file(sample.captions, "random", tmp_path / "random.tsv")
    page = render_report(ReportContent(mc={"gender": mc_items(tmp_path / "gender.tsv"), "random": mc_items(tmp_path / "random.tsv")}))
    gender, random = page.split("<h3>gender")[1].split("<h3>random")
    assert "LM prefers the original in 48.0 % of 784 pairs, median gap 0.012 nats/token (language model some-3gram)" in gender
    assert "prefers the original" not in random


@pytest.fixture(scope="module")
def report_page(tmp_path_factory) -> Path:
    """A report from outputs of ordinary commands (evaluate, fire, an MC split), as a user would build it."""
    from tvrbench.cli import main

    out = tmp_path_factory.mktemp("report")
    queries = ["--queries", str(sample_path("captions.csv")), "--videos", str(sample_path("videos.txt"))]
    fire = ["--fire", str(sample_path("fire.json"))]
    for args in (
        ["evaluate", *queries, "--scores", str(sample_path("scores_strong.npy")), *fire, "--json", str(out / "strong.json")],
        ["fire", "agreement", *fire, "--json", str(out / "agreement.json")],
        [
            "fire",
            "ranks",
            *queries,
            "--scores",
            str(sample_path("scores_objectonly.npy")),
            *fire,
            "--json",
            str(out / "ranks.json"),
            "--plots",
            str(out / "plots"),
        ],
    ):
        try:
            main(args)
        except SystemExit as stop:
            assert stop.code in (0, None)
    write_mc(
        out / "gender.tsv",
        [
            MCInstance("video01", ("a dog runs", "a man is cooking", "a car drives", "a woman is cooking", "someone sings"), 1),
            MCInstance("video02", ("she stirs soup", "x y", "he stirs soup", "z", "w"), 0),
        ],
    )
    write_json(
        out / "gender.tsv.json",
        {
            "instances": [{"caption_id": "cap000", "contrast_option": 3}, {"caption_id": "cap005", "contrast_option": 2}],
            "plausibility": {"lm": "some-3gram", "pairs": 2, "prefers_original": 0.5, "median_gap_nats_per_token": -0.25},
        },
    )
    page = out / "report.html"
    try:
        main(
            [
                "report",
                "--out",
                str(page),
                "--results",
                f"strong={out / 'strong.json'}",
                "--analysis",
                f"agreement={out / 'agreement.json'}",
                "--plots",
                str(out / "plots"),
                *queries,
                "--scores",
                str(sample_path("scores_strong.npy")),
                "--scores",
                str(sample_path("scores_genderblind.npy")),
                *fire,
                "--relevance",
                str(sample_path("relevance.npy")),
                "--mc",
                f"gender={out / 'gender.tsv'}",
            ]
        )
    except SystemExit as stop:
        assert stop.code in (0, None)
    return page


def test_report_cli_bad_input_is_one_line(tmp_path, capfd):
    from tvrbench.cli import main

    with pytest.raises(SystemExit) as stop:
        main(["report", "--out", str(tmp_path / "r.html"), "--scores", str(sample_path("scores_strong.npy"))])
    assert stop.value.code == 2
    assert capfd.readouterr().err.strip() == "tvrbench: error: --scores: the viewer needs --queries and --videos too"
    (tmp_path / "odd.json").write_text('{"rows": [1]}', encoding="utf-8")
    with pytest.raises(SystemExit) as stop:
        main(["report", "--out", str(tmp_path / "r.html"), "--results", str(tmp_path / "odd.json")])
    assert stop.value.code == 2
    assert capfd.readouterr().err.strip().startswith(f"tvrbench: error: {tmp_path / 'odd.json'}: expected the JSON of")
    assert not (tmp_path / "r.html").exists()


def test_report_in_headless_chromium(report_page):
    playwright = pytest.importorskip("playwright.sync_api", reason="the playwright package is not installed (pip install playwright)")
    if not Path(CHROMIUM).is_file():
        pytest.skip("Chromium is not installed (Debian package 'chromium'; bash scripts/setup.sh --test installs it)")
    console, requests, errors = [], [], []
    with playwright.sync_playwright() as driver:
        browser = driver.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            page = browser.new_page(viewport={"width": 1280, "height": 1600})
            page.on("console", lambda message: console.append((message.type, message.text)))
            page.on("pageerror", lambda error: errors.append(str(error)))
            page.on("request", lambda request: requests.append(request.url))
            page.goto(report_page.as_uri(), wait_until="load")

            # The tables: results (as tvrbench evaluate prints them), the analysis, the MC items with the contrast edit marked.
            results = page.locator("#results table.analysis")
            assert results.count() == 1
            assert results.locator("caption").inner_text() == "strong: tvrbench evaluate"
            metrics = json.loads((report_page.parent / "strong.json").read_text())["metrics"]
            assert results.locator("tr").count() == 1 + len(metrics)  # header + one row per metric
            assert results.locator("tr").nth(1).inner_text() == "C@1\t1.0000 (0.9196 +0.0804)"  # A (original delta)
            assert page.locator("#analyses table").count() >= 1
            assert page.locator("#plots img").count() >= 1
            assert page.locator("td.mc-contrast mark").first.inner_text() == "woman"
            assert page.locator("td.mc-positive").count() == 2
            assert "prefers the original in 50.0 % of 2 pairs, median gap -0.250 nats/token" in page.locator("#mc").inner_text()

            # The viewer: one table per model; choosing another query changes it.
            assert page.locator("#viewer-models .model-card").count() == 2
            first = page.locator("#viewer-models").inner_text()
            assert "cap000" in page.locator("#query-summary").inner_text()
            page.select_option("#query-select", "5")
            second = page.locator("#viewer-models").inner_text()
            assert second != first and "cap005" in page.locator("#query-summary").inner_text()
            rows = page.locator('#viewer-models [data-model="strong"] table tr')
            assert rows.count() == 1 + 10
            header = rows.nth(0).inner_text()
            assert all(name in header for name in ("original", "FIRE", "relevance.npy"))
            page.fill("#query-filter", "dog")
            options = page.locator("#query-select option").all_inner_texts()
            assert options and all("dog" in option for option in options)
            ARTIFACTS.mkdir(exist_ok=True)
            page.fill("#query-filter", "")
            page.select_option("#query-select", "5")
            page.screenshot(path=str(ARTIFACTS / "report.png"), full_page=True)
        finally:
            browser.close()
    assert errors == []
    assert [message for message in console if message[0] in ("error", "warning")] == []
    assert requests and all(url == report_page.as_uri() or url.startswith("data:") for url in requests), requests
    assert (ARTIFACTS / "report.png").stat().st_size > 10_000


@pytest.fixture(scope="module")
def analyses_page(tmp_path_factory) -> Path:
    """A report of every FIRE analysis's JSON, as ``tvrbench fire ... --json`` wrote them."""
    from tvrbench.cli import main

    out = tmp_path_factory.mktemp("analyses")
    queries = ["--queries", str(sample_path("captions.csv")), "--videos", str(sample_path("videos.txt"))]
    fire = ["--fire", str(sample_path("fire.json"))]
    pair = ["--scores", f"strong={sample_path('scores_strong.npy')}", "--scores", f"objectonly={sample_path('scores_objectonly.npy')}"]
    commands = {
        "agreement": ["agreement", *fire],
        "compare": ["compare", *queries, *pair, *fire],
        "overlap": ["overlap", *queries, *pair],
        "pooling": ["pooling", *queries, *pair, *fire],
        "bootstrap": ["bootstrap", *queries, "--scores", str(sample_path("scores_strong.npy")), *fire, "--sizes", "20,50", "--resamples", "200"],
        "paired": ["paired", *queries, *pair, *fire, "--resamples", "200"],
        "length": ["length", *queries, *pair, *fire],
        "ranks": ["ranks", *queries, "--scores", str(sample_path("scores_strong.npy")), *fire],
        "overlap-train": ["overlap-train", *queries, "--train", str(sample_path("captions.csv")), *pair, *fire],
        "queue": [
            "queue",
            *queries,
            "--scores",
            str(sample_path("scores_strong.npy")),
            *fire,
            "--out",
            str(out / "queue.csv"),
            "--effect-size",
            "0.2",
        ],
    }
    for name, args in [*commands.items(), ("report", None)]:
        if args is None:
            args = ["report", "--out", str(out / "report.html"), *(f"--analysis={n}={out / f'{n}.json'}" for n in commands)]
        else:
            args = ["fire", *args, "--json", str(out / f"{name}.json")]
        try:
            main(args)
        except SystemExit as stop:
            assert stop.code in (0, None)
    return out / "report.html"


def test_every_fire_analysis_is_a_paper_table_in_the_report(analyses_page):
    """Each analysis is its named tables (those the CLI prints), titled by what it is (its first table's
    title, in words, not the name its file was given), with no folded lists of raw values."""
    from tvrbench.evaluation.fire.tables import analysis_tables

    page = analyses_page.read_text(encoding="utf-8")
    assert "values</summary>" not in page
    sections = page.split('<section id="analyses">')[1].split("</section>")[0].split("<h3>")[1:]
    assert len(sections) == 10
    for section in sections:
        name = section.split('<p class="signature">')[1].split(":")[0]  # the signatures name the file
        first, *rest = analysis_tables(json.loads((analyses_page.parent / f"{name}.json").read_text()))
        assert section.startswith(f"{html.escape(first.title)}</h3>") and f"<caption>{html.escape(first.title)}</caption>" not in section
        for table in rest:
            assert f"<caption>{html.escape(table.title)}</caption>" in section, name
        for table in [first, *rest]:
            assert "".join(f"<th>{html.escape(column)}</th>" for column in table.columns) in section, name
    assert "Figure 8" in page and "Table 7" in page and "fire-bootstrap" in page


def test_analyses_in_headless_chromium(analyses_page):
    playwright = pytest.importorskip("playwright.sync_api", reason="the playwright package is not installed (pip install playwright)")
    if not Path(CHROMIUM).is_file():
        pytest.skip("Chromium is not installed (Debian package 'chromium'; bash scripts/setup.sh --test installs it)")
    errors = []
    with playwright.sync_playwright() as driver:
        browser = driver.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            page = browser.new_page(viewport={"width": 1280, "height": 1600})
            page.on("pageerror", lambda error: errors.append(str(error)))
            page.goto(analyses_page.as_uri(), wait_until="load")
            tables = page.locator("#analyses table.analysis")
            assert tables.count() == 11  # ten analyses, overlap-train with Table 7 and Figure 8
            agreement = tables.first
            assert page.locator("#analyses h3").first.inner_text() == "FIRE agreement (Table 2)"
            assert agreement.locator("tr").first.inner_text().split("\t")[:3] == ["dataset", "pairs", "labels"]
            cell = agreement.locator("td.num").first
            assert cell.evaluate("element => getComputedStyle(element).textAlign") == "right"
            ARTIFACTS.mkdir(exist_ok=True)
            page.locator("#analyses").screenshot(path=str(ARTIFACTS / "report_analyses.png"))
        finally:
            browser.close()
    assert errors == []
    assert (ARTIFACTS / "report_analyses.png").stat().st_size > 10_000


def test_other_or_edited_analysis_json_is_shown_as_plain_tables():
    from tvrbench.evaluation.fire.tables import analysis_tables

    plain = {"SAMPLE": {"pairs": 3, "alpha": 0.5}}
    edited = {"model": "m", "signature": "tvrbench:0|analysis:fire-ranks"}  # counts_by_rank removed
    assert analysis_tables(plain) is None and analysis_tables(edited) is None
    page = render_report(ReportContent(analyses={"plain": plain, "edited": edited}))
    assert "<th>pairs</th>" in page and 'class="analysis"' not in page


def mc_score(digest: str, scorer: str, accuracy: float, captions: bool = False) -> dict:
    """An ``mc score`` JSON of a built-in scorer on the split of ``digest``, with an empty antonym subset."""
    subsets = {"antonym": {"accuracy": None, "ties": None, "n": 0}, "most_similar_15": {"accuracy": 0.5, "ties": 0.0, "n": 3}}
    fields = f"mc:{digest}|scores:scorer={scorer}" + ("|captions:ede479bffa6f" if captions else "")
    return {"accuracy": accuracy, "ties": 0.0, "n": 20, "picks": [0] * 20, "subsets": subsets, "signature": f"tvrbench:0.1.0|{fields}"}


def test_mc_scores_are_one_table_of_split_by_scorer_each_scorer_explained():
    """Every `mc score` JSON goes into one table, split × scorer, as the demo prints it: the split named as
    --mc named it, each scorer by what it is and explained under the table (the lm scorer too), no
    section titled by a file's key, no empty subset row (there were eight sections, the lm ones without
    a word of explanation, each with an `antonym — — 0` row)."""
    from tvrbench.mc.score import SCORER_COLUMNS
    from tvrbench.report.html import MCItems

    analyses = {
        "mc_blind_alone_verb": mc_score("e3944237e8a8", "blind", 0.4),
        "mc_lm_alone_verb": mc_score("e3944237e8a8", "lm", 0.3),
        "mc_blind_verb": mc_score("e3944237e8a8", "blind", 0.95, captions=True),
        "mc_lm_alone_gender": mc_score("8f5fd36ef674", "lm", 0.2),
    }
    page = render_report(ReportContent(analyses=analyses, mc={"verb": MCItems([], digest="e3944237e8a8")}))
    assert '<section id="analyses">' not in page and not any(name in heading for heading in re.findall("<h3>(.*?)</h3>", page) for name in analyses)
    (grid,) = re.findall(r'<table class="analysis"><caption>Multiple choice: accuracy \(5 options, chance 0.200\)</caption>(.*?)</table>', page)
    columns = ["blind, options only", "LM, options only", "blind + video's other captions"]
    assert re.findall("<th>(.*?)</th>", grid) == ["split", "instances", *map(html.escape, columns)]
    rows = [re.findall("<td[^>]*>(.*?)</td>", row) for row in re.findall("<tr>(<td.*?)</tr>", grid)]
    assert rows == [["verb", "20", "0.400", "0.300", "0.950"], ["split mc:8f5fd36ef674", "20", "—", "0.200", "—"]]
    for column in columns:
        assert f'<p class="note">{html.escape(column)}: {html.escape(SCORER_COLUMNS[column])}</p>' in page
    assert "15 % most similar to the positive" in page and "antonym" not in page


def test_mc_rows_show_each_scorers_pick_beside_the_options(tmp_path):
    from tvrbench.cli import run
    from tvrbench.io.mc import read_mc

    split, scores = tmp_path / "random.tsv", tmp_path / "scores.npy"
    assert run(["mc", "build", "--captions", str(sample_path("captions.csv")), "--kind", "random", "--out", str(split)]) == 0
    instances = read_mc(split)
    choice = np.arange(len(instances)) % 5  # the positive for some instances, another option for the rest
    np.save(scores, np.eye(5, dtype=np.float32)[choice])
    assert run(["mc", "score", "--mc", str(split), "--scores", str(scores), "--json", str(tmp_path / "scored.json")]) == 0
    assert run(["mc", "score", "--mc", str(split), "--scores", str(scores), "--json", str(tmp_path / "other.json")]) == 0
    (tmp_path / "other.json").write_text((tmp_path / "other.json").read_text().replace("|mc:", "|mc:0"))  # another split's score
    page = tmp_path / "report.html"
    args = ["report", "--out", str(page), "--mc", f"random={split}", "--analysis", f"mine={tmp_path / 'scored.json'}"]
    assert run([*args, "--analysis", f"theirs={tmp_path / 'other.json'}"]) == 0
    text = page.read_text()
    assert "<th>mine picks</th>" in text and "theirs picks" not in text
    expected = ["positive" if pick == instance.label else "other" for pick, instance in zip(choice, instances)]
    assert re.findall(r"<td[^>]*>\d: (positive|contrast|other)</td>", text) == expected


def test_a_split_without_sidecar_shows_the_contrast_mc_import_records(tmp_path):
    """One rule names the contrast of a split made elsewhere: the report marks the option that
    `mc import` writes into the sidecar (case aside, however far the closest negative is)."""
    from tvrbench.mc.build import import_mc_file
    from tvrbench.report.html import MCItems, mc_section

    instances = [
        MCInstance("clip1", ("A Man is cooking", "a man is eating", "A Man is running fast", "dogs bark", "the sea"), 0),
        MCInstance("clip2", ("cats sleep", "the sea at night", "a red car", "birds fly", "rain"), 0),
    ]
    write_mc(tmp_path / "human.tsv", instances)
    import_mc_file(tmp_path / "human.tsv", tmp_path / "imported.tsv", "verb-human")
    recorded = [entry["contrast_option"] for entry in json.loads((tmp_path / "imported.tsv.json").read_text())["instances"]]
    assert recorded == [1, 1]
    page = mc_section("human", MCItems(instances))
    rows = re.findall(r"<tr><td>clip\d</td>(.*?)</tr>", page)
    marked = [next((i for i, cell in enumerate(re.findall(r"<td[^>]*>", row)) if "mc-contrast" in cell), None) for row in rows]
    assert marked == recorded


def test_a_splits_own_audit_is_found_by_its_digest_as_split_or_reference():
    """An ``mc audit`` names its split (``mc``) and reference (``reference``) by digest, in the order of its
    columns; the report takes a split's pair figures from it, and passes over any other JSON."""
    from tvrbench.cli.report import audited_pairs

    def pairs(share: float) -> dict:
        preference = {"lm": "ngram", "pairs": 12, "prefers_original": share, "median_gap_nats_per_token": 0.1}
        return {
            "pairs": 12,
            "hypothesis_only": None,
            "substitutes": {"distinct": 3, "entropy_bits": 1.0, "top10_share": 1.0},
            "lm_preference": preference,
        }

    audit = {
        "splits": {"a.tsv": {"pairs": pairs(0.25)}, "b.tsv (reference)": {"pairs": pairs(0.75)}},
        "signature": "tvrbench:0.1.0|analysis:mc-audit|mc:aaa|mc_sidecar:s1|reference:bbb|reference_sidecar:s2|seed:0",
    }
    score = {"accuracy": 0.5, "ties": 0.0, "n": 12, "picks": [0] * 12, "signature": "tvrbench:0.1.0|mc:aaa|scorer:lm"}
    analyses = {"score": score, "audit": audit, "edited": {"splits": "?", "signature": "not one"}}
    assert audited_pairs("aaa", analyses)["lm_preference"]["prefers_original"] == 0.25
    assert audited_pairs("bbb", analyses)["lm_preference"]["prefers_original"] == 0.75
    assert audited_pairs("ccc", analyses) is None
