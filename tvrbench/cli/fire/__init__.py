"""``tvrbench fire ...``: FIRE relevance labels and the paper's validity analyses (SPEC §3).

Every subcommand prints its table, writes ``--json`` (with a signature) and, given ``--plots DIR``,
the paper's figure as PNG and SVG. Models are given as ``--scores NAME=PATH`` (a ``.npy`` score
matrix or a TREC run, named as :mod:`tvrbench.io.inputs` says). Each command reads its inputs, calls
its analysis in :mod:`tvrbench.evaluation.fire` and writes its result; the commands are grouped by
family: :mod:`.tables`, :mod:`.samples`, :mod:`.queries`, and the ``labels`` conversions; those over
models take their input block from one decorator, :func:`tvrbench.cli.models.reads_models`.
"""

# isort: off
# Each module adds its commands to the group; the order of the imports is their order in --help.
from tvrbench.cli.fire import tables, samples, queries, labels, cache  # noqa: F401
# isort: on
