"""File digests in signatures: SHA-256 by default, XXH3-128 (named in the digest) for matrices."""

import hashlib

import xxhash

from tvrbench.signature import file_digest


def test_file_digest_of_every_byte_with_its_algorithm_named(tmp_path):
    path = tmp_path / "blob.bin"
    data = bytes(range(256)) * 40_000  # several read buffers' worth
    path.write_bytes(data)
    assert file_digest(path) == hashlib.sha256(data).hexdigest()[:12]
    assert file_digest(path, algorithm="xxh3") == "xxh3:" + xxhash.xxh3_128(data).hexdigest()[:12]
    path.write_bytes(data[:-1] + b"\0")
    assert file_digest(path, algorithm="xxh3") != "xxh3:" + xxhash.xxh3_128(data).hexdigest()[:12]
