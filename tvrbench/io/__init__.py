"""Readers and writers for every input and output format tvrbench touches (SPEC §1).

Every reader raises :class:`tvrbench.errors.InputError` naming the file and the problem; every
writer is atomic.
"""

import csv

# Python's csv module refuses fields over 128 KiB by default; a long caption is still a caption.
# Every CSV reader of tvrbench imports this package first, so the limit is lifted once for all.
csv.field_size_limit(2**31 - 1)
