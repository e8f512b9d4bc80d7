"""Benchmark: every command the README shows, as a user runs it (a fresh process), beside its floor.

Each command runs as ``python -m tvrbench ...`` in a fresh process on a warm page cache; the figure
is the median wall time of ``--repeat`` runs (the first run is kept too) and the process's peak
memory (its own max RSS, from ``os.wait4``). Three sizes (``--sizes``):

* ``sample``: the embedded sample (112 captions x 36 videos, its FIRE file);
* ``1k``: the 1,000 MSR-VTT 1k-A test captions (one video each);
* ``full``: MSR-VTT's full test size, 59,800 captions x 2,990 videos (20 each), captions generated
  as ``bench_proxies.py`` does.

At ``1k`` and ``full`` the score matrices are float32 noise with the own video raised (seeded) and
the FIRE file holds four labelled pairs per caption (one relevant). Floors and references, run in
the same way in the same run:

* ``evaluate``: a process that ``np.load``s the same ``.npy`` file and takes one ``argmax``;
  ``evaluate embeddings``: one that loads both embedding files, multiplies them and takes one ``argmax``;
* ``evaluate --fire`` and every ``fire`` command: that ``np.load`` floor for its matrices plus the FIRE
  file decoded by the fastest JSON decoder (``msgspec.json.decode``); ``fire agreement`` is also set
  against a ``json.load`` process, once with an empty FIRE cache (``(first read)``) and once with the
  file's parse kept (later reads);
* ``proxies``: the paper's per-pair loop, its own parsing included (full spaCy pipeline, NLTK's
  lemmatizer, Lesk and METEOR; the oracles of ``tests/proxies/test_proxies.py``), in a fresh process; the
  loop runs on the first rows (at most ``--reference-pairs`` pairs, a 40th as many METEOR calls), the
  parse and items on the first ``--reference-captions`` captions, each scaled to the whole input.
  Each proxies run starts with an empty parse cache (a cold first run).
* ``contrast``, ``mc``, ``publish``, ``report``: no reference (sample and 1k only: ``contrast verb``
  alone would take about half an hour at full size).

At ``full`` the caption-level proxies (a 14 GB matrix) are left out, and METEOR runs only with
``--full-meteor`` (about 6 minutes); proxies run once there, other commands ``--repeat`` times.

    .venv/bin/python benchmarks/bench_cli.py [--sizes sample,1k,full] [--repeat 3] [--only evaluate,fire]

Writes benchmarks/results/cli.json (merged by size) and the table in docs/performance.md.
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results" / "cli.json"
DOC = ROOT / "docs" / "performance.md"
SAMPLE = ROOT / "tvrbench" / "data" / "sample"
MSRVTT = Path(os.environ.get("TVRBENCH_MSRVTT", ROOT.parent / "shared" / "data" / "msrvtt" / "MSRVTT_JSFUSION_test.csv"))
if not MSRVTT.is_file():
    MSRVTT = Path("/work/shared/data/msrvtt/MSRVTT_JSFUSION_test.csv")
SIZES = ("sample", "1k", "full")
EVALUATE_METRICS = "C@1,C@5,C@10,AP,MdR"  # as measured in issue 14
FLOOR = "import sys, numpy as np\nfor path in sys.argv[1:]: np.load(path).argmax(1)"
# The fire commands' floor: the matrices as FLOOR reads them, the labels by the fastest JSON decode (docs/performance.md).
FIRE_FLOOR = (
    "import sys, msgspec, numpy as np\n*paths, fire = sys.argv[1:]\n"
    "for path in paths: np.load(path).argmax(1)\nmsgspec.json.decode(open(fire, 'rb').read())"
)
JSON_LOAD = "import json, sys\njson.load(open(sys.argv[1], encoding='utf-8'))"
EMBEDDINGS_FLOOR = "import sys, numpy as np\n(np.load(sys.argv[1]) @ np.load(sys.argv[2]).T).argmax(1)"
EMBEDDING_WIDTH = 512
TABLE_START, TABLE_END = "<!-- bench_cli table start -->", "<!-- bench_cli table end -->"
sys.path.insert(0, str(ROOT / "benchmarks"))
sys.path.insert(0, str(ROOT / "tests" / "proxies"))  # the oracles of test_proxies


def run(argv: list[str], env: dict[str, str]) -> dict:
    """One fresh process: wall seconds and peak RSS (MB); exits with its stderr if it fails."""
    with tempfile.TemporaryFile("w+") as out, tempfile.TemporaryFile("w+") as err:
        started = time.perf_counter()
        child = subprocess.Popen(argv, stdout=out, stderr=err, cwd=ROOT, env=env)
        _, status, usage = os.wait4(child.pid, 0)
        wall = time.perf_counter() - started
        out.seek(0), err.seek(0)
        stdout, stderr = out.read(), err.read()
    if os.waitstatus_to_exitcode(status) != 0:
        sys.exit(f"{' '.join(argv)} failed:\n{stderr}")
    return {"seconds": wall, "peak_rss_mb": usage.ru_maxrss / 1024, "stdout": stdout, "stderr": stderr}


def timed(argv: list[str], env: dict[str, str], repeat: int, before=None) -> dict:
    """Median and first of ``repeat`` runs; ``before`` runs ahead of each (e.g. emptying a cache)."""
    runs = []
    for _ in range(repeat):
        if before is not None:
            before()
        runs.append(run(argv, env))
    return {
        "seconds": statistics.median(r["seconds"] for r in runs),
        "first_seconds": runs[0]["seconds"],
        "runs": [round(r["seconds"], 3) for r in runs],
        "peak_rss_mb": max(r["peak_rss_mb"] for r in runs),
        "stdout": runs[-1]["stdout"],
        "stderr": runs[-1]["stderr"],
    }


# --------------------------------------------------------------------------- inputs


def write_captions(path: Path, texts: list[str], videos: list[str]) -> None:
    with open(path, "w", newline="", encoding="utf-8") as out:
        writer = csv.writer(out)
        writer.writerow(["caption_id", "text", "video_id"])
        writer.writerows([f"c{i}", text, video] for i, (text, video) in enumerate(zip(texts, videos)))


def write_fire(path: Path, texts: list[str], videos: list[str], video_ids: list[str], rng) -> None:
    """Four labelled pairs per caption, other videos at random, the first relevant."""
    others = rng.integers(0, len(video_ids), size=(len(texts), 4))
    annotations = [
        {
            "annotator_ids": [1],
            "label": "relevant" if k == 0 else "irrelevant",
            "video_id": video_ids[v],
            "query": text,
            "annotator_labels": ["relevant" if k == 0 else "irrelevant"],
            "response_ids": [i],
            "queue_ids": [i],
            "models": ["model_a"],
            "dataset": "BENCH",
        }
        for i, (text, own, row) in enumerate(zip(texts, videos, others))
        for k, v in enumerate(row)
        if video_ids[v] != own
    ]
    header = {
        "disagreements": [],
        "source_ds": "bench_cli",
        "source_data_md5": "",
        "source_annotator_map_md5": "",
        "created_ds": "2026-01-01 00:00:00",
        "email": "",
        "creator": "bench_cli.py",
        "website": "",
        "license": "CC0-1.0",
        "datasets": ["BENCH"],
    }
    path.write_text(json.dumps({"annotations": annotations, **header}), encoding="utf-8")


def write_scores(path: Path, videos: list[str], video_ids: list[str], seed: int) -> None:
    rng = np.random.default_rng(seed)
    scores = rng.standard_normal((len(videos), len(video_ids)), dtype=np.float32)
    column = {video: c for c, video in enumerate(video_ids)}
    scores[np.arange(len(videos)), [column[v] for v in videos]] += 2.0
    np.save(path, scores)


def inputs(size: str, folder: Path) -> dict[str, Path]:
    """The files of one size: captions, videos, two score matrices, FIRE labels."""
    if size == "sample":
        files = {
            "captions": SAMPLE / "captions.csv",
            "videos": SAMPLE / "videos.txt",
            "fire": SAMPLE / "fire.json",
            "scores_a": folder / "scores_strong.npy",  # beside the embeddings written next to it
            "scores_b": SAMPLE / "scores_genderblind.npy",
        }
        shutil.copyfile(SAMPLE / "scores_strong.npy", files["scores_a"])
        from tvrbench.io.captions import read_captions

        write_embeddings(files, read_captions(SAMPLE / "captions.csv").video_ids, files["videos"].read_text(encoding="utf-8").split(), seed=4)
        return files
    if size == "1k":
        from tvrbench.io.captions import read_captions

        table = read_captions(MSRVTT)
        texts, videos = table.texts, table.video_ids
    else:
        from bench_proxies import generated_captions

        texts = generated_captions(59_800)
        videos = [f"video{i // 20}" for i in range(len(texts))]
    video_ids = list(dict.fromkeys(videos))
    files = {
        "captions": folder / "captions.csv",
        "videos": folder / "videos.txt",
        "fire": folder / "fire.json",
        "scores_a": folder / "scores_a.npy",
        "scores_b": folder / "scores_b.npy",
    }
    write_captions(files["captions"], texts, videos)
    files["videos"].write_text("".join(f"{v}\n" for v in video_ids), encoding="utf-8")
    write_fire(files["fire"], texts, videos, video_ids, np.random.default_rng(1))
    write_scores(files["scores_a"], videos, video_ids, seed=2)
    write_scores(files["scores_b"], videos, video_ids, seed=3)
    write_embeddings(files, videos, video_ids, seed=4)
    return files


def write_embeddings(files: dict[str, Path], videos: list[str], video_ids: list[str], seed: int) -> None:
    """float32 caption and video embeddings (width 512, as CLIP ViT-B), each caption near its own video."""
    rng = np.random.default_rng(seed)
    video = rng.standard_normal((len(video_ids), EMBEDDING_WIDTH), dtype=np.float32)
    column = {v: c for c, v in enumerate(video_ids)}
    text = rng.standard_normal((len(videos), EMBEDDING_WIDTH), dtype=np.float32) + video[[column[v] for v in videos]]
    files["text_embeddings"], files["video_embeddings"] = files["scores_a"].with_name("text.npy"), files["scores_a"].with_name("video.npy")
    np.save(files["text_embeddings"], text)
    np.save(files["video_embeddings"], video)


# --------------------------------------------------------------------------- the paper's per-pair loops


def reference_child(proxy: str, level: str, captions: str, max_pairs: int, max_captions: int) -> dict:
    """The reference of one proxy, in this process: parse and items, then the per-pair loop on the
    first rows. Past ``max_captions`` captions the parse and items are made for the first
    ``max_captions`` only and repeated for the rest (the pair loop then costs the same per pair);
    returns the seconds of both stages and the factors that scale them to the whole input."""
    import nltk
    from nltk.translate.meteor_score import single_meteor_score
    from test_proxies import reference_iou, reference_non_stop, reference_pos, reference_synsets, reference_video_sets

    from tvrbench.io.captions import read_captions
    from tvrbench.resources import cache_dir, spacy_package_for, wordnet

    table = read_captions(captions)
    texts, owners = table.texts, table.video_ids
    videos = list(dict.fromkeys(owners))
    if proxy in ("syn", "met"):
        wn = wordnet()
        nltk.data.path.insert(0, str(cache_dir() / "nltk_data"))
    if proxy == "met":
        tokens = [t.split() for t in texts]
        members = {video: [j for j, o in enumerate(owners) if o == video] for video in videos}
        row_refs = [[i] for i in range(len(texts))] if level == "caption" else [members[v] for v in videos]
        budget = max_pairs // 40  # METEOR calls: ~0.4 ms each against ~1 us for an IoU
        calls = 0
        started = time.perf_counter()
        for refs in row_refs:  # row by row, cell by cell, until the budget is spent
            for j in range(len(texts)):
                k = [single_meteor_score(tokens[r], tokens[j], wordnet=wn) for r in refs]
                _ = 0.5 * (sum(k) / len(k) + max(k))
                calls += len(refs)
                if calls >= budget:
                    break
            if calls >= budget:
                break
        return {
            "prepare_seconds": 0.0,
            "prepare_scale": 1.0,
            "loop_seconds": time.perf_counter() - started,
            "loop_scale": sum(map(len, row_refs)) * len(texts) / calls,
        }
    import spacy

    nlp = spacy.load(spacy_package_for("en_core_web_sm"))
    prepared = texts[:max_captions]
    started = time.perf_counter()
    if proxy == "bow":
        columns = [[reference_non_stop(t, nlp.Defaults.stop_words) for t in prepared]]
    else:
        docs = [nlp(t) for t in prepared]
        tags = (("VERB", "v"), ("NOUN", "n"))
        columns = (
            [[reference_pos(d, tag) for d in docs] for tag, _ in tags]
            if proxy == "pos"
            else [[reference_synsets(t, reference_pos(d, tag), p) for t, d in zip(prepared, docs)] for tag, p in tags]
        )
    prepare_seconds = time.perf_counter() - started
    columns = [[column[i % len(prepared)] for i in range(len(texts))] for column in columns]
    row_sets = columns if level == "caption" else [reference_video_sets(column, owners)[1] for column in columns]
    n_rows = len(row_sets[0])
    rows = max(1, min(n_rows, max_pairs // len(texts)))
    started = time.perf_counter()
    for values_1, values_2 in zip(row_sets, columns):  # create_relevancy_matrix, on the first rows
        for v1 in values_1[:rows]:
            for v2 in values_2:
                reference_iou(set(v1), set(v2))
    return {
        "prepare_seconds": prepare_seconds,
        "prepare_scale": len(texts) / len(prepared),
        "loop_seconds": time.perf_counter() - started,
        "loop_scale": n_rows / rows,
    }


def reference(proxy: str, level: str, captions: Path, args, env: dict[str, str]) -> dict:
    """The reference process, timed like a command; its sampled stages scaled to the whole input."""
    argv = [
        sys.executable,
        __file__,
        "--reference-child",
        f"{proxy}:{level}:{args.reference_pairs}:{args.reference_captions}",
        "--captions",
        str(captions),
    ]
    result = run(argv, env)
    child = json.loads(result["stdout"].strip().splitlines()[-1])
    seconds = result["seconds"] + child["prepare_seconds"] * (child["prepare_scale"] - 1) + child["loop_seconds"] * (child["loop_scale"] - 1)
    return {
        "seconds": seconds,
        "peak_rss_mb": result["peak_rss_mb"],
        "process_seconds": result["seconds"],
        "extrapolated": child["prepare_scale"] > 1 or child["loop_scale"] > 1,
        **child,
    }


# --------------------------------------------------------------------------- the commands


def commands(size: str, files: dict[str, Path], out: Path, full_meteor: bool) -> list[tuple[str, list[str], object]]:
    """(name, tvrbench arguments, reference) in README order; the reference is a floor's argv, a
    proxy's (proxy, level) or None."""
    q, v, fire = str(files["captions"]), str(files["videos"]), str(files["fire"])
    a, b = str(files["scores_a"]), str(files["scores_b"])

    t, e = str(files["text_embeddings"]), str(files["video_embeddings"])

    def floor(*paths: str) -> list[str]:
        return [sys.executable, "-c", FLOOR, *paths]

    def fire_floor(*paths: str) -> list[str]:
        return [sys.executable, "-c", FIRE_FLOOR, *paths, fire]

    bootstrap = ("--sizes", "20,50,100", "--resamples", "2000") if size == "sample" else ()
    start = [sys.executable, "-c", "pass"]  # the interpreter's own start-up
    listed = ([("help", ["--help"], start), ("doctor", ["doctor"], start)] if size == "sample" else []) + [
        (
            "evaluate",
            ["evaluate", "--queries", q, "--videos", v, "--scores", a, "--json", f"{out}/eval.json", "--metrics", EVALUATE_METRICS],
            floor(a),
        ),
        (
            "evaluate embeddings",
            ["evaluate", "--queries", q, "--videos", v, "--text-embeddings", t, "--video-embeddings", e, "--json", f"{out}/eval_emb.json"]
            + ["--metrics", EVALUATE_METRICS],
            [sys.executable, "-c", EMBEDDINGS_FLOOR, t, e],
        ),
        (
            "evaluate --fire",
            ["evaluate", "--queries", q, "--videos", v, "--scores", a, "--fire", fire, "--json", f"{out}/eval_fire.json"],
            fire_floor(a),
        ),
        ("fire agreement (first read)", ["fire", "agreement", "--fire", fire, "--json", f"{out}/agreement.json"], fire_floor()),
        ("fire agreement", ["fire", "agreement", "--fire", fire, "--json", f"{out}/agreement.json"], fire_floor()),
        (
            "fire compare",
            [
                "fire",
                "compare",
                "--queries",
                q,
                "--videos",
                v,
                "--scores",
                f"a={a}",
                "--scores",
                f"b={b}",
                "--fire",
                fire,
                "--json",
                f"{out}/compare.json",
            ],
            fire_floor(a, b),
        ),
        (
            "fire bootstrap",
            ["fire", "bootstrap", "--queries", q, "--videos", v, "--scores", a, "--fire", fire, *bootstrap, "--json", f"{out}/bootstrap.json"],
            fire_floor(a),
        ),
    ]
    for level in ("caption", "video"):
        for proxy in ("bow", "pos", "syn", "met"):
            if size == "full" and (level == "caption" or (proxy == "met" and not full_meteor)):
                continue
            listed.append(
                (
                    f"proxies {proxy} {level}",
                    ["proxies", "--captions", q, "--proxy", proxy, "--level", level, "--out", f"{out}/{proxy}_{level}.npy"],
                    (proxy, level),
                )
            )
    if size != "full":
        listed += [
            ("contrast gender", ["contrast", "gender", "--captions", q, "--out", f"{out}/gender.jsonl"], None),
            ("contrast verb", ["contrast", "verb", "--captions", q, "--out", f"{out}/verb.jsonl"], None),
            (
                "mc build",
                ["mc", "build", "--captions", q, "--kind", "gender", "--contrast", f"{out}/gender.jsonl", "--out", f"{out}/gender.tsv"],
                None,
            ),
            (
                "mc score blind",
                ["mc", "score", "--mc", f"{out}/gender.tsv", "--scorer", "blind", "--captions", q, "--json", f"{out}/blind.json"],
                None,
            ),
            ("mc score lm", ["mc", "score", "--mc", f"{out}/gender.tsv", "--scorer", "lm", "--json", f"{out}/lm.json"], None),
            (
                "publish",
                [
                    "publish",
                    "--out",
                    f"{out}/dataset",
                    "--mc",
                    f"mc_gender={out}/gender.tsv",
                    "--contrast",
                    f"contrast_gender={out}/gender.jsonl",
                    "--relevance",
                    f"relevance_syn={out}/syn_video.npy",
                    "--relevance-form",
                    "top-k",
                    "--top-k",
                    "10",
                    "--fire",
                    f"qrels_fire={fire}",
                    "--queries",
                    q,
                    "--results",
                    f"results={out}/eval_fire.json",
                    "--license",
                    "cc0-1.0",
                ],
                None,
            ),
            (
                "report",
                [
                    "report",
                    "--out",
                    f"{out}/report.html",
                    "--results",
                    f"model_a={out}/eval_fire.json",
                    "--queries",
                    q,
                    "--videos",
                    v,
                    "--scores",
                    f"a={a}",
                    "--fire",
                    fire,
                    "--relevance",
                    f"{out}/syn_video.npy",
                    "--mc",
                    f"gender={out}/gender.tsv",
                ],
                None,
            ),
        ]
    return listed


def bench_size(size: str, args, env: dict[str, str], home: Path) -> dict:
    from tvrbench.io.captions import read_captions

    report: dict = {}
    with tempfile.TemporaryDirectory(prefix=f"bench_cli_{size}_") as work:
        work = Path(work)
        files = inputs(size, work)
        n_captions = len(read_captions(files["captions"]))
        n_videos = len(files["videos"].read_text(encoding="utf-8").split())
        report["shape"] = [n_captions, n_videos]
        report["matrix_mb"] = n_captions * n_videos * np.load(files["scores_a"], mmap_mode="r").dtype.itemsize / 2**20

        def cold_parses() -> None:
            shutil.rmtree(home / "parses", ignore_errors=True)

        def cold_fire() -> None:
            shutil.rmtree(home / "fire", ignore_errors=True)

        for name, arguments, ref in commands(size, files, work, args.full_meteor):
            if args.only and not any(name.startswith(prefix) for prefix in args.only.split(",")):
                continue
            is_proxy = isinstance(ref, tuple)
            repeat = 1 if (is_proxy and size == "full") else args.repeat
            before = cold_parses if is_proxy else cold_fire if name.endswith("(first read)") else None
            row = timed([sys.executable, "-m", "tvrbench", *arguments], env, repeat, before)
            row.pop("stdout")
            stderr = row.pop("stderr").strip().splitlines()
            if is_proxy and stderr:  # "wrote ...; parse 1.79 s, prepare 4.63 s, matrix 0.46 s"
                row["steps"] = stderr[-1].rpartition("; ")[2]
            if is_proxy:
                row["reference"] = reference(*ref, files["captions"], args, env)
            elif ref is not None:
                floor = timed(ref, env, args.repeat)
                floor.pop("stdout"), floor.pop("stderr")
                row["reference"] = floor
                if ref[2] in (FLOOR, FIRE_FLOOR) and len(ref) > 3 + (ref[2] == FIRE_FLOOR):  # peak memory against the matrices read
                    row["peak_rss_vs_matrices"] = row["peak_rss_mb"] / (report["matrix_mb"] * (len(ref) - 3 - (ref[2] == FIRE_FLOOR)))
                if ref[2] == EMBEDDINGS_FLOOR:
                    row["peak_rss_vs_reference"] = row["peak_rss_mb"] / floor["peak_rss_mb"]
                if name.startswith("fire agreement"):  # the reader's own goal is set against json.load
                    plain = timed([sys.executable, "-c", JSON_LOAD, str(files["fire"])], env, args.repeat)
                    row["json_load"] = {"seconds": plain["seconds"], "peak_rss_mb": plain["peak_rss_mb"]}
                    row["ratio_json_load"] = row["seconds"] / plain["seconds"]
            if "reference" in row:
                row["ratio"] = row["seconds"] / row["reference"]["seconds"]
            row["command"] = "tvrbench " + " ".join(arguments).replace(str(work), "$OUT").replace(str(SAMPLE), "$S")
            report[name] = row
            ratio = f", {row['ratio']:.2f}x the reference ({row['reference']['seconds']:.2f} s)" if "ratio" in row else ""
            if "ratio_json_load" in row:
                ratio += f", {row['ratio_json_load']:.2f}x json.load ({row['json_load']['seconds']:.2f} s)"
            steps = f" [{row['steps']}]" if "steps" in row else ""
            print(
                f"{size} {name}: {row['seconds']:.2f} s (first {row['first_seconds']:.2f} s), peak {row['peak_rss_mb']:.0f} MB{ratio}{steps}",
                flush=True,
            )
    return report


def table(results: dict) -> str:
    lines = [
        "| command | size | seconds (first run) | reference, seconds | ratio | peak RSS, MB (x the matrices read) |",
        "| --- | --- | --- | --- | --- | --- |",
    ]
    for size in SIZES:
        entry = results.get("sizes", {}).get(size)
        if not entry:
            continue
        shape = f"{size} ({entry['shape'][0]:,} x {entry['shape'][1]:,})"
        for name, row in entry.items():
            if not isinstance(row, dict):
                continue
            ref = row.get("reference")
            ref_text = "—" if ref is None else f"{ref['seconds']:.2f}{' (scaled)' if ref.get('extrapolated') else ''}"
            ratio = "—" if ref is None else f"{row['ratio']:.2f}" if row["ratio"] >= 0.01 else f"{row['ratio']:.1e}"
            memory = f"{row['peak_rss_mb']:.0f}"
            if size == "full" and "peak_rss_vs_matrices" in row:
                memory += f" ({row['peak_rss_vs_matrices']:.2f})"
            lines.append(f"| {name} | {shape} | {row['seconds']:.2f} ({row['first_seconds']:.2f}) | {ref_text} | {ratio} | {memory} |")
    return "\n".join(lines)


def write_table(results: dict) -> None:
    text = DOC.read_text(encoding="utf-8")
    start, end = text.index(TABLE_START) + len(TABLE_START), text.index(TABLE_END)
    DOC.write_text(text[:start] + "\n" + table(results) + "\n" + text[end:], encoding="utf-8")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="sample,1k", help="comma-separated: sample, 1k, full")
    parser.add_argument("--repeat", type=int, default=3, help="runs per command (median); 1 for proxies at full size")
    parser.add_argument("--only", help="comma-separated command prefixes, e.g. evaluate,proxies bow")
    parser.add_argument("--reference-pairs", type=int, default=2_000_000, help="pairs (METEOR calls for met) the reference loop runs")
    parser.add_argument(
        "--reference-captions", type=int, default=5_000, help="captions the reference parses (and runs Lesk on); more are scaled from these"
    )
    parser.add_argument("--full-meteor", action="store_true", help="also METEOR at full size (~6 minutes, and its reference)")
    parser.add_argument("--reference-child", help=argparse.SUPPRESS)
    parser.add_argument("--captions", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.reference_child:
        proxy, level, pairs, max_captions = args.reference_child.split(":")
        print(json.dumps(reference_child(proxy, level, args.captions, int(pairs), int(max_captions))))
        return
    sizes = [s.strip() for s in args.sizes.split(",") if s.strip()]
    if unknown := set(sizes) - set(SIZES):
        sys.exit(f"unknown sizes {', '.join(sorted(unknown))}; choose from {', '.join(SIZES)}")
    if sizes != ["sample"] and not MSRVTT.is_file():
        sys.exit(f"MSR-VTT sample not present: {MSRVTT}")
    from tvrbench.resources import cache_dir

    results = json.loads(RESULTS.read_text()) if RESULTS.is_file() else {}
    results["machine"] = {"python": platform.python_version(), "cpus": os.cpu_count()}
    with tempfile.TemporaryDirectory(prefix="bench_cli_home_") as home:
        home = Path(home)  # the user's prepared resources (WordNet, verb lexicon, vectors), a parse cache of its own
        for item in cache_dir().iterdir():
            if item.name != "parses" and item.is_dir():
                shutil.copytree(item, home / item.name)
        env = {**os.environ, "TVRBENCH_HOME": str(home), "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))}
        for size in sizes:
            results.setdefault("sizes", {}).setdefault(size, {}).update(bench_size(size, args, env, home))
            RESULTS.parent.mkdir(parents=True, exist_ok=True)
            RESULTS.write_text(json.dumps(results, indent=2) + "\n")
    write_table(results)
    print(f"wrote {RESULTS} and the table in {DOC}")


if __name__ == "__main__":
    main()
