"""Errors that the command line turns into one clear line and exit code 2."""

from __future__ import annotations

from os import PathLike


class InputError(Exception):
    """A user-supplied file or value is unusable; the message names it and says why."""

    def __init__(self, source: str | PathLike | None, problem: str):
        self.source = None if source is None else str(source)
        self.problem = problem
        super().__init__(f"{self.source}: {problem}" if self.source else problem)

    def __reduce__(self):  # raised in a Dask task, it crosses to the client pickled
        return type(self), (self.source, self.problem)


class MissingResource(Exception):
    """An optional resource (model, corpus, browser) is not installed; says how to get it."""

    def __init__(self, what: str, how: str):
        self.what = what
        self.how = how
        super().__init__(f"{what} is not available; get it with: {how}")


class Interrupted(KeyboardInterrupt):
    """Ctrl-C in a command that left the file a rerun resumes from (``X.jsonl.partial``): the command
    line's one line names it."""

    def __init__(self, resume_from: PathLike | str):
        self.resume_from = str(resume_from)
        super().__init__(self.resume_from)
