"""Caption readers: every format on good input, and one InputError naming the file for bad input."""

import csv
import json
import os
import pickle
from pathlib import Path

import pytest

from tvrbench.errors import InputError
from tvrbench.io.captions import read_captions, read_video_ids

JSFUSION = Path("/work/shared/data/msrvtt/MSRVTT_JSFUSION_test.csv")


def write(tmp_path, name, content):
    path = tmp_path / name
    path.write_bytes(content) if isinstance(content, bytes) else path.write_text(content, encoding="utf-8")
    return path


def test_generic_csv_tsv_and_jsonl_agree(tmp_path):
    rows = [("c1", "a man is cooking", "v1"), ("c2", "a girl, singing", "v2")]
    csv_path = write(tmp_path, "q.csv", "caption_id,text,video_id,split\n" + "".join(f'{c},"{t}",{v},test\n' for c, t, v in rows))
    tsv_path = write(tmp_path, "q.tsv", "video_id\ttext\tcaption_id\n" + "".join(f"{v}\t{t}\t{c}\n" for c, t, v in rows))
    jsonl_path = write(tmp_path, "q.jsonl", "".join(json.dumps({"caption_id": c, "text": t, "video_id": v}) + "\n" for c, t, v in rows))
    for path in (csv_path, tsv_path, jsonl_path):
        captions = read_captions(path)
        assert list(zip(captions.caption_ids, captions.texts, captions.video_ids)) == rows
        assert captions.source == str(path)
    assert read_captions(csv_path).extra == {"split": ["test", "test"]}
    assert read_captions(csv_path, format="generic").caption_ids == ["c1", "c2"]


def test_quoted_fields_keep_newlines_and_line_separators(tmp_path):
    """A real CSV parse over the whole text: quoted newlines (LF, CRLF) and U+2028 stay in the caption."""
    texts = ["a man\nis cooking", 'she says "hi"\r\nand waves', "plain\u2028text", "last"]
    path = tmp_path / "q.csv"
    with open(path, "w", encoding="utf-8", newline="") as handle:
        writer = csv.writer(handle, lineterminator="\r\n")
        writer.writerow(["caption_id", "text", "video_id"])
        writer.writerows((f"c{i}", text, f"v{i}") for i, text in enumerate(texts))
    captions = read_captions(path)
    assert captions.texts == texts
    assert captions.caption_ids == ["c0", "c1", "c2", "c3"] and captions.video_ids == ["v0", "v1", "v2", "v3"]
    with open(path, "a", encoding="utf-8", newline="") as handle:
        handle.write('c4,"two\nlines",\r\n')
    with pytest.raises(InputError, match="line 9: empty video_id"):  # the line where the row ends
        read_captions(path)


def test_csv_reader_equals_the_csv_module_on_msrvtt():
    """Oracle: ``csv.DictReader`` over the file opened as the csv module asks (``newline=""``)."""
    if not JSFUSION.is_file():
        pytest.skip(f"MSR-VTT sample not present: {JSFUSION}")
    with open(JSFUSION, encoding="utf-8", newline="") as handle:
        rows = list(csv.DictReader(handle))
    captions = read_captions(JSFUSION)
    assert captions.caption_ids == [row["key"].strip() for row in rows]
    assert captions.texts == [row["sentence"].strip() for row in rows]
    assert captions.video_ids == [row["video_id"].strip() for row in rows]
    assert captions.extra == {"vid_key": [row["vid_key"] for row in rows]}


def test_jsfusion_file_as_released():
    if not JSFUSION.exists():
        pytest.skip(f"MSR-VTT sample not present: {JSFUSION}")
    captions = read_captions(JSFUSION)
    assert len(captions) == 1000
    assert captions.caption_ids[2] == "ret2" and captions.video_ids[2] == "video7020"
    assert captions.texts[2] == "a woman creating a fondant baby and flower"
    assert read_captions(JSFUSION, format="jsfusion").texts == captions.texts


def test_msrvtt_json(tmp_path):
    data = {"videos": [{"video_id": "video1"}], "sentences": [{"caption": "a cat", "video_id": "video1", "sen_id": 7}]}
    captions = read_captions(write(tmp_path, "MSRVTT_data.json", json.dumps(data)))
    assert (captions.caption_ids, captions.texts, captions.video_ids) == (["7"], ["a cat"], ["video1"])


MSVD_TEXT = """# MSVD descriptions
-4wsuPCjDBc_5_15 a squirrel is eating a peanut
-4wsuPCjDBc_5_15 a chipmunk eats

zv2RIbUsnSw_159_170 a man plays a guitar
-4wsuPCjDBc_5_15   an animal is eating
"""


def test_msvd_text_ids_in_file_order(tmp_path):
    captions = read_captions(write(tmp_path, "AllVideoDescriptions.txt", MSVD_TEXT))
    assert captions.caption_ids == ["-4wsuPCjDBc_5_15#0", "-4wsuPCjDBc_5_15#1", "zv2RIbUsnSw_159_170#0", "-4wsuPCjDBc_5_15#2"]
    assert captions.texts[3] == "an animal is eating"
    assert read_captions(write(tmp_path, "d.txt", MSVD_TEXT), format="msvd").caption_ids == captions.caption_ids


def test_msvd_test_list_keeps_only_listed_videos(tmp_path):
    descriptions = write(tmp_path, "AllVideoDescriptions.txt", MSVD_TEXT)
    captions = read_captions(descriptions, video_list=write(tmp_path, "test_list.txt", "zv2RIbUsnSw_159_170\n"))
    assert captions.caption_ids == ["zv2RIbUsnSw_159_170#0"]
    missing = write(tmp_path, "list2.txt", "zv2RIbUsnSw_159_170\nnot_there_1_2\n")
    with pytest.raises(InputError, match=r"1 of its 2 videos have no captions.*'not_there_1_2'") as caught:
        read_captions(descriptions, video_list=missing)
    assert caught.value.source == str(missing)


def test_msvd_pickle_only_when_trusted(tmp_path):
    path = write(tmp_path, "raw-captions.pkl", pickle.dumps({"vidA_1_2": [["a", "dog", "runs"], ["a", "puppy"]], "vidB_3_4": [["someone", "cooks"]]}))
    with pytest.raises(InputError, match="pass --trust-pickle") as caught:
        read_captions(path)
    assert caught.value.source == str(path)
    captions = read_captions(path, trust_pickle=True, video_list=write(tmp_path, "test_list.txt", "vidA_1_2\n"))
    assert captions.caption_ids == ["vidA_1_2#0", "vidA_1_2#1"]
    assert captions.texts == ["a dog runs", "a puppy"]
    bad = write(tmp_path, "bad.pkl", pickle.dumps([1, 2]))
    with pytest.raises(InputError, match="expected a dict"):
        read_captions(bad, trust_pickle=True)


class RunsCode:
    """A pickle that calls a function when loaded: how a hostile pickle runs its code."""

    def __reduce__(self):
        return (os.makedirs, ("ran",))


def test_a_trusted_pickle_still_loads_no_function(tmp_path, monkeypatch):
    """Even with --trust-pickle, a pickle that names a function or class is refused before it is called."""
    monkeypatch.chdir(tmp_path)
    path = write(tmp_path, "raw-captions.pkl", pickle.dumps({"vidA_1_2": [["a", "dog"]], "x": RunsCode()}))
    with pytest.raises(InputError, match=r"cannot unpickle \(UnpicklingError: it names (os|posix)\.makedirs"):
        read_captions(path, trust_pickle=True)
    assert not (tmp_path / "ran").exists()


LSMDC = """caption_id,text,video_id,movie,names,genders,start
1,"His gaze steely, Jenko lowers his gun.",1012_Jump_St_00.01.02,1012_21_Jump_Street,Jenko,male,1.0
2,Schmidt hands Jenko a badge.,1012_Jump_St_00.01.09,1012_21_Jump_Street, Schmidt ; Jenko ,M;m,9.5
3,They walk away.,1012_Jump_St_00.01.20,1012_21_Jump_Street,,,20.0
"""


def test_lsmdc_names_genders_and_extra_columns(tmp_path):
    captions = read_captions(write(tmp_path, "lsmdc.csv", LSMDC))
    assert captions.extra["movie"] == ["1012_21_Jump_Street"] * 3
    assert captions.extra["names"] == ["Jenko", "Schmidt;Jenko", ""]
    assert captions.extra["genders"] == ["M", "M;M", ""]
    assert captions.extra["start"] == ["1.0", "9.5", "20.0"]
    assert captions.texts[0] == "His gaze steely, Jenko lowers his gun."


@pytest.mark.parametrize(
    "content, message",
    [
        (LSMDC.replace("Schmidt ; Jenko", "Schmidt;Jenkins"), "line 3: character name 'Jenkins' does not occur"),
        (LSMDC.replace("Jenko,male", "Jen,male"), "line 2: character name 'Jen' does not occur"),
        (LSMDC.replace("M;m", "M"), "line 3: genders 'M' must give M or F for each of the 2 names"),
        (LSMDC.replace("Jenko,male", "Jenko,robot"), "line 2: genders 'robot'"),
        (LSMDC.replace(",1012_21_Jump_Street,,,", ",,,,"), "line 4: empty movie"),
    ],
)
def test_lsmdc_bad_rows(tmp_path, content, message):
    path = write(tmp_path, "lsmdc.csv", content)
    with pytest.raises(InputError, match=message) as caught:
        read_captions(path)
    assert caught.value.source == str(path)


def test_lsmdc_format_requires_its_columns(tmp_path):
    path = write(tmp_path, "q.csv", "caption_id,text,video_id\nc1,a man,v1\n")
    with pytest.raises(InputError, match="lsmdc captions need the columns .*missing movie, names"):
        read_captions(path, format="lsmdc")


@pytest.mark.parametrize(
    "name, content, kwargs, message",
    [
        ("q.csv", "id,sentence\n1,a man\n", {}, "are neither caption_id,text,video_id nor the JSFUSION"),
        ("q.csv", "caption_id,text,video_id\n", {}, "header but no captions"),
        ("q.csv", "caption_id,text,video_id\nc1,a man,v1\nc1,a dog,v2\n", {}, "duplicate caption id 'c1'"),
        ("q.csv", "caption_id,text,video_id\nc1,a man,\n", {}, "line 2: empty video_id"),
        ("q.csv", "caption_id,text,video_id\nc1,a man,v1\n", {"format": "youcook"}, "unknown captions format 'youcook'"),
        ("q.jsonl", '{"caption_id": "c1", "text": "a", "video_id": "v"}\n{oops\n', {}, "line 2: malformed JSON"),
        ("q.json", '{"videos": []}', {}, "with a 'sentences' list"),
        ("d.txt", "vid_only\n", {}, "line 1: expected 'VIDEO_ID caption words'"),
        ("d.txt", "", {}, "empty file"),
        ("q.csv", b"\xff\xfe bad", {}, "not UTF-8"),
    ],
)
def test_bad_caption_files(tmp_path, name, content, kwargs, message):
    path = write(tmp_path, name, content)
    with pytest.raises(InputError, match=message) as caught:
        read_captions(path, **kwargs)
    assert caught.value.source == str(path)


def test_video_ids_file(tmp_path):
    assert read_video_ids(write(tmp_path, "videos.txt", "v2\n\nv1\n")) == ["v2", "v1"]
    with pytest.raises(InputError, match="duplicate video id 'v2'"):
        read_video_ids(write(tmp_path, "videos.txt", "v2\nv2\n"))
