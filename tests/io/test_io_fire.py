"""FIRE reader / writer: columns equal to json.load's view of the file, round trips, bad input."""

import json
import os
import pickle

import numpy as np
import pytest

from tvrbench.errors import InputError
from tvrbench.io.fire import FireRecord, RaggedInts, iter_fire, read_fire, write_fire

METADATA = {
    "source_ds": "2022-05-23",
    "source_data_md5": "a" * 32,
    "source_annotator_map_md5": "b" * 32,
    "created_ds": "2022-06-01 10:00:00",
    "email": "x@example.org",
    "creator": "test",
    "website": "https://example.org",
    "license": "CC0",
    "datasets": ["MSVD", "MSRVTT"],
}


def annotation(query, video, label, labels=None, models=("CE",), dataset="MSRVTT", response=1):
    labels = list(labels or [label])
    return {
        "annotator_ids": list(range(len(labels))),
        "label": label,
        "video_id": video,
        "query": query,
        "annotator_labels": labels,
        "response_ids": [response + i for i in range(len(labels))],
        "queue_ids": [9_000_000_000_000_000 + i for i in range(len(labels))],
        "models": list(models),
        "dataset": dataset,
    }


def fire_document():
    annotations = [
        annotation("a man is cooking", "video1", "relevant", response=10),
        annotation("a man is cooking", "video2", "irrelevant", ["irrelevant", "relevant", "irrelevant"], models=("CE", "SSB", "CE"), response=20),
        annotation("a dog runs", "v_abc_1_5", "relevant", dataset="MSVD", models=("CLIP4CLIP",), response=30),
        annotation("a girl sings", "video3", "irrelevant", ["irrelevant", "irrelevant"], models=("SSB", "CE"), response=2**62),
    ]
    disagreement = annotation("a dog runs", "v_xyz_3_9", None, ["relevant", "irrelevant"], dataset="MSVD", response=40)
    del disagreement["label"]
    return {"annotations": annotations, "disagreements": [disagreement], **METADATA}


@pytest.fixture
def fire_file(tmp_path):
    path = tmp_path / "fire.json"
    path.write_text(json.dumps(fire_document()), encoding="utf-8")
    return path


def write_document(tmp_path, document, name="bad.json"):
    path = tmp_path / name
    path.write_text(document if isinstance(document, str) else json.dumps(document), encoding="utf-8")
    return path


def test_columns_match_the_json(fire_file):
    document = json.loads(fire_file.read_text())
    labels = read_fire(fire_file)
    rows = document["annotations"] + document["disagreements"]
    assert len(labels) == len(rows) == 5
    assert labels.query.tolist() == [r["query"] for r in rows]
    assert labels.video_id.tolist() == [r["video_id"] for r in rows]
    assert labels.label.dtype == np.int8
    assert labels.label.tolist() == [1, 0, 1, 0, -1]
    assert labels.dataset.tolist() == [r["dataset"] for r in rows]
    assert labels.models == [tuple(r["models"]) for r in rows]
    assert labels.annotator_labels == [tuple(int(v == "relevant") for v in r["annotator_labels"]) for r in rows]
    assert labels.annotator_ids == [tuple(r["annotator_ids"]) for r in rows]
    assert [labels.response_ids[i] for i in range(5)] == [tuple(r["response_ids"]) for r in rows]
    assert labels.metadata == METADATA
    assert labels.source == str(fire_file)
    assert labels.datasets() == ["MSRVTT", "MSVD"]
    # repeated strings are stored once
    assert labels.query[0] is labels.query[1]


def test_nested_metadata_is_kept(tmp_path):
    document = fire_document()
    document["provenance"] = {"tool": "x", "steps": [1, {"a": None}]}
    labels = read_fire(write_document(tmp_path, document, "fire.json"))
    assert labels.metadata["provenance"] == {"tool": "x", "steps": [1, {"a": None}]}
    assert len(labels) == 5


def test_iter_fire_yields_validated_records_in_file_order(fire_file):
    records = list(iter_fire(fire_file))
    assert all(isinstance(r, FireRecord) for r in records)
    assert [r.label for r in records] == ["relevant", "irrelevant", "relevant", "irrelevant", None]
    assert records[3].response_ids == [2**62, 2**62 + 1]


def test_round_trip_keeps_every_field(fire_file, tmp_path):
    labels = read_fire(fire_file)
    out = tmp_path / "out.json"
    write_fire(out, labels)
    assert json.loads(out.read_text()) == json.loads(fire_file.read_text())
    again = read_fire(out)
    assert [again.row(i) for i in range(len(again))] == [labels.row(i) for i in range(len(labels))]


def test_select_subset_and_dataset_filter(fire_file):
    labels = read_fire(fire_file)
    msvd = labels.select("MSVD")
    assert msvd.video_id.tolist() == ["v_abc_1_5", "v_xyz_3_9"]
    assert msvd.label.tolist() == [1, -1]
    assert msvd.metadata["datasets"] == ["MSVD"]
    assert [msvd.response_ids[i] for i in range(2)] == [(30,), (40, 41)]
    filtered = read_fire(fire_file, dataset="MSVD")
    assert [filtered.row(i) for i in range(2)] == [msvd.row(i) for i in range(2)]
    picked = labels.subset(np.array([4, 1]))
    assert picked.label.tolist() == [-1, 0]
    assert picked.annotator_ids == [(0, 1), (0, 1, 2)]
    assert [picked.queue_ids[i] for i in range(2)] == [labels.queue_ids[4], labels.queue_ids[1]]
    with pytest.raises(InputError, match=r"no labels for dataset 'YouCook2'.*MSRVTT, MSVD") as caught:
        labels.select("YouCook2")
    assert caught.value.source == str(fire_file)
    with pytest.raises(InputError, match="no labels for dataset 'LSMDC'"):
        read_fire(fire_file, dataset="LSMDC")


def test_ragged_take_equals_a_python_loop():
    rng = np.random.default_rng(3)
    rows = [tuple(rng.integers(0, 100, rng.integers(0, 4)).tolist()) for _ in range(50)]
    ragged = RaggedInts.from_rows(rows)
    indices = rng.integers(0, 50, 30)
    taken = ragged.take(indices)
    assert [taken[i] for i in range(30)] == [rows[i] for i in indices]


def broken(mutate):
    document = fire_document()
    mutate(document)
    return document


BAD_DOCUMENTS = {
    "malformed": ('{"annotations": [{"annotator_ids": [1] "label": "relevant"}]}', r"malformed JSON in annotations\[0\]: parse error"),
    "truncated": (json.dumps(fire_document())[:300], r"malformed JSON in annotations\[\d\]: parse error: premature EOF"),
    "missing field": (broken(lambda d: d["annotations"][2].pop("video_id")), r"annotations\[2\] is missing field 'video_id'"),
    "missing label": (broken(lambda d: d["annotations"][1].pop("label")), r"annotations\[1\] is missing field 'label'"),
    "null label": (broken(lambda d: d["annotations"][2].update(label=None)), r"annotations\[2\] has label null"),
    "unknown label": (broken(lambda d: d["annotations"][0].update(label="maybe")), r"annotations\[0\] field 'label'.*'maybe'"),
    "unknown annotator label": (
        broken(lambda d: d["annotations"][1]["annotator_labels"].__setitem__(1, "yes")),
        r"annotations\[1\] field 'annotator_labels.1'",
    ),
    "string id": (broken(lambda d: d["annotations"][3].update(annotator_ids=["7"])), r"annotations\[3\] field 'annotator_ids.0'.*integer.*'7'"),
    "float id": (broken(lambda d: d["disagreements"][0].update(queue_ids=[1.5])), r"disagreements\[0\] field 'queue_ids.0'"),
    "numeric video id": (broken(lambda d: d["annotations"][0].update(video_id=7)), r"field 'video_id'.*string"),
    "disagreement with label": (broken(lambda d: d["disagreements"][0].update(label="relevant")), r"disagreements\[0\] has a label"),
    "no labels": (broken(lambda d: d["annotations"][0].update(annotator_labels=[])), r"annotations\[0\] has no annotator"),
    "record not object": (broken(lambda d: d["annotations"].insert(1, "a man")), r"annotations\[1\] is 'a man'"),
    "nested value": (
        broken(lambda d: d["annotations"][1].update(query={"text": "a man"})),
        r"annotations\[1\] field 'query': Input should be a valid string \(got \{'text': 'a man'\}\)",
    ),
    "nested list item": (broken(lambda d: d["annotations"][0].update(models=[["CE"]])), r"annotations\[0\] field 'models.0'.*\['CE'\]"),
    "section not list": (broken(lambda d: d.update(annotations={"a": 1})), r"'annotations' must be a list"),
    "no disagreements": (broken(lambda d: d.pop("disagreements")), r"no 'disagreements' list"),
    "top level list": ("[1, 2]", "expected a JSON object"),
    "id too large": (broken(lambda d: d["annotations"][0].update(response_ids=[2**70])), r"does not fit in 64 bits"),
}


@pytest.mark.parametrize("case", BAD_DOCUMENTS)
def test_bad_documents_raise_one_input_error_naming_the_file(tmp_path, case):
    document, message = BAD_DOCUMENTS[case]
    path = write_document(tmp_path, document)
    with pytest.raises(InputError, match=message) as caught:
        read_fire(path)
    assert caught.value.source == str(path)
    assert "\n" not in str(caught.value)


def test_iter_fire_reports_bad_records_too(tmp_path):
    path = write_document(tmp_path, BAD_DOCUMENTS["unknown label"][0])
    with pytest.raises(InputError, match="maybe"):
        list(iter_fire(path))


@pytest.mark.parametrize("content, message", [(b"", "empty file"), (b"  \n", "empty file"), (pickle.dumps({"annotations": []}), "pickle")])
def test_empty_and_pickled_files(tmp_path, content, message):
    path = tmp_path / "fire.json"
    path.write_bytes(content)
    with pytest.raises(InputError, match=message):
        read_fire(path)


def test_missing_path_and_directory(tmp_path):
    with pytest.raises(InputError, match="no such file"):
        read_fire(tmp_path / "absent.json")
    with pytest.raises(InputError, match="is a directory"):
        read_fire(tmp_path)


# --------------------------------------------------------------------------- the parse cache


@pytest.fixture
def cache_home(tmp_path, monkeypatch):
    home = tmp_path / "home"
    monkeypatch.setenv("TVRBENCH_HOME", str(home))
    return home / "fire"


def same_labels(a, b):
    assert len(a) == len(b)
    assert [a.row(i) for i in range(len(a))] == [b.row(i) for i in range(len(b))]
    assert a.metadata == b.metadata and a.source == b.source
    assert a.label.dtype == b.label.dtype and a.query.dtype == b.query.dtype == object


def test_second_read_comes_from_the_cache_and_equals_a_parse(fire_file, cache_home):
    parsed = read_fire(fire_file, cache=False)
    assert not cache_home.exists()
    first = read_fire(fire_file)
    [entry] = cache_home.glob("*.msgpack")
    cached = read_fire(fire_file)
    same_labels(cached, parsed)
    same_labels(first, parsed)
    assert cached.query[0] is cached.query[1]  # shared as a parse shares them
    same_labels(read_fire(fire_file, dataset="MSVD"), parsed.select("MSVD"))
    entry.write_bytes(b"not msgpack")
    same_labels(read_fire(fire_file), parsed)  # an unreadable entry is parsed again and replaced
    assert entry.read_bytes() != b"not msgpack"


def test_a_changed_file_is_never_served_from_the_cache(fire_file, cache_home):
    read_fire(fire_file)
    stat = fire_file.stat()
    text = fire_file.read_text()
    changed = text.replace('"a dog runs"', '"a cat runs"')
    assert len(changed) == len(text)
    fire_file.write_text(changed)
    os.utime(fire_file, ns=(stat.st_atime_ns, stat.st_mtime_ns))  # same size, same time: only the bytes differ
    labels = read_fire(fire_file)
    assert "a cat runs" in labels.query.tolist() and "a dog runs" not in labels.query.tolist()
    assert len(list(cache_home.glob("*.msgpack"))) == 2


def test_fire_cache_command_shows_and_clears(fire_file, cache_home, capsys):
    from tvrbench.cli import run

    read_fire(fire_file)
    assert run(["fire", "cache"]) == 0
    assert f"{cache_home}: 1 parsed FIRE file(s)" in capsys.readouterr().out
    assert run(["fire", "cache", "--clear"]) == 0
    assert "removed 1 parsed FIRE file(s)" in capsys.readouterr().out
    assert list(cache_home.glob("*.msgpack")) == []


def test_what_the_cache_cannot_hold_is_parsed_each_time(tmp_path, cache_home):
    document = fire_document()
    document["annotations"][0]["annotator_ids"] = [2**70]  # valid FIRE, beyond msgpack's integers
    path = write_document(tmp_path, document, "fire.json")
    assert read_fire(path).annotator_ids[0] == (2**70,)
    assert list(cache_home.glob("*.msgpack")) == []
    assert read_fire(path).annotator_ids[0] == (2**70,)


# --------------------------------------------------------------------------- hostile files (issue 32's catalogue)

DEPTH = 200_000  # the catalogue's nesting: 200 times what msgspec follows (it recurses to Python's limit, 1,000)
NESTINGS = {"list": b"[" * DEPTH + b"]" * DEPTH, "object": b'{"a":' * DEPTH + b"1" + b"}" * DEPTH}
LATIN1 = '"café"'.encode("latin-1")  # one byte that is not UTF-8, as in the catalogue's file


def with_value(where: str, value="@RAW@") -> dict:
    """The test document with ``value`` as metadata, as a field of annotations[1] that tvrbench does
    not read ('unread'), or as that record's caption ('query')."""
    document = fire_document()
    if where == "metadata":
        document["provenance"] = value
    else:
        document["annotations"][1]["notes" if where == "unread" else where] = value
    return document


def spliced(document: dict, raw: bytes) -> bytes:
    """``document`` as JSON, its one ``"@RAW@"`` value replaced by ``raw``: JSON that json.dumps
    cannot write (nested past its recursion limit, or not UTF-8)."""
    text = json.dumps(document).encode()
    assert text.count(b'"@RAW@"') == 1
    return text.replace(b'"@RAW@"', raw)


def depth(value) -> int:
    """Levels of a value nested one container in another, counted in a loop (recursion would overflow)."""
    levels = 0
    while isinstance(value, (list, dict)):
        levels += 1
        value = next(iter(value.values())) if isinstance(value, dict) else (value[0] if value else None)
    return levels


@pytest.mark.parametrize(
    "where, message",
    [
        ("metadata", r"malformed JSON at the top level: lexical error: invalid bytes in UTF8 string"),
        ("unread", r"malformed JSON in annotations\[1\]: lexical error: invalid bytes in UTF8 string"),
        ("query", r"malformed JSON in annotations\[1\]: lexical error: invalid bytes in UTF8 string"),
    ],
)
def test_a_byte_that_is_not_utf8_is_one_error_naming_the_file_and_record(tmp_path, where, message):
    """Wherever it is: msgspec checks only the strings it decodes, so one in a skipped field was read."""
    path = tmp_path / "latin1.json"
    path.write_bytes(spliced(with_value(where), LATIN1))
    for read in (lambda: read_fire(path, cache=False), lambda: list(iter_fire(path))):
        with pytest.raises(InputError, match=message) as caught:
            read()
        assert caught.value.source == str(path) and "\n" not in str(caught.value)


@pytest.mark.parametrize("nesting", sorted(NESTINGS))
@pytest.mark.parametrize("where", ["metadata", "unread"])
def test_nesting_past_msgspecs_reach_in_what_tvrbench_does_not_read_is_read(tmp_path, cache_home, where, nesting):
    path = tmp_path / "deep.json"
    path.write_bytes(spliced(with_value(where), NESTINGS[nesting]))
    plain = write_document(tmp_path, with_value(where, None), "plain.json")
    expected = read_fire(plain, cache=False)
    for labels in (read_fire(path), read_fire(path)):  # a parse, then the cache (or a parse again: see below)
        assert [labels.row(i) for i in range(len(labels))] == [expected.row(i) for i in range(len(expected))]
        assert {key: value for key, value in labels.metadata.items() if key != "provenance"} == METADATA
        assert depth(labels.metadata.get("provenance")) == (DEPTH if where == "metadata" else 0)
    assert list(iter_fire(path)) == list(iter_fire(plain))
    assert len(list(cache_home.glob("*.msgpack"))) == (where == "unread")  # msgpack cannot hold such metadata


def test_nesting_in_a_field_tvrbench_reads_is_one_error(tmp_path):
    path = tmp_path / "deep.json"
    path.write_bytes(spliced(with_value("query"), NESTINGS["list"]))
    message = r"annotations\[1\] field 'query': Input should be a valid string \(got \[\[\[\[\.\.\.\]\]\]\]\)"
    for read in (lambda: read_fire(path, cache=False), lambda: list(iter_fire(path))):
        with pytest.raises(InputError, match=message):
            read()


def number_in(where: str, digits: bytes) -> bytes:
    document = fire_document()
    if where == "metadata":
        document["provenance"] = "@RAW@"
    else:
        document["annotations"][1]["response_ids"] = ["@RAW@"]
    return spliced(document, digits)


@pytest.mark.parametrize(
    "content, message",
    [
        (json.dumps(fire_document()).encode() + b" x", r"malformed JSON at the top level: parse error: trailing garbage"),
        (number_in("metadata", b"1e999"), r"malformed JSON at the top level: a number beyond the range of a float"),
        (number_in("response_ids", b"7" * 5000), r"malformed JSON: Exceeds the limit \(4300 digits\) for integer string conversion"),
    ],
    ids=["trailing data", "float out of range", "5000-digit integer"],
)
def test_what_msgspec_refuses_the_streaming_reader_refuses_in_one_line(tmp_path, content, message):
    path = tmp_path / "hostile.json"
    path.write_bytes(content)
    for read in (lambda: read_fire(path, cache=False), lambda: list(iter_fire(path))):
        with pytest.raises(InputError, match=message) as caught:
            read()
        assert "\n" not in str(caught.value)


def test_a_lone_surrogate_escape_is_refused_in_one_line(tmp_path):
    """msgspec refuses it; yajl reads ``"\\ud800x"`` as ``"?x"``, so iter_fire cannot, and no record is named."""
    path = tmp_path / "surrogate.json"
    path.write_bytes(spliced(with_value("query"), rb'"\ud800x"'))
    with pytest.raises(InputError, match=r"^\S+surrogate.json: malformed JSON: [^\n]+$"):
        read_fire(path, cache=False)


def test_the_catalogues_two_files_on_the_command_line(tmp_path, cache_home, capsys):
    """One Latin-1 byte: one line naming the file, exit 2. Metadata 200,000 levels deep: read."""
    from tvrbench.cli import run

    latin1, deep = tmp_path / "latin1.json", tmp_path / "deep.json"
    latin1.write_bytes(spliced(with_value("metadata"), LATIN1))
    deep.write_bytes(spliced(with_value("metadata"), NESTINGS["list"]))
    assert run(["fire", "agreement", "--fire", str(latin1)]) == 2
    error = capsys.readouterr().err
    assert error.startswith(f"tvrbench: error: {latin1}: malformed JSON at the top level: ") and error.count("\n") == 1
    assert run(["fire", "agreement", "--fire", str(deep)]) == 0
    assert "MSRVTT" in capsys.readouterr().out
