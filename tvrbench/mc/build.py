"""Multiple-choice splits (Park et al. App. D, SPEC §5); scoring them is :mod:`tvrbench.mc.score`.

Building: one instance per video, its first caption the positive. Random MC draws 4 negatives,
captions of 4 distinct other videos (``same_movie``: other clips of the same movie, for LSMDC), with
no option text repeated. A contrast MC (gender, id, verb, or a word-edit kind: object, attribute, ...)
is the same Random MC instance with its last-drawn negative replaced by a contrast of the positive, in
the same position: options are shuffled by the same seeded permutation. Videos whose positive has no contrast are dropped. Every
random choice is seeded per video, so a split does not depend on the order of the captions file.
"""

from __future__ import annotations

import zlib
from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from tvrbench.errors import InputError
from tvrbench.generators import CONTRAST_KINDS
from tvrbench.generators.config import MCConfig, RefineConfig
from tvrbench.generators.core import check_texts
from tvrbench.generators.person_id import caption_movies
from tvrbench.generators.records import ContrastRecord, read_contrast_records
from tvrbench.io.atomic import write_json
from tvrbench.io.captions import Captions
from tvrbench.io.mc import N_OPTIONS, MCInstance, infer_contrast_option, read_mc, write_mc
from tvrbench.io.sidecars import read_sidecar, sidecar_path
from tvrbench.mc.refine import REFINE_LIBRARIES, Pairs, refine_pairs, refined_audit
from tvrbench.review.score import reviewed_records
from tvrbench.signature import Signature, captions_digest, input_digest

MC_KINDS = ("random", *CONTRAST_KINDS)
N_NEGATIVES = N_OPTIONS - 1


@dataclass
class MCSplit:
    instances: list[MCInstance]
    caption_ids: list[str]  # the positive's caption id per instance
    contrast_options: list[int | None]  # which option is the contrast negative
    dropped: Counter
    contrast_facts: list[dict] = field(default_factory=list)  # the chosen contrast record's mc_facts()
    review: dict | None = None  # what readers made of a sample of the contrasts (review.score.review_of), when reviewed
    refinement: dict | None = None  # what adversarial refinement kept (mc.refine.Refinement's JSON), when refined

    def sidecar(self, signature: str, kind: str, plausibility: dict | None = None, audit: dict | None = None) -> dict:
        """``plausibility`` and ``audit``: the contrast file's own (see :func:`tvrbench.lm.models.preference`
        and :func:`tvrbench.generators.audit.audit_pairs`), when it has them."""
        return {
            "signature": signature,
            "kind": kind,
            "counts": {"instances": len(self.instances), **{f"dropped: {k}": v for k, v in sorted(self.dropped.items())}},
            **({"plausibility": plausibility} if plausibility else {}),
            **({"audit": audit} if audit else {}),
            **({"review": self.review} if self.review else {}),
            **({"refinement": self.refinement} if self.refinement else {}),
            "instances": [
                {"caption_id": c, "contrast_option": o, **facts} for c, o, facts in zip(self.caption_ids, self.contrast_options, self.contrast_facts)
            ],
        }


def _video_rng(seed: int, video_id: str, stream: int) -> np.random.Generator:
    return np.random.default_rng([seed, zlib.crc32(video_id.encode("utf-8")), stream])


def check_contrasts(records: Sequence[ContrastRecord], captions: Captions, kind: str, source: str) -> dict[str, list[ContrastRecord]]:
    """Records by caption id; InputError when a record's caption, video or kind does not match."""
    video_of = dict(zip(captions.caption_ids, captions.video_ids))
    unknown = [r.caption_id for r in records if r.caption_id not in video_of]
    if unknown:
        raise InputError(source, f"{len(unknown)} record(s) have caption ids not in {captions.source}, e.g. {unknown[0]!r}")
    for record in records:
        if record.video_id != video_of[record.caption_id]:
            raise InputError(
                source, f"caption {record.caption_id!r} is video {record.video_id!r} here but {video_of[record.caption_id]!r} in {captions.source}"
            )
        if record.kind != kind:
            raise InputError(source, f"caption {record.caption_id!r} is a {record.kind!r} contrast, not {kind!r}")
    by_caption: dict[str, list[ContrastRecord]] = defaultdict(list)
    for record in records:
        by_caption[record.caption_id].append(record)
    return by_caption


def build_mc(
    captions: Captions,
    config: MCConfig,
    kind: str = "random",
    contrasts: dict[str, list[ContrastRecord]] | None = None,
    movies: Sequence[str] | None = None,
) -> MCSplit:
    """Random MC, or the contrast MC of ``kind`` from ``contrasts`` (records by caption id)."""
    first_caption: dict[str, int] = {}
    captions_of: dict[str, list[int]] = defaultdict(list)
    for index, video_id in enumerate(captions.video_ids):
        first_caption.setdefault(video_id, index)
        captions_of[video_id].append(index)
    group_of = {v: (movies[i] if movies is not None else "") for v, i in first_caption.items()}
    videos_in_group: dict[str, list[str]] = defaultdict(list)
    for video_id in first_caption:
        videos_in_group[group_of[video_id]].append(video_id)

    split = MCSplit([], [], [], Counter())
    for video_id, positive_index in first_caption.items():
        positive = captions.texts[positive_index]
        rng = _video_rng(config.seed, video_id, 0)
        negatives: list[str] = []
        seen = {positive.lower()}
        pool = videos_in_group[group_of[video_id]]
        for other in rng.permutation(len(pool)):
            other_video = pool[other]
            if other_video == video_id:
                continue
            choices = captions_of[other_video]
            text = captions.texts[choices[rng.integers(len(choices))]]
            if text.lower() not in seen:
                seen.add(text.lower())
                negatives.append(text)
            if len(negatives) == N_NEGATIVES:
                break
        if len(negatives) < N_NEGATIVES:
            split.dropped["too few other videos" + (" in the movie" if movies is not None else "")] += 1
            continue
        order = [positive, *negatives]
        contrast_option, facts = None, {}
        if kind != "random":
            options = [r for r in (contrasts or {}).get(captions.caption_ids[positive_index], []) if r.contrast.lower() not in seen]
            if not options:
                split.dropped[f"positive has no {kind} contrast"] += 1
                continue
            chosen = options[_video_rng(config.seed, video_id, 1).integers(len(options))]
            order[-1], facts = chosen.contrast, chosen.mc_facts()
        permutation = rng.permutation(N_OPTIONS)  # option i shows order[permutation[i]]
        endings = tuple(order[j] for j in permutation)
        label = int(np.flatnonzero(permutation == 0)[0])
        if kind != "random":
            contrast_option = int(np.flatnonzero(permutation == N_NEGATIVES)[0])
        split.instances.append(MCInstance(video_id, endings, label))
        split.caption_ids.append(captions.caption_ids[positive_index])
        split.contrast_options.append(contrast_option)
        split.contrast_facts.append(facts)
    return split


def build_mc_file(
    captions: Captions,
    kind: str,
    out: str | Path,
    config: MCConfig = MCConfig(),
    contrast_path: str | Path | None = None,
    reviewed: str | Path | None = None,
    refine: RefineConfig | None = None,
):
    """Write an MC split as Park et al.'s TSV plus ``OUT.json``; returns the split.

    A contrast split's sidecar carries the contrast file's ``plausibility`` (how a language model
    reads the contrasts beside their originals) and ``audit`` (whether text alone gives them away),
    so the measures travel with the split. With ``reviewed`` (a review's JSON, ``contrast review-score
    --json``) the split is built only from contrasts no reader rejected, and its sidecar carries the
    reviewed share (``review``). With ``refine`` the split keeps only the instances whose (positive,
    contrast) pairs :mod:`tvrbench.mc.refine` balances against its text-only scorers; its sidecar then
    carries the refinement and the kept pairs' own plausibility and audit. A split of a refined contrast
    file carries that file's refinement.
    """
    if kind not in MC_KINDS:
        raise InputError(None, f"unknown MC kind {kind!r}; choose one of {', '.join(MC_KINDS)}")
    check_texts(captions)
    contrasts, saved, review = None, {}, None
    contrast_digest = input_digest("contrast", contrast_path) if contrast_path else "none"
    if kind != "random":
        if contrast_path is None:
            raise InputError(None, f"--kind {kind} needs --contrast, the {kind} contrast records (JSONL)")
        records = every_record = read_contrast_records(contrast_path)
        if reviewed is not None:
            records, review = reviewed_records(records, Path(reviewed), Path(contrast_path), contrast_digest)
        contrasts = check_contrasts(records, captions, kind, str(contrast_path))
        saved = read_sidecar(contrast_path)
    elif reviewed is not None or refine is not None:
        raise InputError(
            None, f"--{'reviewed' if reviewed is not None else 'refine'} applies to a contrast MC (a --kind other than random, with --contrast)"
        )
    movies = caption_movies(captions, config.movie_column) if config.negatives_from == "same_movie" else None
    split = build_mc(captions, config, kind, contrasts, movies)
    split.review, split.refinement = review, saved.get("refinement")
    if not split.instances:
        raise InputError(captions.source, f"no video can make a {kind} MC instance ({dict(split.dropped)})")
    refined = {}
    if refine is not None:
        split, refinement, saved = _refined(split, every_record, refine, Path(contrast_path), contrast_digest)
        refined = {"refined": f"{'+'.join(refinement.payload['settings']['scorers'])};bins={refine.bins};seed={refine.seed}"}
    signature = Signature({
        "kind": kind, "seed": config.seed, "options": config.n_options, "negatives": config.negatives_from,
        "captions": captions_digest(captions),
        "contrast": contrast_digest,
        **({"reviewed": input_digest("review", reviewed)} if reviewed is not None else {}),
        **refined,
    }, libraries=REFINE_LIBRARIES if refined else ("numpy",))  # fmt: skip
    write_mc(out, split.instances)
    write_json(sidecar_path(out), split.sidecar(str(signature), kind, saved.get("plausibility"), saved.get("audit")))
    return split


def _refined(split: MCSplit, records: list[ContrastRecord], config: RefineConfig, contrast_path: Path, contrast_digest: str):
    """The split with only the instances whose pairs refinement keeps, the refinement, and the kept pairs'
    plausibility and audit (in place of the contrast file's)."""
    place = {(record.caption_id, record.contrast): index for index, record in enumerate(records)}
    contrasts = [instance.endings[option] for instance, option in zip(split.instances, split.contrast_options)]
    positions = np.array([place[(caption_id, text)] for caption_id, text in zip(split.caption_ids, contrasts)], dtype=np.int64)
    pairs = Pairs([instance.endings[instance.label] for instance in split.instances], contrasts, positions, len(records))
    refinement = refine_pairs(pairs, config, {"contrast": contrast_digest}, contrast_path)
    plausibility, audit = refined_audit(pairs, refinement, config)
    kept = refinement.kept.tolist()
    refined = MCSplit(
        [split.instances[i] for i in kept], [split.caption_ids[i] for i in kept], [split.contrast_options[i] for i in kept],
        split.dropped + Counter({"not kept by refinement": len(split.instances) - len(kept)}), [split.contrast_facts[i] for i in kept],
        split.review, refinement.to_json(),
    )  # fmt: skip
    return refined, refinement, {"plausibility": plausibility, "audit": audit}


def import_mc_file(tsv: str | Path, out: str | Path, name: str):
    """Copy a human-made MC TSV in as split ``name``, with a sidecar naming its contrast options."""

    instances = read_mc(tsv)
    signature = Signature({"kind": name, "imported": input_digest("imported", tsv)})
    write_mc(out, instances)
    write_json(sidecar_path(out), {
        "signature": str(signature), "kind": name, "source": str(tsv), "counts": {"instances": len(instances)},
        "instances": [{"caption_id": None, "contrast_option": infer_contrast_option(i)} for i in instances],
        "contrast_option_rule": "the negative with the most words in common with the positive (difflib ratio)",
    })  # fmt: skip
    return instances
