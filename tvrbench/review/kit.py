"""A blind review kit: a seeded sample of each contrast set, real captions as controls, shuffled, sources hidden.

The kit folder holds what readers see and what only the scorer reads::

    KIT/reader/form.html        one click per sentence, saves the verdicts as CSV (works offline)
    KIT/reader/sentences.csv    the same numbered list, for a crowd platform (number, sentence, verdict)
    KIT/reader/instructions.md  the one question, with examples of each answer
    KIT/key.json                the hidden key: each number's source, caption and original, the inputs' digests

Nothing under ``reader/`` names a source or says which sentences are real. Each sampled contrast's
original caption is shown to nobody, in no form: a reader who saw "a man is cooking" beside "a woman
is cooking" would judge the edit, not the sentence. So no original appears twice across the sources
under review, and no control is the original of a sampled contrast.
"""

from __future__ import annotations

import html
import json
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from importlib import resources
from pathlib import Path

import numpy as np

from tvrbench.errors import InputError
from tvrbench.generators.records import read_contrast_records
from tvrbench.io.atomic import atomic_folder
from tvrbench.io.captions import Captions
from tvrbench.io.csv_tables import write_csv
from tvrbench.io.files import require_file
from tvrbench.io.mc import infer_contrast_option, read_mc, saved_contrast_options
from tvrbench.io.outputs import Output, check_outputs
from tvrbench.io.writers import mark, written_by
from tvrbench.results import Sources, analysis_signature
from tvrbench.signature import Signature, input_digest, text_digest

QUESTION = "Could a person have written this sentence to describe a real video?"
ANSWERS = ("yes", "no")
CAPTIONS_SOURCE = "real captions"
KEY = "key.json"  # the hidden key's file name in a kit folder, which names review-kit as the folder's writer
WRITER = "contrast review-kit"
# Shown to every reader with the question; made up, so no sentence of any kit is among them.
EXAMPLES = {
    "yes": ("a man is slicing tomatoes in a kitchen", "two kids ride bikes down a hill", "a woman explains how to fold a paper crane"),
    "no": ("a man is garaging a sandwich", "a girl drinks the piano on stage", "a dog is lecturing a bowl of soup"),
}
INSTRUCTIONS = f"""# One question per sentence

**{QUESTION}**

Answer **yes** if someone watching a video could have written it: it describes something that can
happen and reads as ordinary English. Answer **no** if it describes something odd or impossible, or
uses a word in a way no one would. Judge each sentence on its own. Missing capitals, missing
punctuation and small slips are fine: people write descriptions that way.

Examples of **yes**: {"; ".join(f'"{text}"' for text in EXAMPLES["yes"])}.

Examples of **no**: {"; ".join(f'"{text}"' for text in EXAMPLES["no"])}.

Open `form.html` in a browser, type your name, click **yes** or **no** for every sentence (keys
`y` / `n` answer the highlighted one), then **Save verdicts**: it downloads a CSV to send back. Your
answers stay in the browser if you close the page. Or fill the `verdict` column of `sentences.csv`
with `yes` or `no` on every row, and add a `reader` column with your name.
"""


@dataclass(frozen=True)
class Sentence:
    """One sentence a kit may show, and what only the key knows of it."""

    sentence: str
    source: str  # the set it came from, or CAPTIONS_SOURCE
    role: str  # contrast (under review), reference (another published set) or caption (a real caption)
    original: str | None = None  # the caption it was made from (a real caption: itself)
    caption_id: str | None = None
    video_id: str | None = None


@dataclass(frozen=True)
class ReviewKit:
    """The sampled sentences in the order readers see them (number = index + 1), with its settings."""

    sentences: list[Sentence]
    sources: list[dict]  # name, role, file, digest, offered (its sentences), sampled
    signature: Signature
    seed: int

    def key(self) -> dict:
        """What the scorer needs and readers must not see."""
        return {
            "kit_id": self.kit_id,
            "question": QUESTION,
            "answers": list(ANSWERS),
            "seed": self.seed,
            "sources": self.sources,
            "sentences": [{"number": number, **asdict(s)} for number, s in enumerate(self.sentences, start=1)],
            "signature": str(self.signature),
        }

    @property
    def kit_id(self) -> str:
        """The digest of the sentences shown: the form keeps a reader's answers under it."""
        return text_digest(s.sentence for s in self.sentences)

    @property
    def summary(self) -> str:
        counts = ", ".join(f"{source['name']} {source['sampled']}" for source in self.sources)
        return f"{len(self.sentences)} sentences ({counts}), shuffled, sources hidden"


def contrast_sentences(path: str | Path, name: str, role: str = "contrast") -> list[Sentence]:
    """The contrasts of a contrast JSONL file (``tvrbench contrast``) or an MC split's contrast options
    (``mc build`` / ``mc import``; a split without a sidecar: the negative closest to the positive)."""
    path = Path(path)
    if require_file(path, "a contrast file or an MC split").removeprefix(b"\xef\xbb\xbf").startswith(b"clip\t"):  # an MC TSV's header
        instances = read_mc(path)
        options = saved_contrast_options(path, len(instances)) or [infer_contrast_option(instance) for instance in instances]
        return [
            Sentence(instance.endings[option], name, role, instance.positive, None, instance.clip)
            for instance, option in zip(instances, options)
            if option is not None
        ]
    return [Sentence(r.contrast, name, role, r.original, r.caption_id, r.video_id) for r in read_contrast_records(path)]


def caption_sentences(captions: Captions) -> list[Sentence]:
    return [Sentence(t, CAPTIONS_SOURCE, "caption", t, c, v) for c, t, v in zip(captions.caption_ids, captions.texts, captions.video_ids)]


def _folded(text: str) -> str:
    return " ".join(text.lower().split())


def sample_kit(pools: Sequence[list[Sentence]], per_source: int, controls: int, seed: int) -> list[Sentence]:
    """``per_source`` sentences of each pool but the last and ``controls`` of the last (the real
    captions), shuffled. A pool is drawn in a seeded order; a sentence is skipped whose original was
    already used or whose text is already in the kit, so readers never see two versions of one caption."""
    rng = np.random.default_rng(seed)
    used: set[str] = set()  # originals, and every text shown
    chosen: list[Sentence] = []
    for number, pool in enumerate(pools):
        wanted = controls if number == len(pools) - 1 else per_source
        taken = 0
        for index in rng.permutation(len(pool)):
            if taken == wanted:
                break
            sentence = pool[index]
            keys = {_folded(sentence.sentence), _folded(sentence.original or sentence.sentence)}
            if keys & used:
                continue
            used |= keys
            chosen.append(sentence)
            taken += 1
    return [chosen[index] for index in rng.permutation(len(chosen))]


def make_kit(
    contrasts: Mapping[str, Path], captions: Captions, captions_path: Path, per_source: int = 50, controls: int = 25, seed: int = 0,
    references: Mapping[str, Path] | None = None,
) -> ReviewKit:  # fmt: skip
    """The kit for the contrast sets ``contrasts`` (name → file), controls from ``captions``, and
    optionally reference sets read beside them as controls of another kind."""
    if per_source < 1 or controls < 0:
        raise InputError(None, "--per-source must be at least 1 and --controls at least 0")
    named = [(name, path, "contrast") for name, path in contrasts.items()] + [(name, path, "reference") for name, path in (references or {}).items()]
    if not contrasts:
        raise InputError(None, "no contrast set to review: give --contrast NAME=FILE")
    if CAPTIONS_SOURCE in {name for name, _, _ in named}:
        raise InputError(None, f"{CAPTIONS_SOURCE!r} names the real captions; name the set otherwise")
    pools = [contrast_sentences(path, name, role) for name, path, role in named] + [caption_sentences(captions)]
    sentences = sample_kit(pools, per_source, controls, seed)
    sampled = {name: sum(s.source == name for s in sentences) for name in [*(n for n, _, _ in named), CAPTIONS_SOURCE]}
    sources = [
        {
            "name": name,
            "role": role,
            "file": str(Path(path).resolve()),
            "digest": input_digest("contrast", path),
            "offered": len(pool),
            "sampled": sampled[name],
        }
        for (name, path, role), pool in zip([*named, (CAPTIONS_SOURCE, captions_path, "caption")], pools)
    ]
    files: Sources = {"contrast": list(contrasts.values()), "reference": list((references or {}).values()), "captions": captions_path}
    signature = analysis_signature("review-kit", files, {"seed": seed, "per_source": per_source, "controls": controls, "sentences": len(sentences)})
    return ReviewKit(sentences, sources, signature, seed)


def write_kit(kit: ReviewKit, folder: Path, overwrite: bool = False) -> None:
    """The kit folder (module docstring), built beside ``folder`` and moved into place when complete.
    It replaces only a folder a command wrote whole (an earlier kit, a fine-tuned model), and that only
    with ``overwrite``: a folder that holds anything else is never removed."""
    if not overwrite and written_by(folder) == WRITER:
        raise InputError(folder, "holds a review kit already; --overwrite replaces it (verdicts made on it will no longer match)")
    check_outputs([Output(folder, "--out", folder=True, writer=WRITER)], [], overwrite)
    with atomic_folder(folder) as staging:
        reader = staging / "reader"
        rows = [{"number": number, "sentence": s.sentence, "verdict": ""} for number, s in enumerate(kit.sentences, start=1)]
        write_csv(reader / "sentences.csv", rows, ("number", "sentence", "verdict"))
        (reader / "instructions.md").write_text(INSTRUCTIONS, encoding="utf-8")
        (reader / "form.html").write_text(form_html(kit), encoding="utf-8")
        (staging / KEY).write_text(json.dumps(mark(kit.key(), WRITER), indent=2) + "\n", encoding="utf-8")


def form_html(kit: ReviewKit) -> str:
    """The self-contained form: the instructions, then the numbered sentences with a yes and a no button each."""
    template = resources.files("tvrbench.review").joinpath("form.html").read_text(encoding="utf-8")
    examples = "".join(
        f'<li><span class="answer {answer}">{answer}</span> {html.escape(text)}</li>' for answer, texts in EXAMPLES.items() for text in texts
    )
    sentences = [{"number": number, "sentence": s.sentence} for number, s in enumerate(kit.sentences, start=1)]
    return (
        template.replace("{{QUESTION}}", html.escape(QUESTION))
        .replace("{{EXAMPLES}}", examples)
        .replace("{{KIT_ID}}", kit.kit_id)
        .replace("{{SENTENCES_JSON}}", json.dumps(sentences).replace("</", "<\\/"))
    )
