"""configs/fire.yaml is a copy of the defaults; bad settings name the file."""

from __future__ import annotations

from pathlib import Path

import pytest

from tvrbench.errors import InputError
from tvrbench.evaluation.fire.config import FireConfig, load_config

YAML = Path(__file__).resolve().parents[1] / "configs" / "fire.yaml"


def test_yaml_equals_defaults():
    assert load_config(YAML) == FireConfig()
    assert load_config(None) == FireConfig()


@pytest.mark.parametrize("text, problem", [("bootstrap:\n  sizes: many\n", "bootstrap.sizes"),
                                           ("overlap:\n  rbo_p: 1.5\n", "overlap.rbo_p"),
                                           ("bootstap: {}\n", "bootstap")])
def test_bad_settings(tmp_path, text, problem):
    path = tmp_path / "fire.yaml"
    path.write_text(text)
    with pytest.raises(InputError) as error:
        load_config(path)
    assert str(path) in str(error.value) and problem in str(error.value)
