"""Settings files: defaults live in pydantic models; ``configs/*.yaml`` are commented copies.

``load_settings(Model, path)`` reads a YAML file with ``yaml.safe_load`` and validates it against the
model: an unknown key, a wrong type or a value out of range is an :class:`InputError` naming the
file and the key.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, TypeVar

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from tvrbench.errors import InputError


Seed = Annotated[int, Field(ge=0)]  # numpy's generators take non-negative seeds only


class Settings(BaseModel):
    """Base of every settings model: unknown keys are errors, values are checked on assignment."""

    model_config = ConfigDict(extra="forbid", validate_assignment=True)


S = TypeVar("S", bound=Settings)


def load_settings(model: type[S], path: str | Path | None, **overrides) -> S:
    """Defaults of ``model``, updated by the YAML file at ``path`` and then by non-None overrides."""
    values: dict = {}
    if path is not None:
        path = Path(path)
        if not path.is_file():
            raise InputError(path, "no such settings file")
        try:
            loaded = yaml.safe_load(path.read_text(encoding="utf-8"))
        except yaml.YAMLError as error:
            mark = getattr(error, "problem_mark", None)
            where = f" at line {mark.line + 1}" if mark else ""
            raise InputError(path, f"malformed YAML{where}") from None
        except UnicodeDecodeError:
            raise InputError(path, "not UTF-8 text") from None
        if loaded is not None and not isinstance(loaded, dict):
            raise InputError(path, "expected a mapping of setting names to values")
        values.update(loaded or {})
    values.update({key: value for key, value in overrides.items() if value is not None})
    try:
        return model(**values)
    except ValidationError as error:
        first = error.errors()[0]
        key = ".".join(str(part) for part in first["loc"]) or "settings"
        raise InputError(path or "settings", f"{key}: {first['msg']}") from None
