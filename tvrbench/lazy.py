"""Package namespaces whose names load on first use (PEP 562), so importing one light part of a
package (``tvrbench.evaluation.fire.config``) does not pay for its heavy parts (numba, scipy)."""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Mapping


def lazy_exports(package: str, modules: Mapping[str, tuple[str, ...]]) -> tuple[Callable, Callable, list[str]]:
    """``__getattr__``, ``__dir__`` and ``__all__`` for ``package``; ``modules`` maps each submodule
    (or a lower module, by its full name) to the names it exports, and a name's module is imported
    when the name is first looked up."""
    owner = {name: module for module, names in modules.items() for name in names}
    clashes = set(owner) & set(modules)
    if clashes:  # importing the submodule would set the package attribute to the module instead
        raise ValueError(f"{package}: {sorted(clashes)} name both a submodule and an export; import them eagerly")

    def __getattr__(name: str) -> object:
        if name not in owner:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        module = owner[name]
        value = getattr(importlib.import_module(module if module.startswith("tvrbench.") else f"{package}.{module}"), name)
        setattr(sys.modules[package], name, value)  # looked up once
        return value

    def __dir__() -> list[str]:
        return sorted({*vars(sys.modules[package]), *owner})

    return __getattr__, __dir__, list(owner)
