"""A language model's judgement of a new verb in its caption: does the rest of the caption still follow it?

Readers reject a verb contrast when the verb does not take its object or its place ("*wearing* some
food", "*driving* a camera"). A language model trained at scale knows that selection; what tells it
is the probability of the words after the verb given the caption up to and including it, compared
with the same words after the original verb. On blind reads it separates plausible contrasts from
the rest far better than the whole sentence's probability, which favours frequent verbs, or the
verb's own probability given the words before it (docs/contrast.md, "Choice: a seeded draw, judged
by the language model").
"""

from __future__ import annotations

from collections.abc import Sequence

from tvrbench.generators.base import Candidate, Check, by_target
from tvrbench.lm.models import LanguageModel, SpanLogprobs
from tvrbench.numerics import NATS, rounded


class SpanScores:
    """Each candidate's and its original's :class:`~tvrbench.lm.models.SpanLogprobs`, computed once
    per target and round (the left context's key-value cache shared by a target's fills) and kept
    for the other filters of the chunk that read them (the perplexity rule)."""

    def __init__(self, lm: LanguageModel):
        self.lm = lm
        self.scores: dict[tuple[int, int, str], SpanLogprobs] = {}

    def clear_cache(self) -> None:
        self.scores.clear()

    def of(self, candidates: Sequence[Candidate]) -> list[tuple[SpanLogprobs, SpanLogprobs]]:
        """(the original's, the candidate's) scores of each candidate, whose one replacement is the span."""
        for positions in by_target(candidates).values():
            first = candidates[positions[0]]
            replacement, text = first.replacements[0], first.original
            key = (first.request.item.index, first.request.target.start)
            fills = list(dict.fromkeys(f for f in [replacement.original, *(candidates[k].replacements[0].replacement for k in positions)]
                                       if (*key, f) not in self.scores))  # fmt: skip
            if fills:
                found = self.lm.span_logprobs(text[: replacement.char_start], fills, text[replacement.char_end :])
                self.scores.update({(*key, fill): scores for fill, scores in zip(fills, found)})
        out = []
        for candidate in candidates:
            key = (candidate.request.item.index, candidate.request.target.start)
            replacement = candidate.replacements[0]
            out.append((self.scores[(*key, replacement.original)], self.scores[(*key, replacement.replacement)]))
        return out


class ReadsAsReal:
    """A filter: the candidates whose caption reads best to the language model among those of their
    target it has judged. A candidate's score is how much more probable the words after its verb are
    than after the original verb (the continuation gap, in nats); it passes if that is at most
    ``max_behind_best`` below the best judged so far for its target and at most ``max_loss`` below the
    original. The search hands it a target's candidates a block at a time, in the draw's order, and
    stops after a number of them (``choice.judged``): most captions are decided by their first block.

    The best of a random sample, not a fixed bar: for most captions no other verb makes their words
    as likely as the original does ("a man is playing a guitar"), and a bar that most of them pass
    would let anything through; what can fit, fits relative to the other verbs that fit the frame.

    A caption that ends with its verb has no words after it; there the verb itself is compared, as a
    pointwise mutual information with what comes before it: log P(verb | the words before) − log
    P(verb | nothing), new minus original, which asks whether the subject does this and leaves out how
    common the verb is."""

    name = "reads-as-real"

    def __init__(self, spans: SpanScores, max_behind_best: float, max_loss: float):
        self.spans = spans
        self.max_behind_best = max_behind_best
        self.max_loss = max_loss
        self.best: dict[tuple[int, int], float] = {}  # per target: the best gap judged so far

    def clear_cache(self) -> None:
        """The search calls this before each chunk: the span scores and best gaps it keeps are the chunk's."""
        self.spans.clear_cache()
        self.best.clear()

    def check(self, candidates: Sequence[Candidate]) -> list[Check]:
        checks: list[Check] = [Check(False)] * len(candidates)
        for target, positions in by_target(candidates).items():
            gaps, compared = self.gaps([candidates[k] for k in positions])
            gaps = [rounded(gap, NATS) for gap in gaps]  # decided on as the record shows them (tvrbench.numerics)
            best = self.best[target] = max(self.best.get(target, -float("inf")), *gaps)
            for k, gap in zip(positions, gaps):
                passed = gap >= rounded(best - self.max_behind_best, NATS) and gap >= -self.max_loss
                checks[k] = Check(bool(passed), gap, {"compared": compared, "best": best})
        return checks

    def gaps(self, candidates: Sequence[Candidate]) -> tuple[list[float], str]:
        """Each candidate's gap to the original (one target's candidates), and what was compared."""
        scores = self.spans.of(candidates)
        first = candidates[0]
        if first.original[first.replacements[0].char_end :].strip():
            return [float(new.right.sum() - original.right.sum()) for original, new in scores], "continuation"
        replacement = first.replacements[0]
        before = first.original[: replacement.char_start]
        space = before[len(before.rstrip()) :]  # the fill's own tokens, as in the caption (word-initial space)
        fills = [replacement.original, *(c.replacements[0].replacement for c in candidates)]
        alone = [float(s.fill.sum()) for s in self.spans.lm.span_logprobs(space, fills, "")]
        return [float(new.fill.sum() - alone[k + 1] - (original.fill.sum() - alone[0])) for k, (original, new) in enumerate(scores)], "verb"
