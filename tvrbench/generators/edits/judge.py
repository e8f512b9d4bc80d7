"""The language model's judgement of a word edit of any shape: one word, several (a count and its
agreement), words moved (a swap) or put in (an addition).

A contrast must read as well as its original (issue 45), so the judge compares the two where they
differ: the log-probability of the caption from the first word the edit changes to the end, given
the words before it (which both share), contrast minus original. That is the whole sentences'
log-probability gap, computed without scoring the shared words again. Issue 47's blind reads found
the edited words *with* the words after them the better judge of a verb contrast than the words
after alone (AUC +0.06 on both reads), so the edited words count here.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

from tvrbench.generators.base import Candidate, Check, by_target, changed_fields
from tvrbench.generators.config import EditChoiceConfig
from tvrbench.lm.models import LanguageModel
from tvrbench.numerics import NATS, NATS_PER_TOKEN, rounded


def first_change(candidate: Candidate) -> int:
    """The first character of the original that the candidate changes (or puts words before)."""
    return min(replacement.char_start for replacement in candidate.replacements)


class Scored(NamedTuple):
    """Log-probability of some tokens, and how many."""

    total: float
    tokens: int


class EditScores:
    """Each candidate's gap to its original, from the first changed word on (nats), and both sentences'
    per-token means: a target's candidates are scored after one left context (the words before the
    earliest change of any of them), run once. Scores are kept across chunks, up to ``limit`` (a
    target's later blocks reuse the original's, and the set policy's second search of a caption reuses
    all it judged before): a text's score never depends on what else the model scored (the numeric
    contract)."""

    def __init__(self, lm: LanguageModel, limit: int = 200_000):
        self.lm = lm
        self.limit = limit
        self.scores: dict[tuple[str, str], Scored] = {}  # (words before the cut, words from it): those words' score
        self.lefts: dict[str, Scored] = {}  # the words before a cut: theirs

    def clear_cache(self) -> None:
        """Only past ``limit``: what is kept is right for any chunk."""
        if len(self.scores) > self.limit:
            self.scores.clear()
            self.lefts.clear()

    def of(self, candidates: Sequence[Candidate]) -> list[tuple[Scored, Scored, Scored]]:
        """(the words before the cut, the original's from it, the candidate's from it) of each candidate.
        Targets whose words before the cut are the same (none, for an edit of a caption's first word:
        most of the counting kind's) are scored in one call, so the model's batches fill."""
        groups = []
        for positions in by_target(candidates).values():
            group = [candidates[k] for k in positions]
            original = group[0].original
            left = original[: min(map(first_change, group))]
            groups.append((positions, left, [original[len(left) :], *(c.text[len(left) :] for c in group)]))
        missing: dict[str, dict[str, None]] = {}
        for _, left, texts in groups:
            missing.setdefault(left, {}).update(dict.fromkeys(t for t in texts if (left, t) not in self.scores))
        for left, texts in missing.items():
            if texts:
                scored = self.lm.span_logprobs(left, list(texts), "")
                self.lefts[left] = Scored(float(scored[0].left.sum()), len(scored[0].left))
                for text, spans in zip(texts, scored):
                    self.scores[(left, text)] = Scored(float(spans.fill.sum() + spans.right.sum()), len(spans.fill) + len(spans.right))
        found: list = [None] * len(candidates)
        for positions, left, texts in groups:
            for k, text in zip(positions, texts[1:]):
                found[k] = (self.lefts[left], self.scores[(left, texts[0])], self.scores[(left, text)])
        return found


class ReadsAsWell:
    """The candidates whose caption reads best to the language model among those of their target it has
    judged, and not much worse than the original: a candidate passes if its gap (:class:`EditScores`)
    is at most ``max_behind_best`` below the best judged so far for its target and at most ``max_loss``
    below the original. The search hands it a target's candidates a block at a time, in the draw's
    order; most captions are decided by their first block.

    Relative to the best, not a fixed bar, as the verb kind's judge (:class:`~tvrbench.generators.verb.filters.ReadsAsReal`):
    what can fit is measured against what else fits the same place. Kept under the same name in the
    records (``reads-as-real``), with ``compared: edit`` saying what was compared, and ``per_token``, the
    two sentences' mean log-probability per token: the contrast run's LM preference reads them instead
    of scoring every pair again (a third of the model's work on a kind with many records)."""

    name = "reads-as-real"

    def __init__(self, scores: EditScores, settings: EditChoiceConfig):
        self.scores = scores
        self.max_behind_best = settings.max_behind_best
        self.max_loss = settings.max_loss
        self.changed = changed_fields(settings, ("max_behind_best", "max_loss"))
        self.best: dict[tuple[int, int], float] = {}

    def clear_cache(self) -> None:
        """The search calls this before each chunk: the scores and best gaps it keeps are the chunk's."""
        self.scores.clear_cache()
        self.best.clear()

    def check(self, candidates: Sequence[Candidate]) -> list[Check]:
        scored = self.scores.of(candidates)
        gaps = [rounded(new.total - original.total, NATS) for _, original, new in scored]  # decided on as the record shows them
        checks: list[Check] = [Check(False)] * len(candidates)
        for target, positions in by_target(candidates).items():
            best = self.best[target] = max(self.best.get(target, -float("inf")), *(gaps[k] for k in positions))
            for k in positions:
                passed = gaps[k] >= rounded(best - self.max_behind_best, NATS) and gaps[k] >= -self.max_loss
                left, original, new = scored[k]
                means = [rounded((left.total + s.total) / max(left.tokens + s.tokens, 1), NATS_PER_TOKEN) for s in (original, new)]
                checks[k] = Check(bool(passed), gaps[k], {"compared": "edit", "best": best, "per_token": means})
        return checks
