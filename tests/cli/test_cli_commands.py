"""Each command module registers its commands on the one ``app`` under the names its source gives them,
and each command's --help names every option it takes; clickapi is the Click that Typer runs."""

from __future__ import annotations

from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

import tvrbench.cli.fire
from tvrbench.cli import app, clickapi, contrast, doctor, evaluate, inputs, mc, models, proxies, proxy_study, publish, signature
from tvrbench.cli.fire import cache, group, labels, queries, samples, tables

# Module -> the command paths it defines, as its decorators name them (read from the source).
DEFINED = {
    contrast: ["contrast gender", "contrast id", "contrast verb", "contrast finetune-t5", "contrast review-kit", "contrast review-score"],
    doctor: ["doctor"],
    evaluate: ["evaluate"],
    mc: ["mc build", "mc import", "mc score", "mc audit"],
    proxies: ["proxies"],
    proxy_study: [f"proxy-study {name}" for name in ("curve", "gmr", "correlation", "human-kit", "human-score", "triplets")],
    publish: ["publish"],
    signature: ["signature diff"],
    cache: ["fire cache"],
    labels: ["fire labels to-qrels", "fire labels to-fire"],
    queries: ["fire length", "fire ranks", "fire overlap-train"],
    samples: ["fire bootstrap", "fire paired", "fire queue"],
    tables: ["fire agreement", "fire compare", "fire overlap", "fire pooling"],
}


def leaves(command, path: tuple[str, ...] = ()):
    """(path, click command) of every runnable command under ``command``."""
    subcommands = getattr(command, "commands", None)
    if subcommands is None:
        yield path, command
        return
    for name, sub in subcommands.items():
        yield from leaves(sub, (*path, name))


def defining_module(command) -> str:
    """The module of the function a Typer command runs (Typer wraps it with functools.update_wrapper)."""
    function = command.callback
    while hasattr(function, "__wrapped__"):
        function = function.__wrapped__
    return function.__module__


@pytest.fixture(scope="module")
def root():
    return typer.main.get_command(app)


@pytest.mark.parametrize("module", DEFINED, ids=lambda module: module.__name__.removeprefix("tvrbench.cli."))
def test_each_module_registers_its_commands_and_their_help_names_every_option(module, root):
    found = {" ".join(path): command for path, command in leaves(root) if defining_module(command) == module.__name__}
    assert sorted(found) == sorted(DEFINED[module])
    runner = CliRunner()
    for path, command in found.items():
        result = runner.invoke(app, [*path.split(), "--help"], env={"COLUMNS": "250", "TERMINAL_WIDTH": "250"})
        assert result.exit_code == 0, (path, result.output)
        options = [opt for param in command.params for opt in param.opts if opt.startswith("--")]
        assert options, path  # every command takes at least one option
        assert [opt for opt in options if opt not in result.output] == [], path


def test_the_fire_group_lists_its_modules_commands_in_the_order_of_their_import(root):
    """``cli/fire/__init__.py`` imports tables, samples, queries, labels, cache: --help lists their commands
    so (Typer lists a group's own commands before its subgroups, here ``labels``)."""
    assert any(info.typer_instance is group.fire and info.name == "fire" for info in app.registered_groups)
    fire = root.commands["fire"]
    names = fire.list_commands(fire.context_class(fire))
    modules = [defining_module(fire.commands[name]) for name in names if not hasattr(fire.commands[name], "commands")]
    package = tvrbench.cli.fire
    order = [module.__name__ for module in (package.tables, package.samples, package.queries, package.labels, package.cache)]
    assert len(set(modules)) == 4 and modules == sorted(modules, key=order.index)
    assert names[-1] == "labels" and defining_module(fire.commands["labels"].commands["to-qrels"]) == labels.__name__


def test_clickapi_names_the_errors_of_the_click_that_typer_runs(root):
    with pytest.raises(clickapi.UsageError):
        root.make_context("tvrbench", ["--no-such-option"])
    with pytest.raises(clickapi.NoArgsIsHelpError):  # a group without a subcommand: its help
        root.commands["fire"].make_context("fire", [])
    assert issubclass(clickapi.NoArgsIsHelpError, clickapi.UsageError)


def test_the_model_input_block_gives_a_command_what_was_typed(tmp_path, monkeypatch):
    """``reads_models`` gives a command ``--queries``, ``--videos`` and one model as a score file or as
    a pair of embeddings (never both, never half a pair), with the shared ``--scores`` declaration."""
    probe = typer.Typer()
    seen = []

    @probe.command()
    @models.reads_models("one_or_embeddings", fire=None, scores_use="(probed)")
    def run(given: models.ModelInputs):
        seen.append(given)

    monkeypatch.chdir(tmp_path)  # an input that is not there is refused as its option is read
    (tmp_path / "q.csv").touch(), (tmp_path / "v.txt").touch()
    base = ["--queries", "q.csv", "--videos", "v.txt"]
    runner = CliRunner()
    assert runner.invoke(probe, [*base, "--scores", "m=s.npy"]).exit_code == 0
    assert runner.invoke(probe, [*base, "--text-embeddings", "t.npy", "--video-embeddings", "v.npy", "--similarity", "cosine"]).exit_code == 0
    (scored, embedded) = seen
    assert (scored.queries, scored.videos, scored.scores, scored.fire) == (Path("q.csv"), Path("v.txt"), ["m=s.npy"], None)
    assert embedded.scores == [] and (embedded.embeddings.text, embedded.embeddings.video, embedded.embeddings.similarity) == (
        ["t.npy"],
        ["v.npy"],
        "cosine",
    )
    for wrong in (["--scores", "m=s.npy", "--text-embeddings", "t.npy"], ["--text-embeddings", "t.npy"], []):
        result = runner.invoke(probe, [*base, *wrong])
        assert result.exit_code != 0 and len(seen) == 2
    help_text = runner.invoke(probe, ["--help"], env={"COLUMNS": "250", "TERMINAL_WIDTH": "250"}).output
    assert inputs.SCORE_FORMS.split(" (")[0] in help_text and "(probed)" in help_text


def test_an_options_own_default_shows_in_the_help(capsys):
    """An option whose value is None (so that a settings file can stand) names its default in its help;
    rich markup would read ``[default: 0]`` as a tag and drop it (a new user met it in contrast verb)."""
    from tvrbench.cli import run

    assert run(["contrast", "verb", "--help"]) == 0
    shown = " ".join(capsys.readouterr().out.replace("│", " ").split())
    assert "Random seed. [default: 0]" in shown and "[default: auto]" in shown


def test_evaluate_prints_without_an_output_file_and_names_a_missing_input_first(tmp_path, capsys):
    """What a new user met: ``evaluate`` asked for --json before it looked at its inputs."""
    from tvrbench.cli import run
    from tvrbench.data import SAMPLE_DIR

    files = ["--queries", str(SAMPLE_DIR / "captions.csv"), "--videos", str(SAMPLE_DIR / "videos.txt")]
    assert run(["evaluate", *files, "--scores", str(SAMPLE_DIR / "scores_strong.npy")]) == 0
    assert "C@1" in capsys.readouterr().out and not list(tmp_path.iterdir())
    assert run(["evaluate", "--queries", str(tmp_path / "nothere.csv")]) == 2
    error = capsys.readouterr().err.strip()
    assert error == f"tvrbench: error: {tmp_path / 'nothere.csv'}: no such file"
