"""tvrbench's outputs as Arrow tables, one :class:`Artifact` per future dataset config.

Each reader turns one output file into the rows a Hugging Face dataset will hold, and keeps what
the dataset card needs: the input's own signature (from its sidecar), where it came from, and the
facts that say what a row is. Columns, by kind:

* ``mc`` (Park et al.'s TSV): ``clip, ending0 … ending4, label`` exactly as the TSV.
* ``contrast`` (JSONL records): ``caption_id, video_id, original, contrast, kind``; ``edit`` as a
  list of ``{from, to, tokens, chars, contrast_chars}``; ``filters`` and ``details`` (free-form
  objects whose keys vary by kind) as JSON text.
* ``relevance`` (every form ``tvrbench proxies`` writes, :func:`~tvrbench.io.relevance.open_relevance`): ``row_id,
  column_id, relevance`` for every cell above 0 (``long``), or ``row_id, rank, column_id,
  relevance`` for each row's k largest (``top-k``, ties by column order).
* ``qrels`` (TREC qrels, or FIRE labels converted by :func:`tvrbench.evaluation.fire.fire_to_qrels`):
  ``query_id, video_id, relevance``; from FIRE also ``query`` (the caption text) and ``dataset``.
* ``results`` (``tvrbench evaluate --json``, or a ``{"models": {name: ...}}`` file such as the
  demo's ``results.json``): one row per (model, metric) with ``value, original, delta, n_queries,
  signature`` (``original`` / ``delta`` null when only the original labels were used).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pyarrow as pa

from tvrbench.errors import InputError
from tvrbench.generators.records import read_contrast_records
from tvrbench.io.files import read_json, string_list
from tvrbench.io.fire import read_fire
from tvrbench.io.mc import MC_COLUMNS, N_OPTIONS, read_mc
from tvrbench.io.relevance import open_relevance
from tvrbench.io.sidecars import read_sidecar, sidecar_path
from tvrbench.io.trec import read_qrels
from tvrbench.signature import Signature, input_digest

KINDS = ("mc", "contrast", "relevance", "qrels", "results")
RELEVANCE_FORMS = ("long", "top-k")
EDIT_TYPE = pa.list_(
    pa.struct(
        [
            ("from", pa.string()),
            ("to", pa.string()),
            ("tokens", pa.list_(pa.int64())),
            ("chars", pa.list_(pa.int64())),
            ("contrast_chars", pa.list_(pa.int64())),
        ]
    )
)
_CONFIG_NAME = re.compile(r"^[a-z0-9][a-z0-9_-]*$")


@dataclass
class Artifact:
    """Rows for one dataset config, with what the card says about them."""

    config: str
    kind: str
    table: pa.Table
    source: str
    signature: Signature | None
    description: str
    facts: dict[str, object] = field(default_factory=dict)


def config_name(kind: str, name: str | None, path: Path) -> str:
    """``kind_stem`` (lower case, other characters as ``_``) unless the user named it."""
    if name is not None:
        if not _CONFIG_NAME.match(name):
            raise InputError(path, f"config name {name!r} must be lower-case letters, digits, '_' or '-'")
        return name
    stem = path.name.split(".")[0].lower()
    stem = re.sub(r"[^a-z0-9_-]+", "_", stem).strip("_-") or kind
    return stem if stem.startswith(f"{kind}_") or stem == kind else f"{kind}_{stem}"


def _sidecar(path: Path) -> dict:
    """The sidecar of output ``path`` (empty when none), its signature read as a
    :class:`~tvrbench.signature.Signature`."""
    sidecar = read_sidecar(path)
    if "signature" in sidecar:
        sidecar["signature"] = _recorded_signature(sidecar["signature"], sidecar_path(path))
    return sidecar


def _recorded_signature(text, source: Path) -> Signature | None:
    """The signature a file records (a sidecar's, an evaluation's); None when it records none."""
    if text is None:
        return None
    if not isinstance(text, str):
        raise InputError(source, "field 'signature' must be a string")
    try:
        return Signature.parse(text)
    except ValueError:
        raise InputError(source, f"its signature {text!r} is not key:value fields joined by '|'") from None


def mc_artifact(path: str | Path, name: str | None = None) -> Artifact:
    """A multiple-choice split in the released TSV format (see :mod:`tvrbench.io.mc`)."""
    path = Path(path)
    instances = read_mc(path)
    columns = {"clip": [i.clip for i in instances]}
    for option in range(N_OPTIONS):
        columns[f"ending{option}"] = [i.endings[option] for i in instances]
    columns["label"] = [i.label for i in instances]
    table = pa.table(
        {column: columns[column] for column in MC_COLUMNS}, schema=pa.schema([*((c, pa.string()) for c in MC_COLUMNS[:-1]), ("label", pa.int64())])
    )
    sidecar = _sidecar(path)
    labels = np.bincount(np.asarray(columns["label"]), minlength=N_OPTIONS)
    return Artifact(
        config_name("mc", name, path),
        "mc",
        table,
        str(path),
        sidecar.get("signature"),
        f"Multiple choice ({N_OPTIONS} options, 1 positive): `clip` is the video id, `ending0` … `ending{N_OPTIONS - 1}` "
        "the captions offered, `label` the index of the caption that belongs to the video.",
        {
            "instances": len(instances),
            "videos": len(set(columns["clip"])),
            "label_counts": {str(i): int(n) for i, n in enumerate(labels)},
            **_settings_facts(sidecar),
        },
    )


def _settings_facts(sidecar: dict) -> dict:
    """Counts, split name, the contrasts' plausibility (see :func:`tvrbench.lm.models.preference`),
    text-only audit (:func:`tvrbench.generators.audit.audit_pairs`), blind review
    (:func:`tvrbench.review.score.review_of`) and adversarial refinement (:mod:`tvrbench.mc.refine`)
    from a sidecar, when it has them."""
    facts = {}
    for key in ("split", "kind", "counts", "seed", "plausibility", "audit", "review", "refinement"):
        if key in sidecar:
            facts[key] = sidecar[key]
    return facts


def contrast_artifact(path: str | Path, name: str | None = None) -> Artifact:
    """Contrast records (JSONL from ``tvrbench contrast``)."""
    path = Path(path)
    records = read_contrast_records(path)
    edit_keys = {item.name for item in EDIT_TYPE.value_type}
    for line, record in enumerate(records, start=1):
        for edit in record.edit:
            unknown = set(edit) - edit_keys
            if unknown:
                raise InputError(path, f"record {line}: unknown edit field(s) {', '.join(sorted(unknown))}")
    table = pa.table(
        {
            "caption_id": pa.array([r.caption_id for r in records], pa.string()),
            "video_id": pa.array([r.video_id for r in records], pa.string()),
            "original": pa.array([r.original for r in records], pa.string()),
            "contrast": pa.array([r.contrast for r in records], pa.string()),
            "kind": pa.array([r.kind for r in records], pa.string()),
            "edit": pa.array([r.edit for r in records], EDIT_TYPE),
            "filters": pa.array([json.dumps(r.filters, sort_keys=True, ensure_ascii=False) for r in records], pa.string()),
            "details": pa.array([json.dumps(r.details, sort_keys=True, ensure_ascii=False) for r in records], pa.string()),
        }
    )
    sidecar = _sidecar(path)
    kinds = sorted({r.kind for r in records})
    return Artifact(
        config_name("contrast", name, path),
        "contrast",
        table,
        str(path),
        sidecar.get("signature"),
        "Contrast captions: `original` (a caption of `video_id`) with one edit that makes it wrong for the video; "
        "`edit` says what was replaced by what, at which tokens and characters; `filters` (JSON) holds the scores "
        "of the filters the contrast passed, `details` (JSON) the generator's notes.",
        {"records": len(records), "kinds": kinds, **_settings_facts(sidecar)},
    )


def relevance_artifact(
    path: str | Path,
    name: str | None = None,
    form: str = "long",
    top_k: int = 10,
    row_ids: list[str] | None = None,
    column_ids: list[str] | None = None,
) -> Artifact:
    """A graded relevance matrix in ``long`` form (cells above 0) or ``top-k`` form.

    Row and column ids come from the proxy sidecar ``M.json`` (``tvrbench proxies``); a matrix
    without one is captions × videos and needs ``row_ids`` (caption ids) and ``column_ids`` (video ids).
    """
    if form not in RELEVANCE_FORMS:
        raise ValueError(f"unknown relevance form {form!r}; choose {', '.join(RELEVANCE_FORMS)}")
    path = Path(path)
    matrix = open_relevance(path).values
    sidecar = _sidecar(path)
    rows_are, columns_are = sidecar.get("rows", "captions"), sidecar.get("columns", "videos")
    if sidecar.get("row_ids") is not None:
        sidecar_file = sidecar_path(path)
        row_ids = string_list(sidecar, "row_ids", sidecar_file, matrix.shape[0])
        column_ids = string_list(sidecar, "col_ids", sidecar_file, matrix.shape[1])
    elif row_ids is None or column_ids is None:
        raise InputError(
            path, f"no sidecar {sidecar_path(path).name} naming its rows and columns; give the captions (rows) and videos (columns) it was built for"
        )
    if matrix.shape != (len(row_ids), len(column_ids)):
        raise InputError(path, f"has shape {matrix.shape} but {len(row_ids)} row ids and {len(column_ids)} column ids")
    rows_out, columns_out, values, ranks = _cells(matrix, form, top_k)
    arrays = {"row_id": pa.array(np.asarray(row_ids, dtype=object)[rows_out], pa.string())}
    if form == "top-k":
        arrays["rank"] = pa.array(ranks, pa.int64())
    arrays["column_id"] = pa.array(np.asarray(column_ids, dtype=object)[columns_out], pa.string())
    arrays["relevance"] = pa.array(values.astype(np.float32), pa.float32())
    shown = "every cell with relevance above 0" if form == "long" else f"the {top_k} most relevant {columns_are} of each row"
    return Artifact(
        config_name("relevance", name, path),
        "relevance",
        pa.table(arrays),
        str(path),
        sidecar.get("signature") or Signature({"matrix": f"{path.name}:{input_digest('relevance', path)}"}),
        f"Graded relevance in [0, 1] of (`row_id`, `column_id`) pairs: rows are {rows_are}, columns are {columns_are}; "
        f"{shown}{' (`rank` 1 = most relevant, ties by column order)' if form == 'top-k' else ''}. "
        "Pairs left out have relevance 0" + (" or lie below the row's top k." if form == "top-k" else "."),
        {
            "shape": list(matrix.shape),
            "rows": rows_are,
            "columns": columns_are,
            "form": form,
            **({"top_k": top_k} if form == "top-k" else {}),
            **({"proxy": sidecar["proxy"]} if "proxy" in sidecar else {}),
        },
    )


def _cells(matrix, form: str, top_k: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray | None]:
    """Row, column, value (and 1-based rank for top-k) of the cells to publish, row by row."""
    import scipy.sparse as sp

    if form == "long":
        if sp.issparse(matrix):
            coo = matrix.tocoo()
            order = np.lexsort((coo.col, coo.row))
            keep = coo.data[order] > 0
            return coo.row[order][keep], coo.col[order][keep], coo.data[order][keep], None
        dense = np.asarray(matrix)
        rows, columns = np.nonzero(dense > 0)
        return rows, columns, dense[rows, columns], None
    from tvrbench.evaluation import rank_top_k

    dense = matrix.toarray() if sp.issparse(matrix) else np.asarray(matrix)
    top = rank_top_k(dense, top_k)
    rows = np.repeat(np.arange(dense.shape[0]), top.shape[1])
    columns = top.ravel()
    ranks = np.tile(np.arange(1, top.shape[1] + 1), dense.shape[0])
    return rows, columns, dense[rows, columns], ranks


def qrels_artifact(path: str | Path, name: str | None = None) -> Artifact:
    """TREC qrels; the metadata of ``tvrbench fire labels to-qrels`` saved beside it as ``Q.qrels.json``
    (the file name plus ``.json``) adds the query texts."""
    path = Path(path)
    qrels = read_qrels(path)
    sidecar = _sidecar(path)
    queries = sidecar.get("queries") if isinstance(sidecar.get("queries"), dict) else None
    return _qrels_table(
        qrels.query_ids,
        qrels.doc_ids,
        qrels.relevance,
        queries,
        config_name("qrels", name, path),
        str(path),
        sidecar.get("signature") or Signature({"qrels": f"{path.name}:{input_digest('qrels', path)}"}),
        sidecar,
    )


def fire_qrels_artifact(path: str | Path, name: str | None = None, captions=None, rule: str = "file", disagreements: str = "omit") -> Artifact:
    """FIRE labels converted to qrels (relevant 1, irrelevant 0; disagreements by ``disagreements``)."""
    from tvrbench.evaluation.fire import fire_to_qrels

    path = Path(path)
    qrels, metadata, _ = fire_to_qrels(read_fire(path), rule, disagreements, captions)
    fields = {
        "fire": f"{path.name}:{input_digest('fire', path)}",
        "rule": rule,
        "disagreements": disagreements,
        "query_ids": "caption_ids" if captions is not None else "text_digest",
    }
    return _qrels_table(
        qrels.query_ids,
        qrels.doc_ids,
        qrels.relevance,
        metadata["queries"],
        config_name("qrels", name, path),
        str(path),
        Signature(fields),
        {"rule": rule, "disagreements": disagreements},
    )


def _qrels_table(query_ids, video_ids, relevance, queries: dict | None, config: str, source: str, signature: Signature, settings: dict) -> Artifact:
    arrays = {"query_id": pa.array(list(query_ids), pa.string())}
    if queries is not None:
        arrays["query"] = pa.array([queries.get(q, {}).get("query") for q in query_ids], pa.string())
        arrays["dataset"] = pa.array([queries.get(q, {}).get("dataset") for q in query_ids], pa.string())
    arrays["video_id"] = pa.array(list(video_ids), pa.string())
    arrays["relevance"] = pa.array(np.asarray(relevance, dtype=np.int32), pa.int32())
    relevance = np.asarray(relevance)
    return Artifact(
        config,
        "qrels",
        pa.table(arrays),
        source,
        signature,
        "Relevance judgments of (query, video) pairs in TREC qrels terms: `relevance` 1 relevant, 0 irrelevant"
        + (", negative a disagreement" if (relevance < 0).any() else "")
        + (". `query` is the caption text, as FIRE keys its pairs." if queries is not None else "."),
        {
            "pairs": int(relevance.size),
            "relevant": int((relevance > 0).sum()),
            "irrelevant": int((relevance == 0).sum()),
            "disagreements": int((relevance < 0).sum()),
            "queries": len(set(query_ids)),
            **{k: settings[k] for k in ("rule", "disagreements") if k in settings},
        },
    )


def results_artifact(path: str | Path, name: str | None = None) -> Artifact:
    """Evaluation results: one ``tvrbench evaluate --json`` file, or ``{"models": {model: that}}``."""
    path = Path(path)
    data = read_json(path)
    if isinstance(data, dict) and isinstance(data.get("models"), dict):
        by_model = data["models"]
    elif isinstance(data, dict) and isinstance(data.get("metrics"), dict):
        by_model = {path.name.split(".")[0]: data}
    else:
        raise InputError(path, 'expected the JSON of `tvrbench evaluate` ({metrics, signature, ...}) or {"models": {...}}')
    rows = {"model": [], "metric": [], "value": [], "original": [], "delta": [], "n_queries": [], "signature": []}
    for model, result in by_model.items():
        if not isinstance(result, dict) or not isinstance(result.get("metrics"), dict):
            raise InputError(path, f"model {model!r} has no metrics object")
        for metric, value in result["metrics"].items():
            rows["model"].append(str(model))
            rows["metric"].append(metric)
            rows["value"].append(value)
            rows["original"].append((result.get("original") or {}).get(metric))
            rows["delta"].append((result.get("delta") or {}).get(metric))
            rows["n_queries"].append(result.get("n_queries"))
            rows["signature"].append(result.get("signature"))
    schema = pa.schema(
        [
            ("model", pa.string()),
            ("metric", pa.string()),
            ("value", pa.float64()),
            ("original", pa.float64()),
            ("delta", pa.float64()),
            ("n_queries", pa.int64()),
            ("signature", pa.string()),
        ]
    )
    try:
        table = pa.table(rows, schema=schema)
    except (pa.ArrowInvalid, pa.ArrowTypeError) as error:
        raise InputError(path, f"unexpected value in the results: {error}") from None
    signatures = sorted({s for s in rows["signature"] if s})
    return Artifact(
        config_name("results", name, path),
        "results",
        table,
        str(path),
        _recorded_signature(signatures[0], path) if len(signatures) == 1 else Signature({"results": f"{path.name}:{input_digest('results', path)}"}),
        "Evaluation results, one row per (model, metric): `value` with every label used, `original` with the "
        "original pairs only and `delta` their difference (null when only the original labels were used); "
        "`signature` names every setting and version behind the number.",
        {"models": list(by_model), "metrics": sorted(set(rows["metric"]))},
    )
