"""What the word-edit kinds' tests share: the candidates a kind proposes for a caption that pass its cheap
constraints (before the language model judges any), so a test can say "this contrast is proposed"
without depending on the seeded draw; and a kind's settings read from a file as a user writes one."""

from __future__ import annotations

import pytest

from tvrbench.generators.base import Request
from tvrbench.generators.config import load_config
from tvrbench.generators.core import as_captions
from tvrbench.generators.edits import EDIT_KINDS


def proposed(generator, text: str) -> list[str]:
    """The contrasts of ``text`` that pass ``generator``'s constraints, every target's."""
    items, collection = generator.prepare(as_captions([text]))
    search = generator.search(collection)
    item = items[0]
    targets = search.finder.find(item)
    found = search.eligible([Request(item, target, targets, None) for target in targets])
    return [candidate.text for candidates, _ in found for candidate in candidates]


@pytest.fixture
def proposals():
    return proposed


@pytest.fixture
def settings_file(tmp_path):
    """``settings_file(kind, text, **overrides)``: the kind's settings from ``KIND.yaml`` holding ``text``."""

    def read(kind: str, text: str, **overrides):
        path = tmp_path / f"{kind}.yaml"
        path.write_text(text)
        return load_config(path, EDIT_KINDS[kind].settings_class(), **overrides)

    return read
