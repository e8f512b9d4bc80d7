"""Optional resources: WordNet from Debian's files, the doctor's report, settings files."""

from __future__ import annotations

import gzip
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tvrbench import resources
from tvrbench.config import load_settings
from tvrbench.errors import InputError
from tvrbench.evaluation.settings import EvaluateSettings

MAN_PAGE = Path("/usr/share/man/man5/lexnames.5WN.gz")


@pytest.mark.skipif(not MAN_PAGE.is_file(), reason="Debian's wordnet-base manual page lexnames(5WN) is not installed")
def test_lexnames_match_the_wordnet_manual():
    text = gzip.decompress(MAN_PAGE.read_bytes()).decode("latin-1")
    listed = re.findall(r"^(\d\d)\t(\S+)", text, flags=re.MULTILINE)
    assert [name for _, name in listed] == resources.LEXNAMES
    assert [int(number) for number, _ in listed] == list(range(45))


@pytest.mark.skipif(resources._debian_wordnet_dir() is None, reason="Debian's wordnet-base / wordnet-sense-index are not installed")
def test_debian_wordnet_is_read_by_nltk(tmp_path, monkeypatch):
    monkeypatch.setenv("TVRBENCH_HOME", str(tmp_path))
    resources.wordnet.cache_clear()
    try:
        prepared = resources.prepare_wordnet(resources._debian_wordnet_dir())
        assert (prepared / "lexnames").read_text().splitlines()[18] == "18\tnoun.person\t1"
        reader = resources.wordnet()
        assert Path(reader.root.path) == prepared
        assert reader.get_version() == "3.0"
        assert reader.synset("dog.n.01").lexname() == "noun.animal"
        assert "race" in {lemma.name() for synset in reader.synsets("run", "v") for lemma in synset.lemmas()}
        assert reader.synsets("woman")[0].lexname() == "noun.person"
    finally:
        resources.wordnet.cache_clear()


def test_doctor_lists_every_resource():
    completed = subprocess.run([sys.executable, "-m", "tvrbench", "doctor"], capture_output=True, text=True,
                               env={"COLUMNS": "200", "PATH": "/usr/bin:/bin"})
    assert completed.returncode == 0, completed.stderr
    for resource in resources.RESOURCES:
        assert resource.name in completed.stdout


def test_settings_file_equals_the_defaults():
    path = Path(__file__).parents[1] / "configs" / "evaluate.yaml"
    assert load_settings(EvaluateSettings, path) == EvaluateSettings()


def test_bad_settings_file_names_the_key(tmp_path):
    bad = tmp_path / "evaluate.yaml"
    bad.write_text("ties: sometimes\n")
    with pytest.raises(InputError, match="evaluate.yaml: ties"):
        load_settings(EvaluateSettings, bad)
    bad.write_text("metrics: [C@1, Bogus]\n")
    with pytest.raises(InputError, match="Bogus"):
        load_settings(EvaluateSettings, bad)
    bad.write_text("colour: blue\n")
    with pytest.raises(InputError, match="colour"):
        load_settings(EvaluateSettings, bad)
    bad.write_text("ties: [unclosed\n")
    with pytest.raises(InputError, match="malformed YAML"):
        load_settings(EvaluateSettings, bad)
