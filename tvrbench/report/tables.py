"""Which result wrote a JSON file, and that result's tables: the report has only the files, and shows each
result as the command line printed it (:class:`~tvrbench.results.TablesOfJson` builds both from the JSON).

A FIRE analysis is recognised by :func:`~tvrbench.evaluation.fire.tables.analysis_of`; the other results
by the keys their ``to_json`` always writes.
"""

from __future__ import annotations

import importlib

from tvrbench.evaluation.fire.tables import analysis_tables
from tvrbench.io.writers import unmarked
from tvrbench.results import Table
from tvrbench.signature import Signature

MC_SCORE_KEYS = {"accuracy", "ties", "n", "picks", "signature"}
# The keys a result's JSON always holds -> (module, its tables function), imported only when used: a page
# of results loads no scorer, language model or ranking kernel.
TABLES_BY_KEYS = (
    ({"metrics", "signature", "n_queries"}, ("tvrbench.evaluation.tables", "evaluation_tables")),
    (MC_SCORE_KEYS, ("tvrbench.mc.score", "mc_score_tables")),
    ({"splits", "signature"}, ("tvrbench.mc.audit", "audit_tables")),
    ({"kind", "counts", "candidates_rejected", "audit", "signature"}, ("tvrbench.generators.runner", "contrast_run_tables")),
    ({"thresholds", "mean_relevant"}, ("tvrbench.proxies.studies", "curve_tables")),
    ({"threshold", "gmr"}, ("tvrbench.proxies.studies", "gmr_tables")),
    ({"names", "pearson"}, ("tvrbench.proxies.studies", "correlation_tables")),
    ({"pairs", "consistent_pairs", "percent_consistent", "human_to_proxy_agreement"}, ("tvrbench.proxies.studies", "agreement_tables")),
    ({"readers", "sources", "care", "agreement", "sentences", "signature"}, ("tvrbench.review.score", "review_tables")),
)


def result_tables(payload) -> list[Table] | None:
    """The tables of the result that wrote ``payload``, or ``None`` when no result wrote it (or it was edited
    out of shape): the report then shows it as plain JSON."""
    payload = unmarked(payload)
    tables = analysis_tables(payload)
    if tables is not None or not isinstance(payload, dict):
        return tables
    for keys, (module, function) in TABLES_BY_KEYS:
        if keys <= payload.keys():
            try:
                return getattr(importlib.import_module(module), function)(payload)
            except (KeyError, TypeError, ValueError, IndexError, AttributeError):
                return None
    return None


def is_mc_score(payload) -> bool:
    """Whether ``mc score`` wrote ``payload`` (its keys, and a signature naming the split it scored):
    the report shows all of them in one table."""
    if not isinstance(payload, dict) or not MC_SCORE_KEYS <= payload.keys() or not isinstance(payload["signature"], str):
        return False
    try:
        return "mc" in Signature.parse(payload["signature"]).fields
    except ValueError:
        return False
