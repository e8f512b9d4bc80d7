"""``tvrbench demo``: the whole pipeline on the embedded sample, offline (the README's first command).

The demo is a list of ordinary ``tvrbench`` commands, run in this process one after the other (so
spaCy, WordNet and the sentence model load once). Each is printed on stderr as you would type it,
with ``$SAMPLE`` for the sample folder and ``$OUT`` for the output folder; what a command prints
goes to ``$OUT/logs/NN-name.txt``. Nothing here computes a number itself: copy any command to run
it on your own data.

Outputs in ``$OUT``: ``proxies/`` (SYN and BoW video-level relevance), ``evaluation/`` (each model
with FIRE labels and SYN nDCG), ``analyses/`` and ``plots/`` (the FIRE paper's tables and figures,
the proxy curve), ``contrast/`` and ``mc/`` (contrast sets and multiple-choice splits, blind
check), ``results.json`` (every model's evaluation, ``{"models": {...}}``), ``dataset/`` (all of it
as a Hugging Face dataset folder) and ``report.html``.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import signal
import sys
import time
from pathlib import Path

import typer

import tvrbench.cli
from tvrbench.cli import app, invoke, load_commands
from tvrbench.cli.outputs import FOLDER, marked, print_table, writes
from tvrbench.data import SAMPLE_DIR
from tvrbench.data.demo import DEMO_MC_KINDS, METRICS, MODELS, SAMPLE_MODELS, Step, published_steps, steps
from tvrbench.io.atomic import write_json
from tvrbench.io.outputs import Output, check_outputs
from tvrbench.progress import progress_to
from tvrbench.results import Table
from tvrbench.signature import Signature


def _shell_word(arg: str) -> str:
    """An argument as typed in a shell, ``$SAMPLE`` / ``$OUT`` left for the shell to expand."""
    text = arg.replace("{SAMPLE}", "$SAMPLE").replace("{OUT}", "$OUT")
    return text if re.fullmatch(r"[\w@%+=:,./$-]+", text) else '"' + re.sub(r'(["\\`])', r"\\\1", text) + '"'


class _Interrupts:
    """Ctrl-C stops the demo even when a library swallows the ``KeyboardInterrupt`` it raised.

    Python raises it wherever the main thread is, and there it can be lost: inside a ``__del__``
    or a callback it is printed as "Exception ignored" and execution goes on (a CI run finished the
    whole demo after one). The handler also records it, and :func:`run_step` stops after any step
    that ran through one.
    """

    def __init__(self) -> None:
        self.seen = False

    def __call__(self, signum, frame) -> None:
        self.seen = True
        raise KeyboardInterrupt

    @contextlib.contextmanager
    def installed(self):
        previous = signal.signal(signal.SIGINT, self)
        try:
            yield self
        finally:
            signal.signal(signal.SIGINT, previous)


PROGRESS_EVERY = 5.0  # seconds between a step's progress lines on a console that is no terminal


def run_step(step: Step, out: Path, log, interrupts: _Interrupts, flags: tuple[str, ...] = ()) -> float:
    """Run one command in this process, with ``flags`` added, its output in ``logs/`` and its progress on
    ``log`` (a bar on a terminal, else a line every ``PROGRESS_EVERY`` seconds); returns seconds.

    A step that fails, exits non-zero or is interrupted stops the demo: its exception (or
    ``typer.Exit`` with its code) propagates, so the later steps never run on missing files.
    """
    args = [arg.replace("{SAMPLE}", str(SAMPLE_DIR)).replace("{OUT}", str(out)) for arg in (*step.args, *flags)]
    print(f"$ tvrbench {' '.join(map(_shell_word, (*step.args, *flags)))}", file=log, flush=True)
    logs = out / "logs"
    logs.mkdir(parents=True, exist_ok=True)
    started = time.perf_counter()
    with open(logs / f"{step.name}.txt", "w", encoding="utf-8") as captured:
        try:
            with contextlib.redirect_stdout(captured), contextlib.redirect_stderr(captured), progress_to(log, PROGRESS_EVERY):
                invoke(args)
        except typer.Exit as stop:
            if stop.exit_code:
                print(f"  step {step.name} exited with code {stop.exit_code}; see {logs / f'{step.name}.txt'}", file=log, flush=True)
                raise
        except BaseException:
            print(f"  step {step.name} failed; see {logs / f'{step.name}.txt'}", file=log, flush=True)
            raise
    if interrupts.seen:
        raise KeyboardInterrupt
    seconds = time.perf_counter() - started
    print(f"  ({seconds:.1f} s)", file=log, flush=True)
    return seconds


def combine_results(out: Path) -> dict:
    """``results.json``: every model's evaluation (FIRE labels, SYN nDCG) under ``models``."""
    models = {model: json.loads((out / "evaluation" / f"{model}.json").read_text(encoding="utf-8")) for model in MODELS}
    payload = {"signature": str(Signature({"demo": "sample", "models": ",".join(MODELS), "metrics": METRICS})), "models": models}
    write_json(out / "results.json", marked(payload))
    return payload


def idle_cores(seconds: float = 0.25) -> float:
    """How many of this process's cores sat idle over ``seconds`` (Linux's /proc/stat; elsewhere, all of them)."""
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1

    def times() -> tuple[int, int]:
        fields = [int(v) for v in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
        return sum(fields), fields[3] + (fields[4] if len(fields) > 4 else 0)  # all, idle + waiting for input

    try:
        total, idle = times()
        time.sleep(seconds)
        total_after, idle_after = times()
    except (OSError, ValueError, IndexError):
        return float(cores)
    machine = os.cpu_count() or cores
    return min(cores, machine * (idle_after - idle) / max(total_after - total, 1))


def _torch_threads() -> None:
    """PyTorch on the cores that are idle now, at least one. The demo's language model is the most of
    its time: on a quiet 2-core machine the verb step took 68.5 s on two threads and 112.7 s on one; beside
    a process that keeps one core busy, 248.9 s on two and 108.8 s on one (threads that wait for a busy
    core; docs/performance.md). The bits are the same either way (the numeric contract)."""
    try:
        import torch
    except ImportError:
        return
    torch.set_num_threads(max(1, int(idle_cores() + 0.25)))


def run_demo(out: str | Path, log=None, overwrite: bool = False) -> dict:
    """Run every step into ``out``; returns ``{step name: seconds}``. ``overwrite``: every step, and the
    demo's own ``results.json``, replaces what another command wrote or a file of yours."""
    started = time.monotonic()
    log = log or sys.stderr
    out = Path(out).resolve()
    check_outputs([Output(out / "results.json", "results.json", writer="demo")], [], overwrite)
    flags = ("--overwrite",) if overwrite else ()
    _torch_threads()
    load_commands()  # every command runs: their modules load once, before the first step
    out.mkdir(parents=True, exist_ok=True)
    print(f"tvrbench demo: the whole pipeline on the embedded sample (offline)\nSAMPLE={SAMPLE_DIR}\nOUT={out}", file=log)
    seconds = {}
    with _Interrupts().installed() as interrupts:
        for step in steps():
            seconds[step.name] = run_step(step, out, log, interrupts, flags)
        combine_results(out)
        for step in published_steps(out):
            seconds[step.name] = run_step(step, out, log, interrupts, flags)
    for table in summary(out):
        print_table(table, log)
    program = tvrbench.cli.program_started  # set by main() when this process is the tvrbench program
    total = time.monotonic() - (program if program is not None else started)
    print(f"done in {total:.1f} s (start-up and every step). Full results: {out / 'results.json'} (every metric and its signature),", file=log)
    print(f"{out / 'report.html'} (tables, plots, MC items), {out / 'dataset'} (the Hugging Face dataset folder),", file=log)
    print(f"{out / 'analyses'}; what each command printed: {out / 'logs'}", file=log)
    return seconds


def summary(out: Path) -> list[Table]:
    """The headline numbers of a demo run, read back from its outputs: each model with and without the
    FIRE labels and its proxy nDCG, and how far text gets on each MC split without the video."""
    from tvrbench.mc.score import mc_score_grid, scorer_column

    rows = []
    for model in MODELS:
        result = json.loads((out / "evaluation" / f"{model}.json").read_text(encoding="utf-8"))
        rows.append([model, f"{result['original']['C@1']:.3f}", f"{result['metrics']['C@1']:.3f}", f"{result['metrics']['nDCG']:.3f}"])
    models = Table("Retrieval", ["model", "C@1 original pairs", "C@1 with FIRE", "nDCG (SYN proxy)"], rows, (SAMPLE_MODELS,))
    scores = []
    for kind in DEMO_MC_KINDS:
        for name in ("blind_alone", "lm_alone", "blind"):
            payload = json.loads((out / "analyses" / f"mc_{name}_{kind}.json").read_text(encoding="utf-8"))
            scores.append((kind, scorer_column(payload), payload))
    return [models, mc_score_grid(scores)[0]]


@app.command()
@writes(out=FOLDER)
def demo(
    out: Path = typer.Option(..., "--out", help="Folder for every output (created; a rerun replaces the demo's own outputs)."),
    overwrite: bool = typer.Option(False, "--overwrite", help="Every step replaces files in OUT that another command wrote, or of your own."),
) -> None:
    """The whole pipeline on the embedded sample, offline: results.json, a dataset folder and report.html.

    Proxies, evaluation with FIRE labels and proxy nDCG, the FIRE analyses, contrast sets and MC
    splits, publishing and the report: each step is printed as the command that does it (rerun any
    of them on your data); what the commands print goes to OUT/logs/.
    """
    run_demo(out, overwrite=overwrite)
