"""Contrast sets and hard-negative multiple-choice splits (Park et al. 2022, SPEC §5).

In memory (a notebook), a generator per kind is built once and returns the records of any captions
(see :mod:`tvrbench.generators.core`)::

    from tvrbench.generators import GenderContrasts
    records = GenderContrasts().contrasts(["a man is cooking", "a dog runs"])

``gender_contrasts``, ``id_contrasts`` and ``verb_contrasts`` (:mod:`tvrbench.generators.runner`) each
wrap one of them: they read nothing but what they are given, write their output atomically with a
sidecar ``OUT.json`` (signature, counts, settings), resuming an interrupted run, and return what they
wrote; ``edit_contrasts`` runs any word-edit kind of :data:`EDIT_KINDS` (object, attribute, relation,
counting, swap, add, event order) the same way. The parts the kinds are made of (target finders, candidate sources, constraints, rankers,
filters, the search) live in the submodules and compose into new contrast kinds; see
:mod:`tvrbench.generators.base`. The names load on first use: reading a contrast file does not load
the verb recipe.
"""

from tvrbench.generators.edits import EDIT_KINDS
from tvrbench.lazy import lazy_exports

CONTRAST_KINDS = ("gender", "id", "verb", *EDIT_KINDS)

__getattr__, __dir__, _exported = lazy_exports(
    __name__,
    {
        "records": ("ContrastRecord", "read_contrast_records"),
        "gender": ("GenderContrasts",),
        "person_id": ("PersonIdContrasts",),
        "tvrbench.generators.verb.recipe": ("VerbContrasts",),
        "runner": ("gender_contrasts", "verb_contrasts", "id_contrasts", "edit_contrasts"),
    },
)
__all__ = ["CONTRAST_KINDS", *_exported]
