"""The checks every reader of a user's file shares (tvrbench.io.files), the small CSV tables
(tvrbench.io.csv_tables) and the CSV field limit the io package lifts once for all."""

from __future__ import annotations

import csv
import json
import pickle

import pytest

import tvrbench.io
from tvrbench.errors import InputError
from tvrbench.io.csv_tables import read_csv, write_csv
from tvrbench.io.files import jsonl_objects, read_json_object, read_text_file, string_list


def test_importing_the_io_package_lifts_the_csv_field_limit(tmp_path):
    assert tvrbench.io.__name__ == "tvrbench.io" and csv.field_size_limit() == 2**31 - 1
    long = "a man " * 40_000  # 240 kB in one field: over Python's default limit of 128 KiB
    write_csv(tmp_path / "long.csv", [{"id": "1", "text": long}], ["id", "text"])
    assert read_csv(tmp_path / "long.csv", ["text"])[0]["text"] == long


@pytest.mark.parametrize(
    "content, message",
    [
        (None, "no such file"),
        ("folder", "is a directory"),
        (pickle.dumps({"a": 1}), "looks like a pickle"),
        (b"caf\xe9", r"not UTF-8 text \(byte 3\)"),
        (b" \n\t", "empty file"),
    ],
    ids=["absent", "folder", "pickle", "latin-1", "blank"],
)
def test_a_text_file_that_is_not_one_is_one_input_error_naming_it(tmp_path, content, message):
    path = tmp_path / "input.txt"
    if content == "folder":
        path.mkdir()
    elif content is not None:
        path.write_bytes(content)
    with pytest.raises(InputError, match=message) as raised:
        read_text_file(path)
    assert str(path) in str(raised.value)


def test_text_json_and_json_lines_read_as_written(tmp_path):
    path = tmp_path / "a.json"
    path.write_bytes("\ufeff".encode() + json.dumps({"é": [1, 2]}).encode())  # a byte-order mark is not text
    assert read_text_file(path).startswith("{") and read_json_object(path) == {"é": [1, 2]}
    path.write_text("[1, 2]")
    with pytest.raises(InputError, match="expected a JSON object"):
        read_json_object(path)
    path.write_text("{1: 2}")
    with pytest.raises(InputError, match="malformed JSON .*line 1"):
        read_json_object(path)
    lines = ['{"a": 1}', "", '{"b": 2}', "[3]"]
    records = jsonl_objects(path, "\n".join(lines))
    assert [next(records), next(records)] == [(1, {"a": 1}), (3, {"b": 2})]  # blank lines skipped, numbers kept
    with pytest.raises(InputError, match="line 4: expected a JSON object"):
        next(records)


def test_string_lists_are_checked_for_type_and_length(tmp_path):
    assert string_list({"ids": ["a", "b"]}, "ids", tmp_path, 2) == ["a", "b"]
    for data, length, message in [
        ({"ids": ["a", 1]}, None, "list of strings"),
        ({}, None, "list of strings"),
        ({"ids": ["a"]}, 2, "has 1 entries, expected 2"),
    ]:
        with pytest.raises(InputError, match=message):
            string_list(data, "ids", tmp_path, length)


def test_csv_tables_round_trip_with_types_and_name_the_bad_line(tmp_path):
    rows = [{"query": "q1", "rank": 1, "note": "a, b"}, {"query": "q2", "rank": 2, "note": 'say "hi"'}]
    write_csv(tmp_path / "t.csv", rows, ["query", "rank", "note"])
    assert (tmp_path / "t.csv").read_text().splitlines()[0] == "query,rank,note"
    assert read_csv(tmp_path / "t.csv", ["query", "rank"], {"rank": int}) == rows
    assert read_csv(tmp_path / "t.csv", ["query"])[1]["rank"] == "2"  # untyped columns stay text
    with pytest.raises(InputError, match="expected CSV columns query,score"):
        read_csv(tmp_path / "t.csv", ["query", "score"])
    (tmp_path / "t.csv").write_text("query,rank\nq1,1\nq2,two\n")
    with pytest.raises(InputError, match="line 3: rank 'two' is not an int"):
        read_csv(tmp_path / "t.csv", ["query"], {"rank": int})
