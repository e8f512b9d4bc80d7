"""configs/fire.yaml is a copy of the defaults; bad settings name the file."""

from __future__ import annotations

from pathlib import Path

import pytest

from tvrbench.errors import InputError
from tvrbench.evaluation.fire.config import FireConfig, load_config

YAML = Path(__file__).resolve().parents[3] / "configs" / "fire.yaml"


def test_yaml_equals_defaults():
    assert load_config(YAML) == FireConfig()
    assert load_config(None) == FireConfig()


@pytest.mark.parametrize(
    "text, problem",
    [("bootstrap:\n  sizes: many\n", "bootstrap.sizes"), ("overlap:\n  rbo_p: 1.5\n", "overlap.rbo_p"), ("bootstap: {}\n", "bootstap")],
)
def test_bad_settings(tmp_path, text, problem):
    path = tmp_path / "fire.yaml"
    path.write_text(text)
    with pytest.raises(InputError) as error:
        load_config(path)
    assert str(path) in str(error.value) and problem in str(error.value)


def test_one_rule_merges_file_and_command_line(tmp_path):
    """Every command merges its settings with ``load_settings``: the file over the defaults, the given
    options over the file (into a section, or merged into a nested mapping), one validation for all;
    a bad value names the file when the file gave it and ``settings`` when an option did."""
    from tvrbench.config import load_settings
    from tvrbench.generators.config import VerbConfig

    path = tmp_path / "fire.yaml"
    path.write_text("bootstrap:\n  resamples: 500\n  seed: 3\nties: average\n")
    settings = load_settings(FireConfig, path, "bootstrap", seed=7, resamples=None)
    assert (settings.bootstrap.resamples, settings.bootstrap.seed, settings.ties) == (500, 7, "average")
    assert settings.bootstrap.sizes == FireConfig().bootstrap.sizes
    with pytest.raises(InputError) as from_option:
        load_settings(FireConfig, path, "overlap", rbo_p=1.5)
    assert str(from_option.value).startswith("settings: overlap.rbo_p")
    path.write_text("overlap:\n  rbo_p: 1.5\n")
    with pytest.raises(InputError) as from_file:
        load_settings(FireConfig, path, "overlap", k=5)
    assert str(from_file.value).startswith(f"{path}: overlap.rbo_p")

    verb = tmp_path / "verb.yaml"
    verb.write_text("t5:\n  num_beams: 4\n")
    merged = load_settings(VerbConfig, verb, t5={"model": "my-t5"}, seed=None)
    assert (merged.t5.model, merged.t5.num_beams, merged.seed) == ("my-t5", 4, VerbConfig().seed)
