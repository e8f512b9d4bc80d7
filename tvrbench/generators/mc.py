"""Multiple-choice splits (Park et al. App. D, SPEC §5) and their scoring.

Building: one instance per video, its first caption the positive. Random MC draws 4 negatives,
captions of 4 distinct other videos (``same_movie``: other clips of the same movie, for LSMDC), with
no option text repeated. A contrast MC (gender / id / verb) is the same Random MC instance with its
last-drawn negative replaced by a contrast of the positive, in the same position: options are
shuffled by the same seeded permutation. Videos whose positive has no contrast are dropped. Every
random choice is seeded per video, so a split does not depend on the order of the captions file.

Scoring: an instance is correct when the positive's score is strictly the highest; a tie is the
positive sharing the highest score. The built-in scorers never see the video: ``blind`` (how well an
option fits the video's other captions, or the other options) and ``lm`` (how fluently it reads).
Subsets: Table 5 (the antonym contrasts; the 15 % of the others most / least similar to their
positive by sentence embedding) and Table 4 (ID contrasts whose new first name is more frequent in
training than the original).
"""

from __future__ import annotations

import difflib
import zlib
from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from tvrbench.errors import InputError
from tvrbench.generators.config import MCConfig
from tvrbench.generators.records import ContrastRecord
from tvrbench.io.captions import Captions
from tvrbench.io.mc import N_OPTIONS, MCInstance

N_NEGATIVES = N_OPTIONS - 1
SCORERS = ("blind", "lm")  # the built-in text-only scorers


@dataclass
class MCSplit:
    instances: list[MCInstance]
    caption_ids: list[str]  # the positive's caption id per instance
    contrast_options: list[int | None]  # which option is the contrast negative
    dropped: Counter

    def sidecar(self, signature: str, kind: str, plausibility: dict | None = None) -> dict:
        """``plausibility``: the contrast file's own (see :func:`tvrbench.generators.lm.preference`), when it has one."""
        return {
            "signature": signature,
            "kind": kind,
            "counts": {"instances": len(self.instances), **{f"dropped: {k}": v for k, v in sorted(self.dropped.items())}},
            **({"plausibility": plausibility} if plausibility else {}),
            "instances": [{"caption_id": c, "contrast_option": o} for c, o in zip(self.caption_ids, self.contrast_options)],
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
            raise InputError(source, f"caption {record.caption_id!r} is video {record.video_id!r} here but {video_of[record.caption_id]!r} in {captions.source}")
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
        contrast_option = None
        if kind != "random":
            options = [r.contrast for r in (contrasts or {}).get(captions.caption_ids[positive_index], []) if r.contrast.lower() not in seen]
            if not options:
                split.dropped[f"positive has no {kind} contrast"] += 1
                continue
            order[-1] = options[_video_rng(config.seed, video_id, 1).integers(len(options))]
        permutation = rng.permutation(N_OPTIONS)  # option i shows order[permutation[i]]
        endings = tuple(order[j] for j in permutation)
        label = int(np.flatnonzero(permutation == 0)[0])
        if kind != "random":
            contrast_option = int(np.flatnonzero(permutation == N_NEGATIVES)[0])
        split.instances.append(MCInstance(video_id, endings, label))
        split.caption_ids.append(captions.caption_ids[positive_index])
        split.contrast_options.append(contrast_option)
    return split


def infer_contrast_option(instance: MCInstance) -> int:
    """For splits made elsewhere (human TSVs): the negative closest to the positive, word by word."""
    positive = instance.positive.lower().split()
    ratios = [
        -1.0 if i == instance.label else difflib.SequenceMatcher(None, positive, ending.lower().split()).ratio()
        for i, ending in enumerate(instance.endings)
    ]
    return int(np.argmax(ratios))


# --------------------------------------------------------------------------- scoring


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
    from tvrbench.generators.lm import mean_logprobs

    texts = sorted({t for inst in instances for t in inst.endings})
    means = dict(zip(texts, mean_logprobs(lm, texts)))
    return np.array([[means[t] for t in inst.endings] for inst in instances])


def score_mc(
    instances: Sequence[MCInstance],
    scores: np.ndarray,
    contrast_options: Sequence[int | None] | None = None,
    records: Sequence[ContrastRecord] | None = None,
    model=None,
    similar_fraction: float = 0.15,
) -> dict:
    """Accuracy and tie rate overall, and the Table 4 / Table 5 subsets that the inputs allow."""
    labels = np.array([inst.label for inst in instances])
    correct, tie = mc_outcomes(scores, labels)
    result = summarize(correct, tie)
    if contrast_options is None:
        return result
    matched = _match_records(instances, contrast_options, records or ())
    subsets = {}
    antonym = np.array([bool(r and r.filters.get("meaning-changed", {}).get("antonym")) for r in matched])
    if records:
        subsets["antonym"] = summarize(correct, tie, antonym)
        rare = np.array([bool(r and r.details.get("rare_original")) for r in matched])
        if any(r is not None and "rare_original" in r.details for r in matched):
            subsets["rare_id"] = summarize(correct, tie, rare)
    if model is not None:
        rest = np.flatnonzero(~antonym)
        similarity = _cosines(model, [instances[i].positive for i in rest], [instances[i].endings[contrast_options[i]] for i in rest])
        take = int(round(similar_fraction * len(rest)))
        order = rest[np.argsort(-similarity, kind="stable")]
        percent = round(100 * similar_fraction)
        subsets[f"most_similar_{percent}"] = summarize(correct, tie, order[:take])
        subsets[f"least_similar_{percent}"] = summarize(correct, tie, order[len(order) - take :])
    result["subsets"] = subsets
    return result


def _match_records(instances, contrast_options, records) -> list[ContrastRecord | None]:
    """The record behind each instance's contrast option (same video, positive and contrast text)."""
    by_key = {(r.video_id, r.original, r.contrast): r for r in records}
    return [by_key.get((inst.clip, inst.positive, inst.endings[o])) if o is not None else None for inst, o in zip(instances, contrast_options)]
