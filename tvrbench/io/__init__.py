"""Readers and writers for every input and output format tvrbench touches (SPEC §1).

Every reader raises :class:`tvrbench.errors.InputError` naming the file and the problem; every
writer is atomic.
"""
