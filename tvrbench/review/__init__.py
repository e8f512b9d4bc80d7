"""People check the negatives: a blind review of contrast sets (docs/review.md).

A review asks readers one question of each sentence: could a person have written it to describe a
real video? :mod:`~tvrbench.review.kit` samples contrasts from each set under review,
mixes in real captions (the readers' care) and optionally a reference set, shuffles them with their
sources hidden, and writes a kit: an HTML form and a CSV for readers, and a key for the scorer.
:mod:`~tvrbench.review.score` reads the filled verdict files against the key: the share
of each set that every reader accepted, with a Wilson interval, each reader's acceptance of the real
captions, and their agreement (Cohen's κ, Krippendorff's α). ``mc build --reviewed`` then builds only
from contrasts nobody rejected, and carries the reviewed share to the audit, the card and the report.
"""

from tvrbench.review.kit import ReviewKit, make_kit, write_kit
from tvrbench.review.score import ReviewScore, read_review, score_review

__all__ = ["ReviewKit", "ReviewScore", "make_kit", "read_review", "score_review", "write_kit"]
