"""The demo's script: every ``tvrbench`` command of the pipeline on the embedded sample, in order.

A step is a command line with ``{SAMPLE}`` and ``{OUT}`` placeholders; ``tvrbench demo``
(:mod:`tvrbench.cli.demo`) runs them one after the other and prints each as you would type it.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

MODELS = ("strong", "genderblind", "objectonly")
METRICS = "C@1,C@5,C@10,AP,MdR,MnR,GMR,nDCG,Judged@10"
# The MC kinds the demo builds, of tvrbench.mc.build.MC_KINDS: not "id" (LSMDC character names; the sample has none), and of
# the word-edit kinds the two the sample's captions give enough targets that cost the least (attribute and swap have one or two).
DEMO_MC_KINDS = ("random", "gender", "verb", "relation", "counting")
# Shown wherever the sample's models appear (demo summary, report).
SAMPLE_MODELS = (
    "The sample's simulated models: strong sees every facet of a video; genderblind reads man / woman as "
    "person (it confuses gender contrasts); objectonly ignores actions (it confuses verb contrasts)."
)


@dataclass(frozen=True)
class Step:
    name: str
    args: tuple[str, ...]  # with {SAMPLE} and {OUT} placeholders


def _sample(name: str) -> str:
    return "{SAMPLE}/" + name


QUERIES = ("--queries", _sample("captions.csv"), "--videos", _sample("videos.txt"))
SCORES = tuple(arg for model in MODELS for arg in ("--scores", _sample(f"scores_{model}.npy")))
FIRE = ("--fire", _sample("fire.json"))


def steps() -> list[Step]:
    """Every command of the demo, in order."""
    proxies = [
        Step(
            f"proxy-{proxy}",
            ("proxies", "--captions", _sample("captions.csv"), "--proxy", proxy, "--level", "video", "--out", f"{{OUT}}/proxies/{proxy}.npy"),
        )
        for proxy in ("bow", "syn")
    ]
    curve = [
        Step(
            "proxy-curve",
            (
                "proxy-study",
                "curve",
                "--matrix",
                "BoW={OUT}/proxies/bow.npy",
                "--matrix",
                "SYN={OUT}/proxies/syn.npy",
                "--plots",
                "{OUT}/plots",
                "--json",
                "{OUT}/analyses/proxy_curve.json",
            ),
        )
    ]
    evaluations = [
        Step(
            f"evaluate-{model}",
            (
                "evaluate",
                *QUERIES,
                "--scores",
                _sample(f"scores_{model}.npy"),
                *FIRE,
                "--relevance",
                "{OUT}/proxies/syn.npy",
                "--metrics",
                METRICS,
                "--json",
                f"{{OUT}}/evaluation/{model}.json",
                "--per-query",
                f"{{OUT}}/evaluation/{model}_per_query.csv",
            ),
        )
        for model in MODELS
    ]
    fire = [
        Step("fire-agreement", ("fire", "agreement", *FIRE, "--json", "{OUT}/analyses/agreement.json")),
        Step("fire-overlap", ("fire", "overlap", *QUERIES, *SCORES, "--json", "{OUT}/analyses/overlap.json")),
        Step("fire-pooling", ("fire", "pooling", *QUERIES, *SCORES, *FIRE, "--json", "{OUT}/analyses/pooling.json")),
        Step(
            "fire-bootstrap",
            (
                "fire",
                "bootstrap",
                *QUERIES,
                "--scores",
                _sample("scores_objectonly.npy"),
                *FIRE,
                "--sizes",
                "20,50,100",
                "--resamples",
                "2000",
                "--seed",
                "0",
                "--json",
                "{OUT}/analyses/bootstrap.json",
                "--plots",
                "{OUT}/plots",
            ),
        ),
        Step(
            "fire-paired",
            (
                "fire",
                "paired",
                *QUERIES,
                "--scores",
                _sample("scores_genderblind.npy"),
                "--scores",
                _sample("scores_objectonly.npy"),
                *FIRE,
                "--resamples",
                "2000",
                "--json",
                "{OUT}/analyses/paired.json",
            ),
        ),
        Step(
            "fire-length",
            (
                "fire",
                "length",
                *QUERIES,
                "--scores",
                _sample("scores_strong.npy"),
                "--scores",
                _sample("scores_objectonly.npy"),
                *FIRE,
                "--json",
                "{OUT}/analyses/length.json",
                "--plots",
                "{OUT}/plots",
            ),
        ),
    ]
    return [*proxies, *curve, *evaluations, *fire, *contrast_steps()]


def contrast_steps() -> list[Step]:
    """The contrast sets of every kind but random, their MC splits and the Random one, the text-only checks (blind, LM)."""
    return [
        *(
            Step(f"contrast-{kind}", ("contrast", kind, "--captions", _sample("captions.csv"), "--out", f"{{OUT}}/contrast/{kind}.jsonl"))
            for kind in DEMO_MC_KINDS
            if kind != "random"
        ),
        *(
            Step(
                f"mc-{kind}",
                (
                    "mc",
                    "build",
                    "--captions",
                    _sample("captions.csv"),
                    "--kind",
                    kind,
                    *(("--contrast", f"{{OUT}}/contrast/{kind}.jsonl") if kind != "random" else ()),
                    "--out",
                    f"{{OUT}}/mc/{kind}.tsv",
                ),
            )
            for kind in DEMO_MC_KINDS
        ),
        *(
            Step(
                f"mc-blind-{kind}",
                (
                    "mc",
                    "score",
                    "--mc",
                    f"{{OUT}}/mc/{kind}.tsv",
                    "--scorer",
                    "blind",
                    "--captions",
                    _sample("captions.csv"),
                    *(("--contrast", f"{{OUT}}/contrast/{kind}.jsonl") if kind != "random" else ()),
                    "--json",
                    f"{{OUT}}/analyses/mc_blind_{kind}.json",
                ),
            )
            for kind in DEMO_MC_KINDS
        ),
        *(  # the text-only baselines proper: the options alone, no caption of the video
            Step(
                f"mc-{scorer}-alone-{kind}",
                ("mc", "score", "--mc", f"{{OUT}}/mc/{kind}.tsv", "--scorer", scorer, "--json", f"{{OUT}}/analyses/mc_{scorer}_alone_{kind}.json"),
            )
            for scorer in ("blind", "lm")
            for kind in DEMO_MC_KINDS
        ),
    ]


def published_steps(out: Path) -> list[Step]:
    """Publishing and the report, which take whatever the steps above wrote."""
    mc = sorted((out / "mc").glob("*.tsv"))
    contrast = sorted((out / "contrast").glob("*.jsonl"))
    mc_args = tuple(arg for path in mc for arg in ("--mc", f"mc_{path.stem}={{OUT}}/mc/{path.name}"))
    contrast_args = tuple(arg for path in contrast for arg in ("--contrast", f"contrast_{path.stem}={{OUT}}/contrast/{path.name}"))
    analyses = tuple(arg for path in sorted((out / "analyses").glob("*.json")) for arg in ("--analysis", f"{path.stem}={{OUT}}/analyses/{path.name}"))
    return [
        Step(
            "publish",
            (
                "publish",
                "--out",
                "{OUT}/dataset",
                *mc_args,
                *contrast_args,
                "--relevance",
                "relevance_syn={OUT}/proxies/syn.npy",
                "--relevance-form",
                "top-k",
                "--top-k",
                "10",
                "--fire",
                "qrels_fire=" + _sample("fire.json"),
                "--queries",
                _sample("captions.csv"),
                "--results",
                "results={OUT}/results.json",
                "--license",
                "cc0-1.0",
                "--title",
                "tvrbench demo: derived data of the embedded sample",
            ),
        ),
        Step(
            "report",
            (
                "report",
                "--out",
                "{OUT}/report.html",
                "--title",
                "tvrbench demo on the embedded sample",
                "--subtitle",
                SAMPLE_MODELS,
                "--results",
                "sample models, FIRE labels + SYN nDCG={OUT}/results.json",
                *analyses,
                "--plots",
                "{OUT}/plots",
                *QUERIES,
                *SCORES,
                *FIRE,
                "--relevance",
                "{OUT}/proxies/syn.npy",
                *(arg for path in mc for arg in ("--mc", f"{path.stem}={{OUT}}/mc/{path.name}")),
            ),
        ),
    ]
