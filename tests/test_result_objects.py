"""MC scores, contrast runs and proxy studies are result objects like the FIRE analyses: frozen, their
tables views of their JSON, written by the command line through ``write_result``; and the report shows
every result it is given as that result's tables, rebuilt from the written file."""

from __future__ import annotations

import dataclasses
import html
import json

import numpy as np
import pytest

from tvrbench.cli import run
from tvrbench.cli.outputs import write_result
from tvrbench.evaluation import EvaluationResult
from tvrbench.io.captions import Captions
from tvrbench.io.mc import MCInstance, write_mc
from tvrbench.io.writers import mark
from tvrbench.results import Table, TablesOfJson, analysis_signature, count_or_share
from tvrbench.signature import Signature

TEXTS = ["a man is cooking", "a woman is cooking soup", "a dog runs on grass", "a boy plays the guitar", "a girl rides a horse", "cars race"]
VIDEOS = ["v0", "v0", "v1", "v2", "v3", "v4"]


def shown_nowhere(result) -> None:
    """``write_result`` without the table on stdout: these tests read the files."""


def cells_in_page(table, page: str) -> bool:
    """Whether the report shows ``table`` as the command line does: caption, header and every row's cells."""
    cell = lambda number, text: f'<td class="num">{html.escape(text)}</td>' if number else f"<td>{html.escape(text)}</td>"  # noqa: E731
    rows = ("<tr>" + "".join(cell(number, text) for number, text in enumerate(row)) + "</tr>" for row in table.rows)
    header = "<tr>" + "".join(f"<th>{html.escape(column)}</th>" for column in table.columns) + "</tr>"
    return all(part in page for part in (header, *rows))


def test_evaluation_result_is_frozen():
    result = EvaluationResult({"C@1": 0.5}, {"C@1": np.array([1.0, 0.0])}, 2, Signature({"task": "t2v"}))
    with pytest.raises(dataclasses.FrozenInstanceError):
        result.metrics = {"C@1": 1.0}
    with pytest.raises(dataclasses.FrozenInstanceError):
        result.original = result
    assert result.rows == [["C@1", "0.5000"]]


@pytest.fixture
def mc_split(tmp_path):
    """Six instances; the scores pick the positive in the first three, tie it in the fourth, miss it in the rest."""
    instances = [MCInstance(f"v{i}", tuple(f"option {i} {k}" for k in range(5)), i % 5) for i in range(6)]
    write_mc(tmp_path / "split.tsv", instances)
    scores = np.zeros((6, 5))
    for row, instance in enumerate(instances):
        scores[row, instance.label] = 1.0 if row < 4 else 0.0
        scores[row, (instance.label + 1) % 5] = 1.0 if row == 3 else 0.5 if row >= 4 else 0.0
    np.save(tmp_path / "scores.npy", scores)
    return tmp_path / "split.tsv", tmp_path / "scores.npy"


def test_mc_score_is_a_result_whose_table_is_its_json(mc_split, tmp_path):
    from tvrbench.mc.score import MCScore, score_mc_file

    split, scores = mc_split
    result = score_mc_file(split, scores_path=scores)
    payload = result.to_json()
    assert isinstance(result, MCScore) and list(payload) == ["accuracy", "ties", "n", "picks", "signature"]  # the keys and order mc score wrote
    assert (payload["accuracy"], payload["ties"], payload["n"]) == (pytest.approx(3 / 6), pytest.approx(1 / 6), 6)
    assert result.rows == [["all", f"{payload['accuracy']:.3f}", f"{payload['ties']:.3f}", f"{payload['n']:,}"]]
    with pytest.raises(dataclasses.FrozenInstanceError):
        result.outcome = {}
    write_result(result, tmp_path / "library.json", show=shown_nowhere)
    assert json.loads((tmp_path / "library.json").read_text()) == payload
    assert run(["mc", "score", "--mc", str(split), "--scores", str(scores), "--json", str(tmp_path / "cli.json")]) == 0
    assert json.loads((tmp_path / "cli.json").read_text()) == mark(payload, "mc score")  # the same, under the command's name


def test_proxy_studies_are_results_whose_tables_are_their_json(tmp_path):
    from tvrbench.proxies.study_files import correlation_study, curve_study

    rows = [f"c{i},{text},{video}" for i, (text, video) in enumerate(zip(TEXTS, VIDEOS))]
    (tmp_path / "captions.csv").write_text("\n".join(["caption_id,text,video_id", *rows]) + "\n")
    for name in ("a", "b"):
        args = ["proxies", "--captions", str(tmp_path / "captions.csv"), "--proxy", "bow", "--level", "video", "--out", str(tmp_path / f"{name}.npy")]
        assert run(args) == 0
    matrices = {"A": tmp_path / "a.npy", "B": tmp_path / "b.npy"}
    curve = curve_study(matrices, 3)
    payload = curve.to_json()
    assert list(payload) == ["thresholds", "mean_relevant", "signature"] and "analysis:proxy-curve" in payload["signature"]
    assert curve.columns == ["T", "A", "B"]
    assert curve.rows == [[f"{t:.2f}", *(f"{payload['mean_relevant'][m][i]:.3f}" for m in "AB")] for i, t in enumerate(payload["thresholds"])]
    correlation = correlation_study(matrices)
    assert correlation.rows == [["A", "1.000", "1.000"], ["B", "1.000", "1.000"]]  # one proxy twice
    for name, result in (("curve", curve), ("correlation", correlation)):
        write_result(result, tmp_path / f"{name}.json", show=shown_nowhere)
        assert json.loads((tmp_path / f"{name}.json").read_text()) == result.to_json()
    matrix_args = [arg for name, path in matrices.items() for arg in ("--matrix", f"{name}={path}")]
    assert run(["proxy-study", "curve", *matrix_args, "--steps", "3", "--json", str(tmp_path / "cli.json")]) == 0
    assert json.loads((tmp_path / "cli.json").read_text()) == mark(curve.to_json(), "proxy-study curve")


def test_a_contrast_run_is_a_result_whose_json_is_its_sidecar(tmp_path):
    from tvrbench.generators import gender_contrasts
    from tvrbench.generators.config import GenderConfig

    captions = Captions([f"c{i}" for i in range(len(TEXTS))], TEXTS, VIDEOS, source="captions.csv")
    records, result = gender_contrasts(captions, tmp_path / "gender.jsonl", GenderConfig(lm="ngram"))
    payload = result.to_json()
    assert json.loads((tmp_path / "gender.jsonl.json").read_text()) == payload
    assert list(payload) == ["signature", "kind", "captions", "counts", "candidates_rejected", "plausibility", "audit", "settings"]
    assert payload["counts"]["records"] == len(records) > 0
    assert result.rows[: len(payload["counts"])] == [[name, f"{count:,}"] for name, count in payload["counts"].items()]
    with pytest.raises(dataclasses.FrozenInstanceError):
        result.counts = {}


def test_the_report_shows_each_result_as_its_tables_rebuilt_from_the_written_json(mc_split, tmp_path):
    """A value changed in a written file is what the report shows, formatted as the result's table formats it."""
    split, scores = mc_split
    assert run(["mc", "score", "--mc", str(split), "--scores", str(scores), "--json", str(tmp_path / "mc.json")]) == 0
    mc = json.loads((tmp_path / "mc.json").read_text()) | {"accuracy": 0.123456}
    evaluation = EvaluationResult({"C@1": 0.5, "MnR": 2.25}, {}, 4, Signature({"task": "t2v"})).to_json() | {"metrics": {"C@1": 0.8765, "MnR": 2.25}}
    curve = {"thresholds": [0.0, 1.0], "mean_relevant": {"BoW": [9.0, 1.4567]}, "signature": "tvrbench:0.1.0|analysis:proxy-curve"}
    for name, payload in (("mc", mc), ("evaluation", {"models": {"m": evaluation}}), ("curve", curve)):
        (tmp_path / f"{name}.json").write_text(json.dumps(payload))
    analyses = [arg for name in ("mc", "curve") for arg in ("--analysis", f"{name}={tmp_path / f'{name}.json'}")]
    assert run(["report", "--out", str(tmp_path / "report.html"), "--results", f"run={tmp_path / 'evaluation.json'}", *analyses]) == 0
    page = (tmp_path / "report.html").read_text(encoding="utf-8")
    digest = Signature.parse(mc["signature"]).fields["mc"]  # no --mc names the split: the MC scores table names it by its digest
    assert f'<tr><td>split mc:{digest}</td><td class="num">6</td><td class="num">0.123</td></tr>' in page and "<th>mc</th>" in page
    assert cells_in_page(EvaluationResult.tables_of(evaluation)[0], page) and '<td class="num">0.8765</td>' in page
    assert '<tr><td>1.00</td><td class="num">1.457</td></tr>' in page and "Fig. 4" in page


def test_a_result_s_title_columns_rows_and_parts_are_its_tables_built_once_from_its_json(tmp_path):
    @dataclasses.dataclass(frozen=True)
    class Counted(TablesOfJson):
        values: tuple[int, ...]
        built = []  # tables_of calls

        def to_json(self) -> dict:
            return {"values": list(self.values)}

        def tables_of(self, payload: dict) -> list[Table]:
            self.built.append(payload)
            first = Table("values", ["i", "value"], [[str(i), count_or_share(v)] for i, v in enumerate(payload["values"])], ("a note",))
            return [first, Table("total", ["sum"], [[count_or_share(sum(payload["values"]))]])]

    result = Counted((1, 2500))
    assert (result.title, result.columns, result.rows, result.notes) == ("values", ["i", "value"], [["0", "1"], ["1", "2,500"]], ("a note",))
    assert result.parts == [Table("total", ["sum"], [["2,501"]])] and len(Counted.built) == 1
    assert [count_or_share(None), count_or_share(0.12345), count_or_share(1234567)] == ["—", "0.123", "1,234,567"]
    data = tmp_path / "fire.json"
    data.write_text("{}")
    signature = analysis_signature("pooling", {"fire": data, "scores": None}, {"depth": 5})
    fields = Signature.parse(str(signature)).fields
    assert fields["analysis"] == "pooling" and fields["depth"] == "5" and "scores" not in fields and "fire" in fields
    assert list(fields).index("analysis") < list(fields).index("fire") < list(fields).index("depth")
