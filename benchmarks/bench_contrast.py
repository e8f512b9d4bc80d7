"""Benchmark: the contrast generators on the 1,000 MSR-VTT 1k-A test captions, as a user runs them.

Each command runs as a fresh process (``python -m tvrbench.cli ...``), first call and model loading
included; the figures are read from the files it writes. Measured (issue 13):

* plausible: the share of (original, contrast) pairs where the default LM prefers the original,
  and the median gap in nats per token (from the sidecar); a seeded sample of verb pairs is written
  for a blind read (``benchmarks/results/verb_sample.tsv``; ``contrast_sample.tsv`` holds an earlier
  version's sample with my verdicts, which docs/contrast.md cites);
* still contrasts: coverage of the captions with a spaCy VERB; no record swaps in a WordNet synonym
  of any sense of the original verb; only the verb phrase changes;
* not given away: the share of records whose new form is rarer on the Web than 10^-6.5 (issue 39:
  at most 2 %), and how often CMU's trigram, a model the generator never asks, prefers the original
  (issue 39: 45–60 %);
* fast: captions per second of the whole command and its peak memory (the child's max RSS);
* the text-only LM baseline on the Verb MC split built from the contrasts.

Writes benchmarks/results/contrast.json.

    .venv/bin/python benchmarks/bench_contrast.py [--sample 50] [--keep DIR]
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results"
MSRVTT = Path(os.environ.get("TVRBENCH_MSRVTT", ROOT.parent / "shared" / "data" / "msrvtt" / "MSRVTT_JSFUSION_test.csv"))


def cli(*arguments: str) -> dict:
    """Run one tvrbench command in a fresh process; its wall time, peak memory (its own max RSS) and output."""
    with tempfile.TemporaryFile("w+") as out, tempfile.TemporaryFile("w+") as err:
        start = time.perf_counter()
        child = subprocess.Popen([sys.executable, "-m", "tvrbench.cli", *arguments], stdout=out, stderr=err, cwd=ROOT)
        _, status, usage = os.wait4(child.pid, 0)
        wall = time.perf_counter() - start
        child.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0), err.seek(0)
        stdout, stderr = out.read().strip(), err.read().strip()
    if child.returncode != 0:
        sys.exit(f"tvrbench {' '.join(arguments)} failed:\n{stderr}")
    return {"wall_s": wall, "peak_rss_mb": usage.ru_maxrss / 1024, "stderr": stderr, "stdout": stdout}


def verb_checks(records: list[dict], texts: list[str]) -> dict:
    """Coverage of captions with a verb, WordNet synonyms swapped in, and edits outside the verb phrase."""
    from tvrbench.resources import spacy_pipeline, wordnet

    nlp, wn = spacy_pipeline("en_core_web_sm"), wordnet()
    with_verb = sum(any(t.pos_ == "VERB" for t in doc) for doc in nlp.pipe(texts))
    synonyms, outside = [], []
    for record in records:
        doc = nlp(record["original"])
        (edit,) = record["edit"]
        start, _ = edit["tokens"]
        names = {name.lower() for synset in wn.synsets(doc[start].lemma_, pos="v") for name in synset.lemma_names()}
        if record["details"]["new_lemma"] in names:
            synonyms.append(record["contrast"])
        (s, e), (cs, ce) = edit["chars"], edit["contrast_chars"]
        if record["original"][:s] != record["contrast"][:cs] or record["original"][e:] != record["contrast"][ce:]:
            outside.append(record["contrast"])
    return {"captions_with_verb": with_verb, "coverage": len(records) / with_verb, "synonym_swaps": synonyms, "edits_outside_the_phrase": outside}


def giveaways(records: list[dict]) -> dict:
    """The share of records showing a form rarer than 10^-6.5 of the Web's words, and the trigram's preference."""
    from tvrbench.generators.verb.evidence import web_log10
    from tvrbench.lm.models import load_language_model, preference

    forms = [record["contrast"][slice(*record["edit"][0]["contrast_chars"])].split()[0].lower() for record in records]
    trigram = preference(load_language_model("ngram"), [r["original"] for r in records], [r["contrast"] for r in records])
    return {"rare_form_share": float(np.mean([web_log10(form) < -6.5 for form in forms])), "trigram_prefers_original": trigram.prefers_original}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sample", type=int, default=50, help="pairs written for the blind read")
    parser.add_argument("--keep", type=Path, help="write the runs' files (contrasts, MC split, scores) here, not in a temporary folder")
    args = parser.parse_args()
    if not MSRVTT.is_file():
        sys.exit(f"MSR-VTT sample not present: {MSRVTT}")
    from tvrbench.io.captions import read_captions

    texts = read_captions(MSRVTT).texts
    results: dict = {"captions_file": MSRVTT.name, "captions": len(texts)}
    with tempfile.TemporaryDirectory() as temporary:
        work = args.keep or Path(temporary)
        work.mkdir(parents=True, exist_ok=True)
        for kind in ("gender", "verb"):
            out = work / f"{kind}.jsonl"
            run = cli("contrast", kind, "--captions", str(MSRVTT), "--out", str(out))
            sidecar = json.loads((work / f"{kind}.jsonl.json").read_text())
            records = [json.loads(line) for line in out.read_text().splitlines()]
            results[kind] = {
                "records": len(records), "counts": sidecar["counts"], "plausibility": sidecar["plausibility"],
                "wall_s": run["wall_s"], "captions_per_s": len(texts) / run["wall_s"], "peak_rss_mb": run["peak_rss_mb"],
                "signature": sidecar["signature"],
            }  # fmt: skip
            print(f"{kind}: {len(records)} records in {run['wall_s']:.1f} s ({len(texts) / run['wall_s']:.1f} captions/s, "
                  f"peak {run['peak_rss_mb']:.0f} MB); {run['stderr'].splitlines()[-1]}")  # fmt: skip
        verb = results["verb"]
        verb.update(verb_checks(records, texts))
        verb.update(giveaways(records))
        verb["relations"] = dict(sorted({r["details"]["relation"]: 0 for r in records}.items()))
        for record in records:
            verb["relations"][record["details"]["relation"]] += 1
        audit = json.loads((work / "verb.jsonl.json").read_text())["audit"]
        lemmas = Counter(r["details"]["new_lemma"].split("_")[0] for r in records)
        verb["audit"], verb["top_lemma_share"] = audit, max(lemmas.values()) / len(records)
        hypothesis, words = audit["hypothesis_only"], audit["substitutes"]
        print(f"verb audit: hypothesis-only {100 * hypothesis['accuracy']:.1f} %; substitutes {words['distinct']} distinct, "
              f"{words['entropy_bits']:.2f} bits, top-10 {100 * words['top10_share']:.1f} %; "
              f"commonest new verb {lemmas.most_common(1)[0][0]} in {100 * verb['top_lemma_share']:.1f} % of records")  # fmt: skip
        print(f"verb: coverage {100 * verb['coverage']:.1f} % of {verb['captions_with_verb']} captions with a verb; "
              f"WordNet synonyms swapped in: {len(verb['synonym_swaps'])}; "
              f"edits outside the verb phrase: {len(verb['edits_outside_the_phrase'])}")  # fmt: skip
        print(f"verb: forms rarer than 10^-6.5 in {100 * verb['rare_form_share']:.1f} % of records; "
              f"the CMU trigram prefers the original in {100 * verb['trigram_prefers_original']:.1f} %")  # fmt: skip

        mc = work / "verb_mc.tsv"
        cli("mc", "build", "--captions", str(MSRVTT), "--kind", "verb", "--contrast", str(work / "verb.jsonl"), "--out", str(mc))
        for scorer in ("lm", "blind"):
            cli("mc", "score", "--mc", str(mc), "--scorer", scorer, "--json", str(work / f"{scorer}.json"))
            score = json.loads((work / f"{scorer}.json").read_text())
            verb[f"mc_{scorer}_accuracy"] = score["accuracy"]
            print(f"Verb MC ({score['n']} instances), text-only {scorer} scorer: accuracy {score['accuracy']:.3f} (chance 0.2)")

    rng = np.random.default_rng(13)
    sample = [records[i] for i in sorted(rng.choice(len(records), size=min(args.sample, len(records)), replace=False))]
    RESULTS.mkdir(parents=True, exist_ok=True)
    with open(RESULTS / "verb_sample.tsv", "w", newline="", encoding="utf-8") as out:
        writer = csv.writer(out, delimiter="\t", lineterminator="\n")
        writer.writerow(["caption_id", "original", "contrast", "relation", "plausible (blind read)"])
        writer.writerows([r["caption_id"], r["original"], r["contrast"], r["details"]["relation"], ""] for r in sample)
    (RESULTS / "contrast.json").write_text(json.dumps(results, indent=2) + "\n")
    print(f"wrote {RESULTS / 'contrast.json'} and {RESULTS / 'verb_sample.tsv'} ({len(sample)} pairs to read)")


if __name__ == "__main__":
    main()
