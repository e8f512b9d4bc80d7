"""Settings files: defaults live in pydantic models; ``configs/*.yaml`` are commented copies.

``load_settings(Model, path, **overrides)`` reads a YAML file with ``yaml.safe_load``, lays the
command line's values over it and validates the whole against the model: an unknown key, a wrong
type or a value out of range is an :class:`InputError` naming the file (or ``settings``, for a
value given on the command line) and the key. Every command merges its settings this one way.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Annotated, Literal, TypeVar

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from tvrbench.errors import InputError

Seed = Annotated[int, Field(ge=0)]  # numpy's generators take non-negative seeds only
# Where T5, the causal LM and the sentence model run: auto is the GPU when torch sees one. Left out of
# the settings digest: a model's name in the signature carries its dtype when it is not fp32.
Device = Literal["auto", "cpu", "cuda"]


class Settings(BaseModel):
    """Base of every settings model: unknown keys are errors, values are checked on assignment."""

    model_config = ConfigDict(extra="forbid", validate_assignment=True)


S = TypeVar("S", bound=Settings)


class SettingsLoader(yaml.SafeLoader):
    """A safe loader (plain data, no Python objects: ``yaml.load`` with it is ``yaml.safe_load``'s), and
    YAML as a settings file means it: only ``true`` and ``false`` are booleans (YAML 1.2). YAML 1.1
    also reads ``yes``, ``no``, ``on`` and ``off`` as booleans, and ``on`` is a word of the relation
    kind's lists."""


SettingsLoader.yaml_implicit_resolvers = {
    first: [(tag, pattern) for tag, pattern in resolvers if tag != "tag:yaml.org,2002:bool"]
    for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
}
SettingsLoader.add_implicit_resolver("tag:yaml.org,2002:bool", re.compile(r"^(?:true|True|TRUE|false|False|FALSE)$"), list("tTfF"))


def read_yaml(text: str):
    """A settings file's YAML (:class:`SettingsLoader`)."""
    return yaml.load(text, Loader=SettingsLoader)


def load_settings(model: type[S], path: str | Path | None, section: str | None = None, **overrides) -> S:
    """Defaults of ``model``, updated by the YAML file at ``path`` and then by the non-None
    ``overrides`` (into the settings' ``section`` when given); a mapping merges into the mapping it updates."""
    values: dict = {}
    if path is not None:
        path = Path(path)
        if not path.is_file():
            raise InputError(path, "no such settings file")
        try:
            loaded = read_yaml(path.read_text(encoding="utf-8"))
        except yaml.YAMLError as error:
            mark = getattr(error, "problem_mark", None)
            where = f" at line {mark.line + 1}" if mark else ""
            raise InputError(path, f"malformed YAML{where}") from None
        except UnicodeDecodeError:
            raise InputError(path, "not UTF-8 text") from None
        if loaded is not None and not isinstance(loaded, dict):
            raise InputError(path, "expected a mapping of setting names to values")
        values.update(loaded or {})
    given = {key: value for key, value in overrides.items() if value is not None}
    given = {section: given} if section and given else given
    _merge(values, given)
    try:
        return model(**_completed(model, values))
    except ValidationError as error:
        first = error.errors()[0]
        message = first["msg"].removeprefix("Value error, ")
        # a check of the whole settings names its own key first ("properties.colour: ..."); a field's is named by its location
        text = message if not first["loc"] and first["type"] == "value_error" else f"{'.'.join(map(str, first['loc'])) or 'settings'}: {message}"
        raise InputError("settings" if path is None or _holds(given, first["loc"]) else path, text) from None


def _completed(model: type[BaseModel], values: dict) -> dict:
    """``values`` with each section they give in part completed by the model's own default of it, where
    that differs from the section's defaults: a kind that changes a shared section (the relation kind's
    ``choice.max_loss``) keeps its values unless the file changes them."""
    for name, field in model.model_fields.items():
        default, given = field.get_default(call_default_factory=True), values.get(field.alias or name)
        if isinstance(default, BaseModel) and isinstance(given, dict) and default != type(default)():
            values[field.alias or name] = {**default.model_dump(by_alias=True), **given}
    return values


def _merge(values: dict, updates: dict) -> None:
    for key, value in updates.items():
        if isinstance(value, dict) and isinstance(values.get(key), dict):
            _merge(values[key], value)
        else:
            values[key] = value


def _holds(given: dict, location: tuple) -> bool:
    """Whether the command line gave the value at ``location`` (else it came from the file)."""
    node = given
    for part in location:
        if not isinstance(node, dict) or part not in node:
            return False
        node = node[part]
    return bool(location)
