"""Table 2 (agreement) on synthetic FIRE data with the paper's exact counts; α against `krippendorff`."""

from __future__ import annotations

import json

import krippendorff
import numpy as np
import pytest

from tvrbench.evaluation.fire.agreement import agreement
from tvrbench.evaluation.fire.pairs import pair_votes
from tvrbench.evaluation.reliability import krippendorff_alpha_nominal
from tvrbench.io.fire import FireLabels, read_fire

# Vote patterns (irrelevant votes, relevant votes) -> number of pairs, chosen so that the counts,
# the unanimous-agreement share and α round to the paper's Table 2.
MSRVTT_DESIGN = {(1, 0): 21052, (0, 1): 2826, (1, 1): 12, (2, 2): 4, (2, 0): 258, (0, 2): 25, (3, 0): 1, (3, 1): 1, (1, 3): 4}
MSVD_DESIGN = {
    (1, 0): 427986,
    (0, 1): 31425,
    (1, 1): 1556,
    (2, 2): 3,
    (0, 2): 5418,
    (2, 0): 81491,
    (1, 2): 695,
    (2, 1): 1544,
    (0, 3): 2187,
    (3, 0): 2849,
    (1, 3): 184,
    (3, 1): 53,
}
PAPER = {
    "MSRVTT": dict(pairs=24183, labels=24507, relevant=2855, irrelevant=21312, disagreements=16, agreement=0.931, alpha=0.691, resolved=0.999),
    "MSVD": dict(pairs=555391, labels=659126, relevant=39909, irrelevant=513923, disagreements=1559, agreement=0.958, alpha=0.798, resolved=0.997),
}
NAMES = ("irrelevant", "relevant")


def design_records(dataset: str, design: dict, models=("CLIP4CLIP", "SSB", "CE")):
    """FIRE records (dicts, file schema) for a vote design; ties have no label (disagreements)."""
    annotations, disagreements = [], []
    rng = np.random.default_rng(len(dataset))
    index = 0
    for (irrelevant, relevant), count in design.items():
        for _ in range(count):
            votes = [0] * irrelevant + [1] * relevant
            rng.shuffle(votes)
            record = {
                "annotator_ids": [int(a) for a in rng.choice(100, len(votes), replace=False)],
                "video_id": f"{dataset.lower()}-video{index % 997}",
                "query": f"{dataset} caption number {index}",
                "annotator_labels": [NAMES[v] for v in votes],
                "response_ids": [10**15 + index * 4 + k for k in range(len(votes))],
                "queue_ids": [7 * 10**15 + len(votes)] * len(votes),
                "models": [models[(index + k) % len(models)] for k in range(len(votes))],
                "dataset": dataset,
            }
            if relevant == irrelevant:
                disagreements.append(record)
            else:
                annotations.append({**record, "label": NAMES[int(relevant > irrelevant)]})
            index += 1
    return annotations, disagreements


def write_design(path, designs: dict) -> None:
    annotations, disagreements = [], []
    for dataset, design in designs.items():
        a, d = design_records(dataset, design)
        annotations += a
        disagreements += d
    payload = {
        "annotations": annotations,
        "disagreements": disagreements,
        "source_ds": "synthetic",
        "creator": "tvrbench tests",
        "datasets": list(designs),
    }
    path.write_text(json.dumps(payload))


def labels_in_memory(dataset: str, design: dict) -> FireLabels:
    """Records of a vote design as columns, built without JSON (fast enough for the 555K MSVD pairs).

    Record ``i`` has query "<dataset> caption number i"; annotators of a record are 0, 1, 2, ...
    """
    patterns = np.repeat(np.array(list(design)), list(design.values()), axis=0)
    order = np.argsort(patterns[:, 0] == patterns[:, 1], kind="stable")  # annotations, then disagreements
    patterns = patterns[order]
    column = lambda values: np.array(values + [None], dtype=object)[:-1]  # noqa: E731
    votes = {tuple(p): (0,) * p[0] + (1,) * p[1] for p in design}
    n = len(patterns)
    return FireLabels(
        query=column([f"{dataset} caption number {i}" for i in range(n)]),
        video_id=column([f"{dataset.lower()}-video{i % 997}" for i in range(n)]),
        label=np.where(patterns[:, 1] > patterns[:, 0], 1, np.where(patterns[:, 1] < patterns[:, 0], 0, -1)).astype(np.int8),
        dataset=column([dataset] * n),
        models=[("CLIP4CLIP",)] * n,
        annotator_labels=[votes[(i, r)] for i, r in patterns.tolist()],
        annotator_ids=[tuple(range(i + r)) for i, r in patterns.tolist()],
        metadata={},
        source="<memory>",
    )


def check_against_paper(stats, dataset):
    expected = PAPER[dataset]
    for field in ("pairs", "labels", "relevant", "irrelevant", "disagreements"):
        assert getattr(stats, field) == expected[field], field
    for field in ("agreement", "alpha", "resolved"):
        assert round(getattr(stats, field), 3) == expected[field], field


def test_table2_msrvtt_from_a_fire_file(tmp_path):
    path = tmp_path / "fire.json"
    write_design(path, {"MSRVTT": MSRVTT_DESIGN})
    stats = agreement(read_fire(path))
    assert list(stats) == ["MSRVTT"]
    check_against_paper(stats["MSRVTT"], "MSRVTT")


def test_table2_msvd_real_size():
    stats = agreement(labels_in_memory("MSVD", MSVD_DESIGN))["MSVD"]
    check_against_paper(stats, "MSVD")
    votes = np.repeat(np.array(list(MSVD_DESIGN)), list(MSVD_DESIGN.values()), axis=0)
    assert stats.alpha == pytest.approx(krippendorff.alpha(value_counts=votes, level_of_measurement="nominal"), abs=1e-9)


def test_alpha_matches_krippendorff_reliability_matrix():
    """Coders × units matrix (nan = no label), the package's usual input, from the annotator ids."""
    fire = labels_in_memory("MSRVTT", MSRVTT_DESIGN)
    coders = sorted({a for ids in fire.annotator_ids for a in ids})
    row_of = {a: i for i, a in enumerate(coders)}
    matrix = np.full((len(coders), len(fire)), np.nan)
    for unit, (ids, votes) in enumerate(zip(fire.annotator_ids, fire.annotator_labels)):
        for annotator, vote in zip(ids, votes):
            matrix[row_of[annotator], unit] = vote
    expected = krippendorff.alpha(reliability_data=matrix, level_of_measurement="nominal")
    assert agreement(fire)["MSRVTT"].alpha == pytest.approx(expected, abs=1e-9)


@pytest.mark.parametrize("seed", range(4))
def test_alpha_random_counts_three_categories(seed):
    counts = np.random.default_rng(seed).integers(0, 4, size=(200, 3))
    expected = krippendorff.alpha(value_counts=counts, level_of_measurement="nominal")
    assert krippendorff_alpha_nominal(counts) == pytest.approx(expected, abs=1e-9)


def test_alpha_undefined_without_variation():
    assert np.isnan(krippendorff_alpha_nominal(np.array([[2, 0], [3, 0]])))


def test_agreement_oracle_loop_and_label_count_breakdown():
    fire = labels_in_memory("MSRVTT", MSRVTT_DESIGN)
    stats = agreement(fire)["MSRVTT"]
    multiple = [v for v in fire.annotator_labels if len(v) >= 2]
    assert stats.multiply_labelled == len(multiple)
    assert stats.agreement == pytest.approx(sum(len(set(v)) == 1 for v in multiple) / len(multiple))
    same = sum(sum(a == b for i, a in enumerate(v) for j, b in enumerate(v) if i != j) for v in multiple)
    total = sum(len(v) * (len(v) - 1) for v in multiple)
    assert stats.pairwise_agreement == pytest.approx(same / total)
    assert stats.by_label_count["4"] == {"pairs": 9, "agreement": 0.0}


def test_repeated_records_are_one_pair_with_pooled_votes():
    fire = labels_in_memory("MSRVTT", {(0, 1): 2, (1, 0): 1})
    repeated = fire.subset(np.array([0, 1, 2, 0, 2, 1, 1]))
    repeated.label[4] = 1  # the repeat of record 2 says relevant: a 1-1 tie
    repeated.label[5:] = 0  # record 1 repeated twice as irrelevant: 2 against 1
    pairs = pair_votes(repeated)
    assert len(pairs) == 3
    assert pairs.votes.sum() == 7
    by_query = dict(zip(pairs.query.tolist(), pairs.file_label.tolist()))
    assert by_query[fire.query[0]] == 1 and by_query[fire.query[1]] == 0 and by_query[fire.query[2]] == -1


def test_label_rules():
    fire = labels_in_memory("MSVD", {(1, 2): 1, (2, 1): 1, (0, 3): 1, (1, 1): 1})
    pairs = pair_votes(fire)
    order = np.argsort([int(q.split()[-1]) for q in pairs.query])
    assert pairs.label("file")[order].tolist() == [1, 0, 1, -1]
    assert pairs.label("majority")[order].tolist() == [1, 0, 1, -1]
    assert pairs.label("any")[order].tolist() == [1, 1, 1, 1]
    assert pairs.label("unanimous")[order].tolist() == [-1, -1, 1, -1]
    with pytest.raises(ValueError):
        pairs.label("plurality")


def test_table2_through_the_command_line(tmp_path):
    from test_fire_cli import run

    write_design(tmp_path / "fire.json", {"MSRVTT": MSRVTT_DESIGN, "MSVD": {(1, 0): 3, (0, 2): 1, (1, 1): 1}})
    run(["agreement", "--fire", str(tmp_path / "fire.json"), "--json", str(tmp_path / "table2.json")])
    table = json.loads((tmp_path / "table2.json").read_text())
    assert table.pop("written_by") == "tvrbench fire agreement" and set(table) == {"MSRVTT", "MSVD"}
    row = table["MSRVTT"]
    for field in ("pairs", "labels", "relevant", "irrelevant", "disagreements"):
        assert row[field] == PAPER["MSRVTT"][field]
    assert round(row["agreement"], 3) == 0.931 and round(row["alpha"], 3) == 0.691
    assert table["MSVD"]["pairs"] == 5 and table["MSVD"]["disagreements"] == 1


def write_design_quickly(path, dataset: str, design: dict) -> None:
    """The same records as :func:`design_records` minus the per-label ids, formatted as text in one go
    (fast enough to write MSVD's 555K pairs)."""
    annotations, disagreements = [], []
    index = 0
    for (irrelevant, relevant), count in design.items():
        labels = ", ".join(['"irrelevant"'] * irrelevant + ['"relevant"'] * relevant)
        annotators = ", ".join(str(k) for k in range(irrelevant + relevant))
        label = "" if relevant == irrelevant else f', "label": "{NAMES[int(relevant > irrelevant)]}"'
        target = disagreements if relevant == irrelevant else annotations
        for _ in range(count):
            target.append(
                f'{{"annotator_ids": [{annotators}], "video_id": "{dataset.lower()}-video{index % 997}", '
                f'"query": "{dataset} caption number {index}", "annotator_labels": [{labels}], "response_ids": [], '
                f'"queue_ids": [], "models": ["CLIP4CLIP"], "dataset": "{dataset}"{label}}}'
            )
            index += 1
    path.write_text(f'{{"annotations": [{", ".join(annotations)}], "disagreements": [{", ".join(disagreements)}], "datasets": ["{dataset}"]}}')


def test_table2_msvd_from_a_fire_file_of_the_real_size(tmp_path):
    path = tmp_path / "fire.json"
    write_design_quickly(path, "MSVD", MSVD_DESIGN)
    stats = agreement(read_fire(path))
    assert list(stats) == ["MSVD"]
    check_against_paper(stats["MSVD"], "MSVD")
