"""Build a proxy matrix (one proxy, caption or video level) and compute it in row blocks.

Writing (``.npy``, ``.zarr``, ``.parquet``, ``.npz``; here or on a Dask cluster) is in :mod:`tvrbench.proxies.storage`;
reading any of them back in :func:`tvrbench.io.relevance.open_relevance`.
"""

from __future__ import annotations

import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import scipy.sparse as sp

from tvrbench.errors import InputError
from tvrbench.proxies.config import ProxyConfig
from tvrbench.proxies.learned import CosineKernel, sentence_embeddings, unit_rows, video_embeddings
from tvrbench.proxies.parsing import ParsedCaptions, check_texts, parse_captions, pipeline_name
from tvrbench.proxies.video import VideoGroups
from tvrbench.resources import sentence_model_name
from tvrbench.resources import wordnet as load_wordnet
from tvrbench.signature import Signature, file_digest, text_digest

SET_PROXIES = ("bow", "pos", "syn")
PROXIES = (*SET_PROXIES, "met", "embedding", "visual")
LEVELS = ("caption", "video")
SIDECAR_FORMAT = 1


@dataclass
class ProxyMatrix:
    """A relevance matrix not yet computed: a kernel giving blocks of rows, and the pairs fixed at 1."""

    kernel: object  # has .shape and .block(rows: slice) -> float64 array
    ones: sp.csr_matrix  # rows x columns; 1 where the caption is the row's own (diagonal or own video)
    proxy: str
    level: str
    row_ids: list[str]
    col_ids: list[str]
    signature: Signature
    col_videos: list[str] | None = None  # video id of each column caption, when known
    seconds: dict[str, float] = field(default_factory=dict)  # "parse", "prepare" (sets, vocabularies, embeddings)

    @property
    def shape(self) -> tuple[int, int]:
        return self.kernel.shape

    def block(self, rows: slice) -> np.ndarray:
        values = self.kernel.block(rows)
        own = self.ones[rows].tocoo()
        values[own.row, own.col] = 1.0
        return values

    def block_rows(self, block_mb: float = 256) -> int:
        """Rows per block, so that a block and its temporaries stay within about ``block_mb`` MiB."""
        return max(1, int(block_mb * 2**20) // (max(1, self.shape[1]) * 8 * 4))

    def blocks(self, block_mb: float = 256, start: int = 0) -> Iterator[tuple[slice, np.ndarray]]:
        """Row blocks of :meth:`block_rows` rows, from row ``start`` on."""
        step = self.block_rows(block_mb)
        for first in range(start, self.shape[0], step):
            rows = slice(first, min(first + step, self.shape[0]))
            yield rows, self.block(rows)

    def compute(self, dtype=np.float32, block_mb: float = 256) -> np.ndarray:
        out = None
        for rows, values in self.blocks(block_mb):
            if rows.start == 0 and rows.stop == self.shape[0]:
                return values.astype(dtype, copy=False)  # one block: no second copy
            if out is None:
                out = np.empty(self.shape, dtype=dtype)
            out[rows] = values
        return np.empty(self.shape, dtype=dtype) if out is None else out

    def sidecar(self, dtype: str, storage: str = "dense") -> dict:
        return {
            "format": SIDECAR_FORMAT,
            "signature": str(self.signature),
            "proxy": self.proxy,
            "level": self.level,
            "rows": "videos" if self.level == "video" else "captions",
            "columns": "captions",
            "shape": list(self.shape),
            "dtype": dtype,
            "storage": storage,
            "row_ids": self.row_ids,
            "col_ids": self.col_ids,
            "col_videos": self.col_videos,
        }


def _wordnet(wordnet):
    if wordnet is not None:
        return wordnet

    return load_wordnet()


def build_proxy(
    captions: ParsedCaptions | Sequence[str],
    proxy: str,
    level: str = "caption",
    *,
    caption_ids: Sequence[str] | None = None,
    video_ids: Sequence[str] | None = None,
    config: ProxyConfig | None = None,
    wordnet=None,
    features: np.ndarray | None = None,
) -> ProxyMatrix:
    """Prepare one proxy: parse if needed, build sets / vocabularies / embeddings; the pairs come later.

    ``video_ids`` (one per caption) is needed at video level; ``features`` (videos x dims, videos in
    order of first appearance) for the visual proxy.
    """
    config = config or ProxyConfig()
    if proxy not in PROXIES:
        raise InputError(None, f"unknown proxy {proxy!r}; choose one of {', '.join(PROXIES)}")
    if level not in LEVELS:
        raise InputError(None, f"unknown level {level!r}; choose caption or video")
    texts = captions.texts if isinstance(captions, ParsedCaptions) else check_texts(captions)
    caption_ids = [str(i) for i in range(len(texts))] if caption_ids is None else list(caption_ids)
    videos = None
    if level == "video" or proxy == "visual":
        if video_ids is None or len(video_ids) != len(texts):
            raise InputError(None, f"the {level}-level {proxy} proxy needs one video id per caption")
        videos = VideoGroups.from_caption_videos(video_ids)
    groups = videos if level == "video" else VideoGroups.singletons(caption_ids)
    fields: dict[str, object] = {"proxy": proxy, "level": level, "captions": f"{len(texts)}:{text_digest(texts)}"}
    seconds: dict[str, float] = {}
    if proxy in SET_PROXIES:
        if isinstance(captions, ParsedCaptions) or proxy != "bow":
            parsed = (
                captions if isinstance(captions, ParsedCaptions) else parse_captions(texts, config.spacy_model, config.batch_size, config.n_process)
            )
            pipeline, seconds["parse"] = parsed.pipeline, parsed.parse_seconds
        else:  # BoW splits the text on spaces: no parse, only the pipeline's name (for the signature)
            started = time.perf_counter()
            parsed, pipeline = None, pipeline_name(config.spacy_model)
            seconds["parse"] = time.perf_counter() - started
        started = time.perf_counter()
        kernel, libraries = _set_kernel(texts, parsed, pipeline, proxy, groups, level, config, wordnet, fields)
    else:
        started = time.perf_counter()
        if proxy == "met":
            kernel, libraries = _meteor_kernel(texts, groups, level, config, wordnet, fields)
        else:
            kernel, libraries = _cosine_kernel(texts, proxy, groups, videos, level, config, features, fields)
    seconds["prepare"] = time.perf_counter() - started
    ones = groups.membership().astype(bool).tocsr()
    return ProxyMatrix(
        kernel,
        ones,
        proxy,
        level,
        groups.video_ids,
        caption_ids,
        Signature(fields, libraries=["numpy", "scipy", *libraries]),
        None if video_ids is None else [str(v) for v in video_ids],
        seconds,
    )


def _set_kernel(
    texts: list[str],
    parsed: ParsedCaptions | None,
    pipeline: str,
    proxy: str,
    groups: VideoGroups,
    level: str,
    config: ProxyConfig,
    wordnet,
    fields: dict,
):
    from tvrbench.proxies.sets import IoUKernel, incidence, proxy_items, proxy_weights, read_classes, stop_words, video_sets

    wn = _wordnet(wordnet) if proxy == "syn" else None
    weights = proxy_weights(proxy, config.pos_weights)
    classes = {tag: read_classes(path) for tag, path in config.classes.items()} if proxy == "syn" else {}
    membership = groups.membership() if level == "video" else None
    parts = []
    for part, items in proxy_items(texts, parsed, proxy, config.pos_weights, wn, classes).items():
        if weights[part] == 0:
            continue
        caption_sets = incidence(items, {})
        rows = caption_sets if membership is None else video_sets(caption_sets, membership, config.video_word_fraction)
        parts.append((rows, caption_sets, weights[part]))
    fields.update(tokenization="compat", stop_words=f"spacy-en-{len(stop_words())}", pipeline=pipeline)
    if proxy != "bow":
        fields["alpha"] = [f"{tag}={weight:g}" for tag, weight in weights.items()]
    if proxy == "syn":
        fields.update(wordnet=wn.get_version(), synsets="wordnet-lemmatizer+lesk")
        if config.classes:
            fields["classes"] = [f"{tag}={Path(path).name}:{file_digest(path)}" for tag, path in config.classes.items()]
    if level == "video":
        fields["video_words"] = f">={config.video_word_fraction:g}"
    return IoUKernel(parts), ["spacy"] + (["nltk"] if proxy == "syn" else [])


def _meteor_kernel(texts: list[str], groups: VideoGroups, level: str, config: ProxyConfig, wordnet, fields: dict):
    from tvrbench.proxies.meteor import MeteorKernel

    wn = _wordnet(wordnet)
    kernel = MeteorKernel(texts, wn, groups.members, config.meteor_alpha, config.meteor_beta, config.meteor_gamma)
    fields.update(
        tokenization="whitespace+lower",
        wordnet=wn.get_version(),
        stemmer="porter",
        meteor=f"alpha={config.meteor_alpha:g},beta={config.meteor_beta:g},gamma={config.meteor_gamma:g}",
    )
    if level == "video":
        fields["kernel"] = "half(mean+max)"
    return kernel, ["nltk"]


def _cosine_kernel(
    texts: list[str],
    proxy: str,
    groups: VideoGroups,
    videos: VideoGroups | None,
    level: str,
    config: ProxyConfig,
    features: np.ndarray | None,
    fields: dict,
):
    fields["cosine"] = "clipped-at-0"
    if proxy == "embedding":
        vectors = sentence_embeddings(texts, config.embedding_model, config.embedding_batch_size)
        fields["model"] = sentence_model_name(config.embedding_model)
        return CosineKernel(vectors if level == "caption" else video_embeddings(vectors, groups), vectors), ["sentence-transformers"]
    if features is None:
        raise InputError(None, "the visual proxy needs video features (--features FEATURES.npy)")
    if features.shape[0] != len(videos.video_ids):
        raise InputError(None, f"features have {features.shape[0]} rows for {len(videos.video_ids)} videos")
    features = unit_rows(np.asarray(features, dtype=np.float64))
    owner = videos.video_of_caption()
    fields["features"] = f"{features.shape[0]}x{features.shape[1]}"
    return CosineKernel(features if level == "video" else features[owner], features[owner]), []


def proxy_matrix(
    captions: ParsedCaptions | Sequence[str], proxy: str, level: str = "caption", *, dtype=np.float32, block_mb: int = 256, **options
) -> np.ndarray:
    """The matrix in memory: ``M[i, j]`` = S(row i, caption j), own pairs 1 (options: see :func:`build_proxy`)."""
    return build_proxy(captions, proxy, level, **options).compute(dtype, block_mb)
