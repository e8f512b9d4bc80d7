"""What the word-edit kinds' tests share: the candidates a kind proposes for a caption that pass its cheap
constraints (before the language model judges any), so a test can say "this contrast is proposed"
without depending on the seeded draw."""

from __future__ import annotations

import pytest

from tvrbench.generators.base import Request
from tvrbench.generators.core import as_captions


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
