"""Progress on stderr: a plain line every PLAIN_EVERY seconds when stderr is no terminal, with the work
done in its units, a figure beside it, the rate and the time left."""

from __future__ import annotations

import tvrbench.progress as progress
from tvrbench.progress import plain_line, track


def test_plain_lines_say_what_is_done_the_rate_and_the_time_left(monkeypatch, capsys):
    monkeypatch.setattr(progress, "PLAIN_EVERY", 0.0)
    clock = iter(range(0, 1000, 10))  # each reading 10 s after the one before
    monkeypatch.setattr(progress.time, "monotonic", lambda: float(next(clock)))
    chunks = [[1] * 16, [1] * 16, [1] * 8]
    assert list(track(chunks, "verb contrasts", total=40, enabled=False, size=len, unit="captions", note=lambda: "3 records")) == chunks
    lines = capsys.readouterr().err.splitlines()
    assert lines == [
        "verb contrasts: 16/40 captions, 3 records, 1.6/s, about 15 s left",
        "verb contrasts: 32/40 captions, 3 records, 1.6/s, about 5 s left",
        "verb contrasts: 40/40 captions, 3 records, 1.3/s, about 0 s left",
    ]


def test_a_short_run_prints_nothing_and_long_waits_read_in_minutes(capsys):
    assert list(track(range(3), "parsing", enabled=False)) == [0, 1, 2]
    assert capsys.readouterr().err == ""
    assert plain_line("verb candidates", 100, 1000, 100.0, "targets", "") == "verb candidates: 100/1000 targets, 1/s, about 15 min left"


def test_progress_goes_where_it_is_sent_while_the_output_goes_elsewhere(monkeypatch, capsys):
    """The demo's console shows each step's progress, while the step's own output goes to its log."""
    import io

    clock = iter(range(0, 1000, 10))
    monkeypatch.setattr(progress.time, "monotonic", lambda: float(next(clock)))
    console = io.StringIO()
    with progress.progress_to(console, every=5.0):
        assert list(track([[1] * 4, [1] * 4], "parsing captions", total=8, size=len, unit="captions")) == [[1] * 4, [1] * 4]
    assert console.getvalue().splitlines() == [
        "parsing captions: 4/8 captions, 0.4/s, about 10 s left",
        "parsing captions: 8/8 captions, 0.4/s, about 0 s left",
    ]
    assert capsys.readouterr().err == ""
