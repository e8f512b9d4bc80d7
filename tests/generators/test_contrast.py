"""Gender and person-ID contrasts, the resumable writer, configs and bad input."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from tvrbench.errors import InputError
from tvrbench.generators import gender_contrasts, id_contrasts, read_contrast_records
from tvrbench.generators.config import FinetuneConfig, GenderConfig, MCConfig, PersonIdConfig, VerbConfig, load_config  # fmt: skip
from tvrbench.generators.gender import GenderContrasts
from tvrbench.generators.person_id import PersonIdContrasts
from tvrbench.io.captions import Captions, read_captions

ROOT = Path(__file__).resolve().parents[2]
MSRVTT = Path("/work/shared/data/msrvtt/MSRVTT_JSFUSION_test.csv")
TVRBENCH = [sys.executable, "-m", "tvrbench.cli"]


def msrvtt() -> Captions:
    if not MSRVTT.is_file():
        pytest.skip(f"MSR-VTT sample not present: {MSRVTT}")
    return read_captions(MSRVTT)


GENDER = GenderConfig(lm="ngram")  # the plausibility line's LM: these tests are not about it (test_offline_lms.py is)


@pytest.fixture(scope="module")
def gender_run(tmp_path_factory):
    captions = msrvtt()
    out = tmp_path_factory.mktemp("gender") / "gender.jsonl"
    records, run = gender_contrasts(captions, out, GENDER)
    sidecar = run.to_json()
    return captions, out, records, sidecar


CONFIG = GenderConfig()
TABLE = {**CONFIG.male_nouns, **CONFIG.female_nouns}
GENDER_OF = {w: "male" for w in CONFIG.male_nouns} | {w: "female" for w in CONFIG.female_nouns}
PRONOUNS = {"male": {"he": {"she"}, "him": {"her"}, "his": {"her"}, "himself": {"herself"}},
            "female": {"she": {"he"}, "her": {"his", "him"}, "hers": {"his"}, "herself": {"himself"}}}  # fmt: skip


def test_gender_covers_exactly_the_captions_with_a_table_word(gender_run):
    captions, _, records, sidecar = gender_run
    with_word = {c for c, t in zip(captions.caption_ids, captions.texts) if any(w in TABLE for w in t.lower().split())}
    got = [r.caption_id for r in records]
    assert len(got) == len(set(got)), "one contrast per caption"
    assert set(got) == with_word
    assert sidecar["counts"]["records"] == len(with_word)


def test_gender_changes_one_noun_and_same_gender_pronouns(gender_run):
    _, _, records, _ = gender_run
    for record in records:
        before, after = record.original.split(), record.contrast.split()
        assert len(before) == len(after), record
        changed = [(a, b) for a, b in zip(before, after) if a != b]
        nouns = [(a, b) for a, b in changed if a.lower() in TABLE]
        assert len(nouns) == 1, record
        noun, new = nouns[0]
        assert new.lower() in TABLE[noun.lower()]
        gender = GENDER_OF[noun.lower()]
        for a, b in changed:
            if (a, b) != (noun, new):
                assert b.lower() in PRONOUNS[gender][a.lower()], record
        # every pronoun of that gender changed, none of the other gender
        for a, b in zip(before, after):
            if a.lower() in PRONOUNS[gender]:
                assert a != b, record
        assert record.kind == "gender" and record.edit and record.contrast != record.original


def test_gender_her_follows_its_tag(tmp_path):
    captions = Captions(["a", "b"], ["a woman gives her the ball", "a girl brushes her hair"], ["v1", "v2"])
    records = {r.caption_id: r for r in gender_contrasts(captions, tmp_path / "g.jsonl", GENDER)[0]}
    assert records["a"].contrast == "a man gives him the ball"
    assert records["b"].contrast.endswith(" brushes his hair")


def test_gender_is_seeded_and_edit_spans_are_right(gender_run, tmp_path):
    captions, out, records, _ = gender_run
    again, _ = gender_contrasts(captions, tmp_path / "again.jsonl", GENDER)
    assert [r.contrast for r in again] == [r.contrast for r in records]
    other, _ = gender_contrasts(captions, tmp_path / "seed1.jsonl", GenderConfig(seed=1, lm="ngram"))
    assert [r.contrast for r in other] != [r.contrast for r in records]
    for record in records:
        for e in record.edit:
            assert record.original[e["chars"][0] : e["chars"][1]] == e["from"]
            assert record.contrast[e["contrast_chars"][0] : e["contrast_chars"][1]] == e["to"]
    assert [r.to_json() for r in read_contrast_records(out)] == [r.to_json() for r in records]
    assert json.loads(Path(f"{out}.json").read_text())["signature"].startswith("tvrbench:")


def test_resume_after_interruption_gives_the_same_file(gender_run, tmp_path, monkeypatch):
    import tvrbench.generators.runner as runner

    captions, out, _, _ = gender_run
    target = tmp_path / "resumed.jsonl"
    real_track = runner.track

    def interrupted(chunks, *args, **kwargs):
        for number, chunk in enumerate(real_track(chunks, *args, **kwargs)):
            if number == 5:
                raise KeyboardInterrupt
            yield chunk

    monkeypatch.setattr(runner, "track", interrupted)
    with pytest.raises(KeyboardInterrupt):
        gender_contrasts(captions, target, GENDER)
    partial = tmp_path / "resumed.jsonl.partial"
    assert not target.exists() and len(partial.read_text().splitlines()) == 1 + 5 * 64
    with open(partial, "a") as handle:
        handle.write('{"caption_id": "ret9')  # killed in the middle of a line
    monkeypatch.setattr(runner, "track", real_track)
    calls = []
    monkeypatch.setattr(runner, "track", lambda chunks, *a, **k: calls.extend(chunks) or iter(calls))
    gender_contrasts(captions, target, GENDER)
    assert len(calls) == -(-(len(captions) - 5 * 64) // 64)  # only the unfinished captions were redone
    assert target.read_text() == out.read_text()
    assert not partial.exists()


CHARACTERS = "movie,name,gender\nM1,Jenko,M\nM1,Schmidt,M\nM1,Zach,M\nM1,Molly,F\nM1,Eric,M\nM2,Anna,F\nM2,Elsa,F\n"
ID_ROWS = [("c1", "Jenko and Schmidt sit in the rear pew.", "M1_00.00.01.000-00.00.02.000"),
           ("c2", "His gaze steely, Jenko lowers his gun.", "M1_00.00.03.000-00.00.04.000"),
           ("c3", "Anna hugs Elsa.", "M2_00.00.01.000-00.00.02.000"),
           ("c4", "A car drives by.", "M2_00.00.05.000-00.00.06.000")]  # fmt: skip
ID_TRAIN = Captions(["t1", "t2", "t3"], ["Zach runs.", "Zach and Eric talk.", "Zach waves."], ["x", "y", "z"])


def test_person_id_swaps_within_movie_and_gender(tmp_path):
    characters = tmp_path / "characters.csv"
    characters.write_text(CHARACTERS)
    captions = Captions([r[0] for r in ID_ROWS], [r[1] for r in ID_ROWS], [r[2] for r in ID_ROWS])
    records, run = id_contrasts(captions, characters, tmp_path / "id.jsonl", PersonIdConfig(lm="ngram"), ID_TRAIN)
    sidecar = run.to_json()
    by_id = {r.caption_id: r for r in records}
    assert set(by_id) == {"c1", "c2"}  # c3: no other woman in M2 besides the two present; c4: no name
    assert by_id["c1"].edit[0]["from"] == "Jenko" and by_id["c1"].edit[0]["to"] in {"Zach", "Eric"}
    assert by_id["c2"].edit[0]["from"] == "Jenko" and by_id["c2"].edit[0]["to"] in {"Schmidt", "Zach", "Eric"}
    for record in records:
        swaps = record.details["swaps"]
        assert all(new in {"Schmidt", "Zach", "Eric"} and new != old for old, new in swaps.items())
        assert set(record.details["train_counts"]) >= set(swaps)
        assert record.details["rare_original"] == (0 < record.details["train_counts"][record.edit[0]["to"]])
    assert sidecar["counts"]["no target"] == 1 and sidecar["counts"]["no candidate"] == 1


# ----------------------------------------------------------------------------- the in-memory core


def test_gender_in_memory_equals_the_file(gender_run):
    captions, out, _, _ = gender_run
    in_memory = GenderContrasts().contrasts(captions)
    assert [r.to_json() for r in in_memory] == [r.to_json() for r in read_contrast_records(out)]
    texts = GenderContrasts().outcomes(["a man is cooking", "a dog runs"])  # plain texts: ids "0", "1"
    assert [(o.record.caption_id, o.record.contrast) if o.record else o.reason for o in texts] == [("0", "a woman is cooking"), "no target"]


@pytest.mark.parametrize("lsmdc", [False, True], ids=["movie-from-clip-id", "lsmdc-movie-and-names"])
def test_person_id_in_memory_equals_the_file(tmp_path, lsmdc):
    """With LSMDC columns, only the listed names change and the movie column is the movie."""
    characters = tmp_path / "characters.csv"
    characters.write_text(CHARACTERS)
    extra = {"movie": ["M1", "M1", "M2", "M2"], "names": ["Schmidt", "Jenko", "Anna;Elsa", ""]} if lsmdc else {}
    captions = Captions([r[0] for r in ID_ROWS], [r[1] for r in ID_ROWS], ["clip"] * 4 if lsmdc else [r[2] for r in ID_ROWS], extra=extra)
    config = PersonIdConfig(swap_later=1.0, lm="ngram")
    id_contrasts(captions, characters, tmp_path / "id.jsonl", config, ID_TRAIN)
    in_memory = PersonIdContrasts(characters, config, ID_TRAIN).contrasts(captions)
    assert [r.to_json() for r in in_memory] == [r.to_json() for r in read_contrast_records(tmp_path / "id.jsonl")]
    assert [r.edit[0]["from"] for r in in_memory] == (["Schmidt", "Jenko"] if lsmdc else ["Jenko", "Jenko"])


def test_no_generator_reads_doc_user_data(tmp_path):
    """Per-caption data travels in the CaptionItem: searches over docs whose ``user_data`` is gone give
    the same records (the person-ID finder used to find the caption's movie there)."""
    from dataclasses import replace

    from tvrbench.generators.core import Job

    assert not [p.name for p in (ROOT / "tvrbench" / "generators").glob("*.py") if "user_data" in p.read_text(encoding="utf-8")]
    characters = tmp_path / "characters.csv"
    characters.write_text(CHARACTERS)
    rows = [*ID_ROWS, ("c5", "A man hands Jenko the ball.", "M1_00.00.05.000-00.00.06.000")]
    captions = Captions([r[0] for r in rows], [r[1] for r in rows], [r[2] for r in rows])
    for generator in (PersonIdContrasts(characters), GenderContrasts()):
        items, context = generator.prepare(captions)
        docs = list(generator.nlp.pipe(captions.texts))
        for doc in docs:
            doc.user_data = None
        outcomes = Job(generator, context).run([replace(item, doc=doc) for item, doc in zip(items, docs)])
        records = [o.record.to_json() for o in outcomes if o.record]
        assert records and records == [r.to_json() for r in generator.contrasts(captions)]


def test_every_config_file_equals_the_defaults():
    pairs = {"contrast/gender.yaml": GenderConfig, "contrast/id.yaml": PersonIdConfig, "contrast/verb.yaml": VerbConfig,
             "contrast/finetune-t5.yaml": FinetuneConfig, "mc.yaml": MCConfig}  # fmt: skip
    for name, model in pairs.items():
        path = ROOT / "configs" / name
        assert yaml.safe_load(path.read_text()) == model().model_dump(), name
        assert load_config(path, model) == model()


def test_bad_config_names_the_file_and_key(tmp_path):
    bad = tmp_path / "verb.yaml"
    bad.write_text("meaning:\n  verb_cosine_maxx: 0.3\n")
    with pytest.raises(InputError, match=r"verb.yaml: meaning.verb_cosine_maxx"):
        load_config(bad, VerbConfig)


def run_cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([*TVRBENCH, *args], capture_output=True, text=True, cwd=ROOT)


@pytest.mark.parametrize("text, problem", [("a dog runs in the park\n", "no caption has a target of the gender kind"), ("\n", "has empty text")])
def test_cli_bad_captions_exit_2_and_write_nothing(tmp_path, text, problem):
    captions = tmp_path / "c.csv"
    captions.write_text("caption_id,text,video_id\nc1,a cat sleeps,v1\nc2," + text.replace("\n", "") + ",v2\n")
    out = tmp_path / "out.jsonl"
    done = run_cli("contrast", "gender", "--captions", str(captions), "--out", str(out))
    assert done.returncode == 2
    assert problem in done.stderr and "Traceback" not in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1
    assert list(tmp_path.iterdir()) == [captions]


def test_a_run_tried_small_takes_the_first_or_a_seeded_sample_of_the_captions(tmp_path):
    """--limit N: the first N captions; --sample N: N drawn with --seed, in file order; the sidecar's
    signature names the part run. A count below 1 or both options: one line, exit 2."""
    sample = str(ROOT / "tvrbench" / "data" / "sample" / "captions.csv")
    all_ids = read_captions(sample).caption_ids

    def ids_of(*options: str) -> list[str]:
        out = tmp_path / f"{'_'.join(options)}.jsonl"
        done = run_cli("contrast", "gender", "--captions", sample, "--out", str(out), "--lm", "ngram", *options)
        assert done.returncode == 0, done.stderr
        sidecar = json.loads(out.with_name(out.name + ".json").read_text())
        assert f"|n:{sidecar['counts']['captions']}|" in sidecar["signature"]
        return [json.loads(line)["caption_id"] for line in out.read_text().splitlines()], sidecar["counts"]["captions"]

    first, counted = ids_of("--limit", "20")
    assert counted == 20 and set(first) <= set(all_ids[:20]) and first
    drawn, counted = ids_of("--sample", "20", "--seed", "3")
    assert counted == 20 and drawn == sorted(drawn, key=all_ids.index) and not set(drawn) <= set(all_ids[:20])
    assert ids_of("--sample", "20", "--seed", "3")[0] == drawn
    for options in (["--limit", "0"], ["--sample", "-2"], ["--limit", "5", "--sample", "5"]):
        done = run_cli("contrast", "gender", "--captions", sample, "--out", str(tmp_path / "bad.jsonl"), *options)
        assert done.returncode == 2 and len(done.stderr.strip().splitlines()) == 1 and "Traceback" not in done.stderr, done.stderr
