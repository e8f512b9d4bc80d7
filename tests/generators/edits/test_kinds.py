"""What every word-edit kind must do the same way (issue 45), each kind run on captions written so that
every kind has targets: records that say what changed, resumable files that end byte-identical, bad
input counted or refused in one line, settings files equal to the defaults, the MC split built from
the kind's records and scored by the blind scorer, a contrast file refused by an MC of another kind."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import yaml

from tvrbench.config import read_yaml
from tvrbench.errors import InputError
from tvrbench.generators.core import as_captions
from tvrbench.generators.edits import EDIT_KINDS
from tvrbench.generators.runner import edit_contrasts
from tvrbench.io.captions import Captions
from tvrbench.mc.build import build_mc_file
from tvrbench.mc.score import score_mc_file

ROOT = Path(__file__).parents[3]
TVRBENCH = [sys.executable, "-m", "tvrbench.cli"]
KINDS = list(EDIT_KINDS)
TEXTS = [
    "a woman plays a song on the cello",
    "a man in a red shirt is singing",
    "a cat jumps onto the table",
    "two men are cooking in a kitchen",
    "a dog chases a cat in the yard",
    "a man rides a horse on the beach",
    "a man opens the door and then walks in",
    "a girl sings a song",
    "a little girl is playing with a red ball",
    "a man is driving a black car on the road",
    "people are dancing in front of a large building",
    "a woman is cutting onions with a knife",
    "a boy throws a ball to a dog",
    "a woman puts a bowl on the table before cooking",
    "three kids are swimming in a pool",
    "a man walks into a room and then sits on a chair",
    "a chef is cooking chicken in a pan",
    "a man in a black hat and a white shirt plays the guitar",
    "a young woman is talking about a new phone",
    "a horse is running in a field while a man watches",
]
CAPTIONS = Captions([f"c{k}" for k in range(len(TEXTS))], TEXTS, [f"v{k}" for k in range(len(TEXTS))])


def settings(kind: str, **changes):
    return EDIT_KINDS[kind].settings_class()(lm="ngram", **changes)


@pytest.fixture(scope="module", params=KINDS)
def kind_run(request, tmp_path_factory):
    kind = request.param
    out = tmp_path_factory.mktemp(kind) / f"{kind}.jsonl"
    records, run = edit_contrasts(kind, CAPTIONS, out, settings(kind, chunk_size=4))
    return kind, out, records, run


def test_every_kind_makes_records_that_say_what_changed(kind_run):
    kind, out, records, run = kind_run
    assert records, f"{kind}: no record on captions written for it"
    for record in records:
        assert record.kind == kind and record.contrast != record.original
        for edit in record.edit:
            assert record.original[edit["chars"][0] : edit["chars"][1]] == edit["from"]
            assert record.contrast[edit["contrast_chars"][0] : edit["contrast_chars"][1]] == edit["to"]
        assert record.details["substitute"] and record.filters["reads-as-real"]["passed"]
    sidecar = json.loads(Path(f"{out}.json").read_text())
    assert sidecar["kind"] == kind and sidecar["counts"]["records"] == len(records)
    assert sum(v for k, v in sidecar["counts"].items() if k not in ("captions", "records")) == len(TEXTS) - len(records)
    assert f"kind:{kind}|" in sidecar["signature"] and "|lm:cmu-en-us-3gram" in sidecar["signature"]


def test_an_interrupted_run_resumes_byte_identical(kind_run, tmp_path, monkeypatch):
    import tvrbench.generators.runner as runner

    kind, out, _, _ = kind_run
    target = tmp_path / f"{kind}.jsonl"
    real_track = runner.track

    def interrupted(chunks, *args, **kwargs):
        for number, chunk in enumerate(real_track(chunks, *args, **kwargs)):
            if number == 2:
                raise KeyboardInterrupt
            yield chunk

    monkeypatch.setattr(runner, "track", interrupted)
    with pytest.raises(KeyboardInterrupt):
        edit_contrasts(kind, CAPTIONS, target, settings(kind, chunk_size=4))
    assert not target.exists() and len((tmp_path / f"{kind}.jsonl.partial").read_text().splitlines()) == 1 + 2 * 4
    monkeypatch.setattr(runner, "track", real_track)
    edit_contrasts(kind, CAPTIONS, target, settings(kind, chunk_size=4))
    assert target.read_bytes() == out.read_bytes()


def test_the_in_memory_generator_writes_what_the_file_holds(kind_run):
    kind, out, _, _ = kind_run
    generator = EDIT_KINDS[kind].generator_class()(settings(kind, chunk_size=4))
    assert [r.to_json() for r in generator.contrasts(CAPTIONS)] == [json.loads(line) for line in out.read_text().splitlines()]


@pytest.mark.parametrize("kind", KINDS)
def test_no_target_and_a_very_long_caption_are_counted(kind):
    generator = EDIT_KINDS[kind].generator_class()(settings(kind))
    outcomes = generator.outcomes(as_captions(["the sky", " ".join(["word"] * 10_000)]))
    assert [o.reason for o in outcomes] == ["no target", "longer than 100 words"]


@pytest.mark.parametrize("kind", KINDS)
def test_the_settings_file_is_the_defaults_and_names_every_setting(kind):
    """The file is where the word lists' defaults come from; it also shows every other setting (a
    word list's entries may leave out their own defaults: a property's ``except: []``)."""
    model = EDIT_KINDS[kind].settings_class()
    written = read_yaml((ROOT / "configs" / "contrast" / f"{kind}.yaml").read_text())
    assert model.model_validate(written) == model()
    assert set(written) == set(model().model_dump()) - {"device"}


def test_the_blind_scorer_on_each_kinds_split(kind_run, tmp_path):
    """The blind scorer (no video) on a split of the kind's contrasts equals a plain loop over the
    options' cosines, and its two likeliest options are mostly the positive and its contrast: a
    contrast narrows five options to two, which is what the split asks the video to settle."""
    from tvrbench.resources import sentence_model

    kind, out, records, _ = kind_run
    split = build_mc_file(CAPTIONS, kind, tmp_path / "mc.tsv", contrast_path=out)
    result = score_mc_file(tmp_path / "mc.tsv", scorer="blind").to_json()
    model = sentence_model()
    correct, pair = [], []
    for instance, contrast in zip(split.instances, split.contrast_options):
        vectors = [model.encode(text, normalize_embeddings=True) for text in instance.endings]
        typical = [sum(float(np.dot(a, b)) for j, b in enumerate(vectors) if j != i) / 4 for i, a in enumerate(vectors)]
        best = sorted(range(5), key=lambda i: -typical[i])
        correct.append(best[0] == instance.label and typical[best[0]] > typical[best[1]])
        pair.append(set(best[:2]) == {instance.label, contrast})
    assert result["n"] == len(split.instances) == len(records)
    assert result["accuracy"] == pytest.approx(np.mean(correct))
    assert np.mean(pair) >= 0.5


def test_an_mc_of_another_kind_refuses_the_file_in_one_line(tmp_path):
    out = tmp_path / "attribute.jsonl"
    edit_contrasts("attribute", CAPTIONS, out, settings("attribute"))
    with pytest.raises(InputError, match="is a 'attribute' contrast, not 'counting'"):
        build_mc_file(CAPTIONS, "counting", tmp_path / "mc.tsv", contrast_path=out)
    captions = tmp_path / "captions.csv"
    captions.write_text("caption_id,text,video_id\n" + "".join(f"{c},{t},{v}\n" for c, t, v in zip(CAPTIONS.caption_ids, TEXTS, CAPTIONS.video_ids)))
    done = subprocess.run(
        [*TVRBENCH, "mc", "build", "--captions", str(captions), "--kind", "object", "--contrast", str(out), "--out", str(tmp_path / "o.tsv")],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 2 and done.stderr.count("\n") == 1 and "not 'object'" in done.stderr and "Traceback" not in done.stderr


def test_a_contradictory_word_list_is_one_line_and_exit_2(tmp_path):
    captions = tmp_path / "captions.csv"
    captions.write_text("caption_id,text,video_id\nc1,a man in a red shirt,v1\n")
    config = tmp_path / "attribute.yaml"
    config.write_text("properties:\n  colour:\n    values: [[red], [blue, red]]\n")
    done = subprocess.run(
        [*TVRBENCH, "contrast", "attribute", "--captions", str(captions), "--out", str(tmp_path / "a.jsonl"), "--config", str(config)],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 2 and done.stderr.count("\n") == 1 and "Traceback" not in done.stderr
    assert "attribute.yaml: properties.colour: 'red' is in two values" in done.stderr
    assert not (tmp_path / "a.jsonl").exists()


def test_a_section_given_in_part_keeps_the_kinds_own_defaults(settings_file):
    """The relation kind judges with its own ``choice.max_loss``; a file that sets another ``choice``
    value leaves it as the kind has it, not as the shared section's defaults have it."""
    from tvrbench.generators.config import EditChoiceConfig, RelationConfig

    assert RelationConfig().choice.max_loss != EditChoiceConfig().max_loss
    loaded = settings_file("relation", "choice:\n  max_behind_best: 0.5\n")
    assert loaded.choice.max_behind_best == 0.5 and loaded.choice.max_loss == RelationConfig().choice.max_loss


def test_settings_files_read_on_and_off_as_words():
    from tvrbench.config import read_yaml

    assert read_yaml("on: [under, off]\nyes: no\nflag: true\nother: False\n") == {"on": ["under", "off"], "yes": "no", "flag": True, "other": False}
    with pytest.raises(yaml.constructor.ConstructorError):  # a safe loader: no Python object is built
        read_yaml("!!python/object/apply:os.getcwd []\n")


def test_the_judge_measures_the_lm_preference_the_sidecar_reports(kind_run):
    """The judge records both sentences' per-token means (``per_token``); they are the language model's
    own means of the two texts, and the sidecar's LM preference is read from them, not scored again."""
    from tvrbench.lm.models import load_language_model, mean_logprobs

    kind, out, records, run = kind_run
    lm = load_language_model("ngram")
    for record in records:
        recorded = record.filters["reads-as-real"]["per_token"]
        np.testing.assert_allclose(recorded, mean_logprobs(lm, [record.original, record.contrast]), atol=5e-4)
    gaps = np.array([r.filters["reads-as-real"]["per_token"][0] - r.filters["reads-as-real"]["per_token"][1] for r in records])
    assert run.plausibility.pairs == len(records) and run.plausibility.prefers_original == pytest.approx(np.mean(gaps > 0))
