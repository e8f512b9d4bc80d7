"""``tvrbench demo``: run once per session, with no network at all where the machine allows it (a
fresh network namespace, ``unshare -rn``), then its outputs are checked: the results against the
engine, every dataset config read back by ``datasets.load_dataset`` against its source file, and
the report's parts."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import yaml

from tvrbench.data import load_sample
from tvrbench.data.demo import METRICS, MODELS
from tvrbench.io.writers import written_by


def _offline_prefix() -> tuple[list[str], str]:
    """``unshare -rn`` (no network interface) when it works here; else a proxy that refuses every connection."""
    unshare = shutil.which("unshare")
    if unshare and subprocess.run([unshare, "-rn", "true"], capture_output=True).returncode == 0:
        return [unshare, "-rn"], "network namespace"
    return [], "dead proxy"


@pytest.fixture(scope="session")
def demo_out(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("demo") / "out"
    prefix, how = _offline_prefix()
    env = dict(os.environ)
    if how == "dead proxy":
        env.update({"HTTP_PROXY": "http://127.0.0.1:9", "HTTPS_PROXY": "http://127.0.0.1:9", "ALL_PROXY": "http://127.0.0.1:9", "NO_PROXY": ""})
    result = subprocess.run(
        [*prefix, sys.executable, "-m", "tvrbench", "demo", "--out", str(out)], capture_output=True, text=True, env=env, timeout=600
    )
    assert result.returncode == 0, f"demo failed offline ({how}):\n{result.stderr[-3000:]}"
    assert result.stdout == ""  # progress and commands go to stderr
    assert "$ tvrbench evaluate" in result.stderr and "$ tvrbench publish" in result.stderr
    (out.parent / "stderr.txt").write_text(result.stderr, encoding="utf-8")
    return out


def test_demo_ends_with_the_summary_the_readme_shows(demo_out):
    """The README's copy of the summary is the demo's, line for line, and its numbers are the outputs'."""
    readme = (Path(__file__).parents[1] / "README.md").read_text(encoding="utf-8")
    (block,) = [block for block in readme.split("```text\n")[1:] if "C@1 with FIRE" in block]
    shown = [line.rstrip() for line in block.split("```")[0].splitlines()]
    printed = [line.rstrip() for line in (demo_out.parent / "stderr.txt").read_text(encoding="utf-8").splitlines()]
    start = printed.index(shown[0])
    assert printed[start : start + len(shown)] == shown
    assert printed[start + len(shown)].startswith("done in") and str(demo_out / "results.json") in printed[start + len(shown)]
    strong = json.loads((demo_out / "evaluation" / "strong.json").read_text())
    assert f"│ strong      │              {strong['original']['C@1']:.3f} │" in block
    verb = json.loads((demo_out / "analyses" / "mc_blind_alone_verb.json").read_text())
    assert f"{verb['accuracy']:.3f}" in next(line for line in shown if line.startswith("│ verb"))


def test_the_console_shows_each_steps_progress_as_it_runs(demo_out):
    """Not only the step's log: the verb step (a minute) prints a progress line every few seconds, under its command."""
    printed = (demo_out.parent / "stderr.txt").read_text(encoding="utf-8")
    verb_step = printed.split("$ tvrbench contrast verb", 1)[1].split("$ tvrbench", 1)[0]
    assert "verb contrasts: " in verb_step and "/s" in verb_step


def test_results_are_the_engine_with_fire_labels_and_syn_relevance(demo_out):
    from tvrbench.evaluation import Judgments, evaluate
    from tvrbench.io.relevance import load_relevance

    results = json.loads((demo_out / "results.json").read_text())
    assert list(results["models"]) == list(MODELS) and results["signature"].startswith("tvrbench:")
    assert written_by(demo_out / "results.json") == "demo"  # a rerun of the demo replaces it, and no other command does
    sample = load_sample()
    judgments = Judgments.build(sample.captions, sample.video_ids, fire=sample.fire)
    relevance, _ = load_relevance(demo_out / "proxies" / "syn.npy", sample.relevance.shape, sample.captions, sample.video_ids)
    for model in MODELS:
        expected = evaluate(sample.scores[model], judgments, METRICS.split(","), relevance=relevance)
        reported = results["models"][model]
        assert reported["metrics"] == pytest.approx(expected.metrics, rel=0, abs=1e-12)
        assert reported["original"] == pytest.approx(expected.original.metrics, rel=0, abs=1e-12)
        assert "labels:original+fire" in reported["signature"] and "relevance:proxy" in reported["signature"]
    assert results["models"]["strong"]["metrics"]["C@1"] > results["models"]["objectonly"]["metrics"]["C@1"]


def test_dataset_folder_reads_back(demo_out):
    import datasets

    from tvrbench.evaluation.fire import fire_to_qrels
    from tvrbench.generators.records import read_contrast_records
    from tvrbench.io.mc import read_mc

    folder = demo_out / "dataset"
    card = (folder / "README.md").read_text(encoding="utf-8")
    header = yaml.safe_load(card.split("---\n")[1])
    assert header["license"] == "cc0-1.0"
    configs = [c["config_name"] for c in header["configs"]]
    assert {"relevance_syn", "qrels_fire", "results"} <= set(configs)
    sample = load_sample()
    results = json.loads((demo_out / "results.json").read_text())
    expected_rows = {
        "relevance_syn": 36 * 10,  # video-level SYN, each video's top 10 captions
        "qrels_fire": len(fire_to_qrels(sample.fire, captions=sample.captions)[0]),
        "results": sum(len(r["metrics"]) for r in results["models"].values()),
    }
    for config in configs:
        if config.startswith("mc_"):
            expected_rows[config] = len(read_mc(demo_out / "mc" / f"{config.removeprefix('mc_')}.tsv"))
        elif config.startswith("contrast_"):
            expected_rows[config] = len(read_contrast_records(demo_out / "contrast" / f"{config.removeprefix('contrast_')}.jsonl"))
    for config in configs:
        rows = datasets.load_dataset(str(folder), config, split="test", cache_dir=str(demo_out.parent / "hf-cache"))
        assert rows.num_rows == expected_rows[config], config
        assert f"| `{config}` |" in card
    assert {"mc_random", "mc_gender", "mc_verb", "contrast_gender", "contrast_verb"} <= set(configs)
    first = datasets.load_dataset(str(folder), "mc_verb", split="test", cache_dir=str(demo_out.parent / "hf-cache"))[0]
    instance = read_mc(demo_out / "mc" / "verb.tsv")[0]
    assert first == {"clip": instance.clip, **{f"ending{i}": e for i, e in enumerate(instance.endings)}, "label": instance.label}


def test_report_is_self_contained_and_complete(demo_out):
    page = (demo_out / "report.html").read_text(encoding="utf-8")
    for section in ("results", "analyses", "plots", "viewer"):
        assert f'<section id="{section}">' in page
    assert 'src="http' not in page and 'href="http' not in page and "default-src 'none'" in page
    data = json.loads(page.split('id="viewer-data">')[1].split("</script>")[0])
    assert data["models"] == list(MODELS) and data["fire"] and data["relevance_name"] == "syn"
    assert len(data["queries"]) == 112 and np.array(data["top"]["strong"]).shape == (112, 10)
    assert page.count("<img ") >= 3  # bootstrap, length and proxy-curve figures
    assert (demo_out / "plots" / "proxy_curve.png").is_file()
    assert '<section id="mc">' in page and "mc-contrast" in page


def test_the_demo_counts_the_cores_left_idle():
    """The demo gives PyTorch the cores that are idle (two threads beside a busy core took the verb step
    2.3 times longer than one): a process that keeps one core busy leaves one fewer."""
    import time

    from tvrbench.cli.demo import idle_cores

    cores = idle_cores()
    assert 0 <= cores <= (len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count())
    busy = subprocess.Popen([sys.executable, "-c", "while True: pass"])
    try:
        time.sleep(0.5)
        assert idle_cores(0.5) <= cores - 0.5
    finally:
        busy.kill()
        busy.wait()
