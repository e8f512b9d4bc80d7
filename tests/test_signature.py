"""Signatures: file digests (SHA-256 by default, XXH3-128 named in the digest for matrices), parsing
back from text, and the diff that says why two results differ."""

import hashlib
import json

import pytest
import xxhash

from tvrbench.cli import run
from tvrbench.signature import FieldChange, Signature, diff_signatures, file_digest


def test_file_digest_of_every_byte_with_its_algorithm_named(tmp_path):
    path = tmp_path / "blob.bin"
    data = bytes(range(256)) * 40_000  # several read buffers' worth
    path.write_bytes(data)
    assert file_digest(path) == hashlib.sha256(data).hexdigest()[:12]
    assert file_digest(path, algorithm="xxh3") == "xxh3:" + xxhash.xxh3_128(data).hexdigest()[:12]
    path.write_bytes(data[:-1] + b"\0")
    assert file_digest(path, algorithm="xxh3") != "xxh3:" + xxhash.xxh3_128(data).hexdigest()[:12]


def test_a_signature_reads_back_from_its_text_nested_or_not():
    inner = Signature({"ap": "fire", "ndcg": "epic"})
    outer = Signature({"analysis": "fire-bootstrap", "scores": "xxh3:65fe2f495190", "engine": inner.nested()})
    assert Signature.parse(str(outer)) == outer
    assert Signature.parse(outer.fields["engine"]) == inner
    assert Signature.parse(str(outer)).fields["scores"] == "xxh3:65fe2f495190"  # a value keeps its own colons
    with pytest.raises(ValueError, match="key:value"):
        Signature.parse("tvrbench:0.1.0|no-colon")


def test_diff_names_each_changed_field_inside_nested_signatures_too():
    left = Signature.parse("tvrbench:0.1.0|ties:stable|engine:ap:fire;ndcg:epic|fire:SAMPLE:1")
    right = Signature.parse("tvrbench:0.1.0|ties:average|engine:ap:standard;ndcg:epic|qrels:abc")
    assert diff_signatures(left, right) == [
        FieldChange("ties", "stable", "average"),
        FieldChange("engine.ap", "fire", "standard"),
        FieldChange("fire", "SAMPLE:1", None),
        FieldChange("qrels", None, "abc"),
    ]
    assert diff_signatures(left, left) == []


def test_signature_diff_command_exits_as_diff_does(tmp_path):
    a, b = tmp_path / "a.json", tmp_path / "b.json"
    a.write_text(json.dumps({"metrics": {}, "signature": "tvrbench:0.1.0|ties:stable|scores:xxh3:1"}))
    b.write_text(json.dumps({"metrics": {}, "signature": "tvrbench:0.1.0|ties:average|scores:xxh3:1"}))
    out = tmp_path / "diff.json"
    assert run(["signature", "diff", str(a), str(a)]) == 0
    assert run(["signature", "diff", str(a), str(b), "--json", str(out)]) == 1
    written = json.loads(out.read_text())
    assert written["changes"] == [{"field": "ties", "left": "stable", "right": "average"}] and not written["equal"]
    assert run(["signature", "diff", str(a), "tvrbench:0.1.0|ties:stable|scores:xxh3:1"]) == 0  # a signature as text


def test_signature_diff_of_a_file_without_one_is_one_line_and_code_2(tmp_path, capsys):
    plain = tmp_path / "plain.json"
    plain.write_text(json.dumps({"metrics": {}}))
    assert run(["signature", "diff", str(plain), str(plain)]) == 2
    assert capsys.readouterr().err.strip() == f"tvrbench: error: {plain}: has no signature (a 'signature' string at the top of the JSON object)"
