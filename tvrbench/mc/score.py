"""Scoring multiple-choice splits (Park et al. App. D, SPEC §5; built by :mod:`tvrbench.mc.build`).

Scoring: an instance is correct when the positive's score is strictly the highest; a tie is the
positive sharing the highest score. The built-in scorers never see the video: ``blind`` (how well an
option fits the video's other captions, or the other options) and ``lm`` (how fluently it reads).
Subsets: Table 5 (the antonym contrasts; the 15 % of the others most / least similar to their
positive by sentence embedding) and Table 4 (ID contrasts whose new first name is more frequent in
training than the original).
"""

from __future__ import annotations

import functools
from collections import Counter, defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from tvrbench.errors import InputError
from tvrbench.generators.config import MCConfig
from tvrbench.generators.records import ContrastRecord, read_contrast_records
from tvrbench.io.captions import Captions
from tvrbench.io.mc import N_OPTIONS, MCInstance, contrast_options_of, read_mc, saved_instances
from tvrbench.io.scores import open_scores
from tvrbench.lm.models import load_language_model, mean_logprobs
from tvrbench.lm.offline import AUTO
from tvrbench.resources import sentence_model, sentence_model_name
from tvrbench.results import Table, TablesOfJson, count_or_share
from tvrbench.signature import Signature, captions_digest, input_digest

SCORERS = ("blind", "lm")  # the built-in text-only scorers


def mc_outcomes(scores: np.ndarray, labels: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(correct, tie) per instance: positive strictly highest / positive level with the best other."""
    rows = np.arange(len(labels))
    positive = scores[rows, labels]
    others = scores.astype(np.float64, copy=True)
    others[rows, labels] = -np.inf
    best_other = others.max(axis=1)
    return positive > best_other, positive == best_other


def summarize(correct: np.ndarray, tie: np.ndarray, mask: np.ndarray | None = None) -> dict:
    if mask is not None:
        correct, tie = correct[mask], tie[mask]
    n = int(len(correct))
    return {"accuracy": float(correct.mean()) if n else None, "ties": float(tie.mean()) if n else None, "n": n}


def _cosines(model, left: Sequence[str], right: Sequence[str]) -> np.ndarray:
    a = model.encode(list(left), batch_size=64, normalize_embeddings=True, convert_to_numpy=True)
    b = model.encode(list(right), batch_size=64, normalize_embeddings=True, convert_to_numpy=True)
    return np.einsum("ij,ij->i", a, b)


def blind_scores(instances: Sequence[MCInstance], model, captions: Captions | None = None) -> tuple[np.ndarray, Counter]:
    """A text-only scorer that never sees the video.

    Each option's score is its cosine to the mean embedding of the video's other captions (from
    ``captions``, the positive's own text excluded) when there are any; otherwise, with nothing known
    about the video, its mean cosine to the instance's other options, i.e. how typical of the
    instance it reads. Returns the scores and how many instances used each reference.
    """
    texts = sorted({t for inst in instances for t in inst.endings} | set(captions.texts if captions else ()))
    position = {t: i for i, t in enumerate(texts)}
    vectors = model.encode(texts, batch_size=64, normalize_embeddings=True, convert_to_numpy=True)
    by_video: dict[str, list[str]] = defaultdict(list)
    if captions is not None:
        for video_id, text in zip(captions.video_ids, captions.texts):
            by_video[video_id].append(text)
    scores = np.empty((len(instances), N_OPTIONS))
    used: Counter = Counter()
    for row, instance in enumerate(instances):
        options = vectors[[position[t] for t in instance.endings]]
        reference = [t for t in by_video.get(instance.clip, ()) if t.lower() != instance.positive.lower()]
        if reference:
            centre = vectors[[position[t] for t in reference]].mean(axis=0)
            scores[row] = options @ centre
            used["other captions of the video"] += 1
        else:
            similarity = options @ options.T
            scores[row] = (similarity.sum(axis=1) - np.diag(similarity)) / (N_OPTIONS - 1)
            used["other options (nothing known of the video)"] += 1
    return scores, used


def lm_scores(instances: Sequence[MCInstance], lm) -> np.ndarray:
    """A text-only scorer that reads the options alone: each option's per-token mean log-probability
    under ``lm`` (per token, so a longer caption is not penalised for its length). Above chance, the
    split's negatives read less plausibly than its positives, and fluency alone gives them away."""
    texts = sorted({t for inst in instances for t in inst.endings})
    means = dict(zip(texts, mean_logprobs(lm, texts)))
    return np.array([[means[t] for t in inst.endings] for inst in instances])


def score_mc(
    instances: Sequence[MCInstance],
    scores: np.ndarray,
    contrast_options: Sequence[int | None] | None = None,
    records: Sequence[ContrastRecord] | None = None,
    load_model: Callable[[], object] | None = None,
    similar_fraction: float = 0.15,
    saved_facts: Sequence[dict] | None = None,
) -> dict:
    """Accuracy and tie rate overall, and the Table 4 / Table 5 subsets that the inputs allow.

    What the subsets need of each contrast (:meth:`ContrastRecord.mc_facts`) comes from its record
    in ``records``, else from the split's sidecar (``saved_facts``, one entry per instance, as ``mc
    build`` writes them). ``load_model`` returns the sentence model for the similarity subsets; it is
    called only when a contrast has no sentence cosine in either (see :func:`contrast_cosines`)."""
    labels = np.array([inst.label for inst in instances])
    correct, tie = mc_outcomes(scores, labels)
    result = {**summarize(correct, tie), "picks": scores.argmax(axis=1).tolist()}  # each instance's choice (the first if tied), for the report
    if contrast_options is None:
        return result
    saved = saved_facts or [{}] * len(instances)
    facts = [
        record.mc_facts() if record is not None else saved[i] for i, record in enumerate(_match_records(instances, contrast_options, records or ()))
    ]
    subsets = {}
    antonym = np.array([bool(f.get("antonym")) for f in facts])
    if records or any("antonym" in f for f in saved):
        subsets["antonym"] = summarize(correct, tie, antonym)
        if any("rare_original" in f for f in facts):
            subsets["rare_id"] = summarize(correct, tie, np.array([bool(f.get("rare_original")) for f in facts]))
    if load_model is not None:
        rest = np.flatnonzero(~antonym)
        similarity = contrast_cosines(instances, contrast_options, [facts[i].get("sentence_cosine") for i in rest], rest, load_model)
        take = int(round(similar_fraction * len(rest)))
        order = rest[np.argsort(-similarity, kind="stable")]
        percent = round(100 * similar_fraction)
        subsets[f"most_similar_{percent}"] = summarize(correct, tie, order[:take])
        subsets[f"least_similar_{percent}"] = summarize(correct, tie, order[len(order) - take :])
    result["subsets"] = subsets
    return result


def contrast_cosines(instances, contrast_options, carried: Sequence[float | None], rows: np.ndarray, load_model: Callable[[], object]) -> np.ndarray:
    """Sentence cosine of each row's positive to its contrast option: ``carried`` (a row's record or
    sidecar value) where known; the rest are encoded, all in one call, the model loaded only then."""
    similarity = np.array([np.nan if c is None else c for c in carried], dtype=float)
    missing = rows[np.isnan(similarity)]
    if len(missing):
        left, right = [instances[i].positive for i in missing], [instances[i].endings[contrast_options[i]] for i in missing]
        similarity[np.isnan(similarity)] = _cosines(load_model(), left, right)
    return similarity


def _match_records(instances, contrast_options, records) -> list[ContrastRecord | None]:
    """The record behind each instance's contrast option (same video, positive and contrast text)."""
    by_key = {(r.video_id, r.original, r.contrast): r for r in records}
    return [by_key.get((inst.clip, inst.positive, inst.endings[o])) if o is not None else None for inst, o in zip(instances, contrast_options)]


def mc_score_tables(payload: dict) -> list[Table]:
    """Accuracy, tie rate and instances overall, then on each subset the inputs allowed that holds any."""
    rows = [["all", *_score_cells(payload)]] + [[subset_name(name), *_score_cells(scores)] for name, scores in _subsets(payload)]
    return [Table("Multiple choice: positive strictly highest", ["instances", "accuracy", "ties", "n"], rows)]


def _score_cells(scores: dict) -> list[str]:
    return [count_or_share(scores["accuracy"]), count_or_share(scores["ties"]), count_or_share(scores["n"])]


def _subsets(payload: dict) -> list[tuple[str, dict]]:
    """The subsets of an ``mc score`` JSON that hold an instance (no antonym row for a split without antonyms)."""
    return [(name, scores) for name, scores in payload.get("subsets", {}).items() if scores["n"]]


def subset_name(name: str) -> str:
    """A subset of :func:`score_mc` in words: ``most_similar_15`` → "15 % most similar to the positive"."""
    if name == "antonym":
        return "antonym contrasts (Table 5)"
    if name == "rare_id":
        return "original name rarer in training than the new one (Table 4)"
    which, _, percent = name.rpartition("_")
    return f"{percent} % {which.replace('_', ' ')} to the positive (Table 5)"


# The built-in scorers as columns of the MC table, each with what its figure says (the report and the demo show both).
SCORER_COLUMNS = {
    "blind, options only": "the option most typical of the five (sentence similarity among the options): the text-only "
    "baseline a paper reports; well above chance means the options give the answer away without the video.",
    "LM, options only": "the option a language model finds most probable (per-token log-probability): well above chance "
    "means the negatives read less fluently than the positive, so fluency alone gives the answer away.",
    "blind + video's other captions": "the option closest to the video's other captions (mc score --captions), a human "
    "description of the video: a caption oracle, an upper reference for a model, not a bias check.",
}
MODEL_SCORES = "a model's scores of each option (mc score --scores)."


def scorer_column(payload: dict) -> str | None:
    """The column of :func:`mc_score_grid` of the built-in scorer that wrote an ``mc score`` JSON (its
    signature says which, and whether it read captions); ``None`` for a model's scores."""
    fields = Signature.parse(payload["signature"]).fields
    scorer = fields.get("scores", "").partition("scorer=")[2]
    if scorer == "blind":
        return "blind + video's other captions" if "captions" in fields else "blind, options only"
    return "LM, options only" if scorer == "lm" else None


def mc_score_grid(scores: Sequence[tuple[str, str, dict]]) -> list[Table]:
    """Accuracy of ``mc score`` JSONs in one table, split × scorer, from ``(split, column, JSON)``
    triples, each scorer explained under it; then their subsets that hold any instance, the same way."""
    columns = [column for column in SCORER_COLUMNS if any(column == given for _, given, _ in scores)]
    columns += list(dict.fromkeys(column for _, column, _ in scores if column not in SCORER_COLUMNS))
    rows: dict[str, dict] = {}  # row name -> {"n": instances, column: accuracy}
    for split, column, payload in scores:
        for name, outcome in [(split, payload), *((f"{split}: {subset_name(key)}", value) for key, value in _subsets(payload))]:
            rows.setdefault(name, {"n": outcome["n"]})[column] = outcome["accuracy"]

    def table(title: str, first: str, names: list[str], notes: tuple[str, ...] = ()) -> Table:
        cells = [[name, f"{rows[name]['n']:,}", *(count_or_share(rows[name][c]) if c in rows[name] else "—" for c in columns)] for name in names]
        return Table(title, [first, "instances", *columns], cells, notes)

    splits = list(dict.fromkeys(split for split, _, _ in scores))
    notes = tuple(f"{column}: {SCORER_COLUMNS.get(column, MODEL_SCORES)}" for column in columns)
    grid = [table(f"Multiple choice: accuracy ({N_OPTIONS} options, chance {1 / N_OPTIONS:.3f})", "split", splits, notes)]
    subsets = [name for name in rows if name not in splits]
    return grid + ([table("Multiple choice: accuracy on Park et al.'s subsets", "subset", subsets)] if subsets else [])


@dataclass(frozen=True)
class MCScore(TablesOfJson):
    """One scoring of an MC split: :func:`score_mc`'s ``outcome`` (accuracy, ties, n, picks, subsets),
    the blind scorer's references when it ran, and the signature of split, scores and settings.

    ``outcome`` is not called ``figures``: that name is the :mod:`tvrbench.results` method that draws
    plots, and a scoring has none (its numbers are one table; the JSON keeps them at the top level)."""

    outcome: dict
    signature: Signature
    blind_reference: dict[str, int] | None = None
    tables_of = staticmethod(mc_score_tables)

    @property
    def headline(self) -> dict:
        """Accuracy, tie rate and instances: what ``mc score`` prints."""
        return {key: self.outcome[key] for key in ("accuracy", "ties", "n")}

    def to_json(self) -> dict:
        reference = {} if self.blind_reference is None else {"blind_reference": self.blind_reference}
        return {**self.outcome, **reference, "signature": str(self.signature)}


def score_mc_file(
    mc_path: str | Path,
    scores_path: str | Path | None = None,
    scorer: str | None = None,
    captions: Captions | None = None,
    contrast_path: str | Path | None = None,
    config: MCConfig = MCConfig(),
    lm: str | None = None,
) -> MCScore:
    """Accuracy, tie rate and subsets of a model's scores (or of a built-in text-only scorer).

    ``lm``: the ``lm`` scorer's language model (default ``auto``, as
    :func:`~tvrbench.lm.models.load_language_model` resolves it). The sentence model loads only
    for the blind scorer and for similarity subsets whose contrasts' records (``contrast_path``) do
    not carry their sentence cosine.
    """
    if (scores_path is None) == (scorer is None):
        raise InputError(None, f"give exactly one of --scores S.npy and --scorer {'|'.join(SCORERS)}")
    if scorer is not None and scorer not in SCORERS:
        raise InputError(None, f"unknown scorer {scorer!r}; the built-in scorers are {', '.join(SCORERS)}")
    if lm is not None and scorer != "lm":
        raise InputError(None, "--lm needs --scorer lm: it names the language model that scorer reads the options with")
    instances = read_mc(mc_path)
    saved_facts = saved_instances(mc_path, len(instances))  # one read of the sidecar: contrast options and facts
    contrast_options = contrast_options_of(saved_facts)
    records = read_contrast_records(contrast_path) if contrast_path is not None else None  # bad input fails before any model loads
    load_model = functools.cache(lambda: sentence_model(config.blind_model))  # only when used: it is the slowest thing here
    blind_reference, fields, scores_field = None, {}, f"scorer={scorer}"
    if scores_path is not None:
        source = open_scores(scores_path)  # one read: the values and the signature's digest
        if source.shape != (len(instances), N_OPTIONS):
            raise InputError(scores_path, f"has shape {source.shape}; {mc_path} needs ({len(instances)}, {N_OPTIONS}): one score per option")
        scores, scores_field = source.values(), source.digest
    elif scorer == "blind":
        scores, used = blind_scores(instances, load_model(), captions)
        blind_reference = dict(used)
    else:
        language_model = load_language_model(lm or AUTO)
        scores = lm_scores(instances, language_model)
        fields["lm"] = language_model.name
    outcome = score_mc(instances, scores, contrast_options, records, load_model if contrast_options else None, config.similar_fraction, saved_facts)
    signature = Signature({
        "mc": input_digest("mc", mc_path), "scores": scores_field, **fields,
        **({"contrast": input_digest("contrast", contrast_path)} if contrast_path else {}),
        **({"captions": captions_digest(captions)} if captions is not None else {}),
        "ties": "strict", "similarity": sentence_model_name(config.blind_model),
    }, ("numpy", "sentence-transformers"))  # fmt: skip
    return MCScore(outcome, signature, blind_reference)
