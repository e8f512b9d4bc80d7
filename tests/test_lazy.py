"""Package namespaces that load their names on first use (tvrbench.lazy): each exported name is the
object of the module it is declared in, looked up once; an unknown name or a name that is also a
submodule is refused."""

from __future__ import annotations

import importlib
import subprocess
import sys

import pytest

import tvrbench.evaluation
import tvrbench.generators
import tvrbench.lm
import tvrbench.mc
from tvrbench.lazy import lazy_exports

# Each lazy package, and where its declared exports live (read from its __init__).
PACKAGES = {
    tvrbench.lm: {"models": "load_language_model", "offline": "OFFLINE_LMS"},
    tvrbench.mc: {"build": "build_mc_file", "score": "score_mc_file", "audit": "audit_split"},
    tvrbench.evaluation: {"engine": "evaluate", "labels": "Judgments", "tvrbench.io.scores": "open_scores"},
    tvrbench.generators: {"records": "read_contrast_records", "runner": "verb_contrasts", "tvrbench.generators.verb.recipe": "VerbContrasts"},
}


@pytest.mark.parametrize("package", PACKAGES, ids=lambda package: package.__name__)
def test_every_export_is_its_modules_object_and_is_listed(package):
    for module, name in PACKAGES[package].items():
        owner = importlib.import_module(module if module.startswith("tvrbench.") else f"{package.__name__}.{module}")
        assert getattr(package, name) is getattr(owner, name)
        assert name in package.__all__ and name in dir(package)
    for name in package.__all__:
        getattr(package, name)  # every declared name resolves
    with pytest.raises(AttributeError, match="no_such_name"):
        package.no_such_name  # noqa: B018


def test_a_name_is_looked_up_once_and_a_name_that_is_a_submodule_is_refused(monkeypatch):
    module = type(sys)("tvrbench_lazy_probe")
    monkeypatch.setitem(sys.modules, module.__name__, module)
    module.__getattr__, module.__dir__, module.__all__ = lazy_exports(module.__name__, {"tvrbench.errors": ("InputError",)})
    assert module.__all__ == ["InputError"] and "InputError" not in vars(module)
    from tvrbench.errors import InputError

    assert module.InputError is InputError and vars(module)["InputError"] is InputError  # set on the module: no second lookup
    assert dir(module) == sorted({*vars(module), "InputError"})
    with pytest.raises(ValueError, match="score"):
        lazy_exports("tvrbench.mc", {"score": ("score",)})


def test_reading_contrast_records_does_not_load_the_generators():
    """``mc build`` reads a contrast file through ``tvrbench.generators``; the recipes stay unloaded."""
    code = (
        "import sys; from tvrbench.generators import CONTRAST_KINDS, read_contrast_records; "
        "print(sorted(m for m in sys.modules if m.startswith('tvrbench.generators.')))"
    )
    loaded = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert "tvrbench.generators.records" in loaded and "verb" not in loaded and "runner" not in loaded
