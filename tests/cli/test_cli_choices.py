"""Each choice is declared once, in the library: the command line's choices and their help come from
its registries (proxies, levels, captions formats, MC kinds, scorers, similarities, FIRE label rules,
tie rules, AP and nDCG variants, fusion policies), so a name added
there reaches --help and is accepted without a second declaration to keep in step."""

from __future__ import annotations

import json
import subprocess
import sys

import typer

from tvrbench.data.demo import DEMO_MC_KINDS
from tvrbench.mc.build import MC_KINDS

# Registries, each given one more name before the command line is loaded.
REGISTRIES = {
    "tvrbench.proxies.matrix": ("PROXIES", "LEVELS"),
    "tvrbench.io.captions": ("FORMATS",),
    "tvrbench.mc.build": ("MC_KINDS",),
    "tvrbench.mc.score": ("SCORERS",),
    "tvrbench.io.scores": ("SIMILARITIES",),
    "tvrbench.evaluation.fire.pairs": ("RULES",),
    "tvrbench.evaluation.choices": ("TIE_RULES", "AP_VARIANTS", "NDCG_VARIANTS", "FUSION_POLICIES"),
}
# (command, option): where each registry's names must show, as choices or in the option's help.
SHOWN = {
    "PROXIES": [("proxies", "--proxy")],
    "LEVELS": [("proxies", "--level")],
    "FORMATS": [("proxies", "--format"), ("evaluate", "--format"), ("fire compare", "--format"), ("mc build", "--format")],
    "MC_KINDS": [("mc build", "--kind")],
    "SCORERS": [("mc score", "--scorer")],
    "SIMILARITIES": [("fire compare", "--similarity"), ("fire bootstrap", "--similarity"), ("evaluate", "--similarity")],
    "RULES": [("fire agreement", "--rule"), ("fire labels to-qrels", "--rule")],
    "TIE_RULES": [("evaluate", "--ties"), ("fire compare", "--ties")],
    "AP_VARIANTS": [("evaluate", "--ap"), ("fire compare", "--ap")],
    "NDCG_VARIANTS": [("evaluate", "--ndcg")],
    "FUSION_POLICIES": [("evaluate", "--fusion")],
}

SCRIPT = """
import importlib, json, sys
import typer
registries, shown = json.loads(sys.argv[1]), json.loads(sys.argv[2])
for module, names in registries.items():
    loaded = importlib.import_module(module)
    for name in names:
        setattr(loaded, name, (*getattr(loaded, name), "probe-" + name.lower()))
from tvrbench.cli import load_commands

root = typer.main.get_command(load_commands())
found = {}
for registry, places in shown.items():
    for path, option in places:
        command = root
        for word in path.split():
            command = command.commands[word]
        (param,) = [p for p in command.params if option in p.opts]
        found[f"{registry} {path} {option}"] = list(param.type_descriptor.choices or []) + [param.help or ""]
print(json.dumps(found))
"""


def test_a_name_added_to_a_registry_reaches_every_option_that_chooses_from_it():
    completed = subprocess.run([sys.executable, "-c", SCRIPT, json.dumps(REGISTRIES), json.dumps(SHOWN)], capture_output=True, text=True, check=True)
    found = json.loads(completed.stdout)
    assert len(found) == sum(map(len, SHOWN.values()))
    missing = {place: shown for place, shown in found.items() if not any(f"probe-{place.split()[0].lower()}" in text for text in shown)}
    assert missing == {}


def test_the_choices_are_the_registries():
    from tvrbench.cli import load_commands
    from tvrbench.proxies.matrix import LEVELS, PROXIES

    proxies = typer.main.get_command(load_commands(["proxies"])).commands["proxies"]
    choices = {opt: list(param.type_descriptor.choices) for param in proxies.params for opt in param.opts if param.type_descriptor.is_choice}
    assert choices == {"--proxy": list(PROXIES), "--level": list(LEVELS)}


def test_the_demo_builds_a_subset_of_the_mc_kinds():
    assert set(DEMO_MC_KINDS) < set(MC_KINDS)


def test_each_shared_option_is_declared_once():
    """Issue 40: ``--scores``, ``--captions``, ``--lm`` and the contrast commands' shared options are one
    ``typer.Option`` each in the whole package (a factory's arguments say what a command uses them for),
    so their wording cannot drift apart again."""
    import ast
    from pathlib import Path

    import tvrbench

    shared = ("--scores", "--captions", "--lm", "--seed", "--config", "--workers", "--scheduler")
    declared = {flag: [] for flag in shared}
    for path in sorted(Path(tvrbench.__file__).parent.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            called = node.func.attr if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) else None
            if called == "Option":
                for flag in {arg.value for arg in node.args if isinstance(arg, ast.Constant)} & set(shared):
                    declared[flag].append(f"{path.name}:{node.lineno}")
    assert {flag: len(places) for flag, places in declared.items()} == dict.fromkeys(shared, 1), declared
