"""Judgments.build from FIRE records and qrels equals a plain per-record loop (SPEC §2: majority per
pair, a label applies to every caption with the record's text, a tie or a disagreement is judged
only; a qrel above 0 is relevant, any other irrelevant; a positive from any source wins)."""

from collections import defaultdict

import numpy as np
import pytest

from tvrbench.errors import InputError
from tvrbench.evaluation.labels import Judgments
from tvrbench.io.captions import Captions
from tvrbench.io.fire import FireLabels
from tvrbench.io.trec import Qrels


def strings(values):
    return np.array(list(values) + [None], dtype=object)[:-1]


def fire_records(queries, video_ids, labels) -> FireLabels:
    n = len(queries)
    return FireLabels(
        query=strings(queries),
        video_id=strings(video_ids),
        label=np.asarray(labels, np.int8),
        dataset=strings(["MSRVTT"] * n),
        models=[("CLIP4CLIP",)] * n,
        annotator_labels=[(1,)] * n,
        annotator_ids=[(0,)] * n,
        metadata={},
        source="fire.json",
    )


def oracle(captions: Captions, video_ids: list[str], fire: FireLabels, qrels: Qrels):
    """The per-record loops the vectorized build replaced."""
    column_of = {v: c for c, v in enumerate(video_ids)}
    rows_of_text = defaultdict(list)
    for row, text in enumerate(captions.texts):
        rows_of_text[text].append(row)
    votes = defaultdict(lambda: [0, 0])
    for text, video_id, label in zip(fire.query, fire.video_id, fire.label):
        tally = votes[(text, video_id)]
        tally[0] += label == 1
        tally[1] += label == 0
    shape = (len(captions), len(video_ids))
    positive, irrelevant, judged = np.zeros(shape, bool), np.zeros(shape, bool), np.zeros(shape, bool)
    for row, video_id in enumerate(captions.video_ids):
        positive[row, column_of[video_id]] = judged[row, column_of[video_id]] = True
    for (text, video_id), (relevant, against) in votes.items():
        for row in rows_of_text[text]:
            judged[row, column_of[video_id]] = True
            if relevant > against:
                positive[row, column_of[video_id]] = True
            elif relevant < against:
                irrelevant[row, column_of[video_id]] = True
    row_of = {caption_id: row for row, caption_id in enumerate(captions.caption_ids)}
    for query_id, doc_id, relevance in zip(qrels.query_ids, qrels.doc_ids, qrels.relevance):
        judged[row_of[query_id], column_of[doc_id]] = True
        (positive if relevance > 0 else irrelevant)[row_of[query_id], column_of[doc_id]] = True
    return positive, irrelevant & ~positive, judged


@pytest.mark.parametrize("seed", range(5))
def test_build_from_fire_equals_the_per_record_loop(seed):
    rng = np.random.default_rng(seed)
    video_ids = [f"video{i}" for i in range(17)]
    texts = [f"caption {i}" for i in rng.integers(0, 40, 90)]  # many captions share a text
    captions = Captions([f"c{i}" for i in range(90)], texts, list(rng.choice(video_ids, 90)))
    n = 600
    fire = fire_records(rng.choice(sorted(set(texts)), n), rng.choice(video_ids, n), rng.choice([1, 0, -1], n, p=[0.45, 0.4, 0.15]))
    qrels = Qrels(strings(rng.choice(captions.caption_ids, 60)), strings(rng.choice(video_ids, 60)), rng.integers(-1, 3, 60).astype(np.int32))
    judgments = Judgments.build(captions, video_ids, fire=fire, qrels=qrels)
    positive, irrelevant, judged = oracle(captions, video_ids, fire, qrels)
    assert (judgments.positive.toarray() == positive).all()
    assert (judgments.irrelevant.toarray() == irrelevant).all()
    assert (judgments.judged.toarray() == judged).all()
    assert judgments.positive.sum() > len(captions) and judgments.irrelevant.sum() > 0  # the records did something


def test_the_first_unknown_record_is_named():
    captions = Captions(["c0", "c1"], ["a dog runs", "a cat sleeps"], ["v0", "v1"])
    fire = fire_records(["a dog runs", "a cat sleeps", "a bird sings"], ["v0", "v9", "v1"], [1, 0, 1])
    with pytest.raises(InputError, match="video 'v9' is not in the videos list"):
        Judgments.build(captions, ["v0", "v1"], fire=fire)
    fire = fire_records(["a dog runs", "a bird sings", "a cat sleeps"], ["v0", "v9", "v1"], [1, 0, 1])
    with pytest.raises(InputError, match="query 'a bird sings' is not the text of any caption"):
        Judgments.build(captions, ["v0", "v1"], fire=fire)


@pytest.mark.parametrize("seed", range(3))
def test_one_majority_vote_for_repeated_records(seed):
    """Judgments.build and the FIRE tables resolve a pair repeated over records by one function; it
    equals a plain count per pair (ties and disagreement records leave no majority)."""
    from tvrbench.evaluation.fire.pairs import pair_votes, record_majority

    rng = np.random.default_rng(seed)
    record_pair, label = rng.integers(0, 30, 200), rng.choice([1, 0, -1], 200)
    expected = [int(np.sign(np.sum(label[record_pair == p] == 1) - np.sum(label[record_pair == p] == 0))) for p in range(30)]
    assert record_majority(record_pair, label, 30).tolist() == expected
    assert {-1, 0, 1} <= set(expected)
    fire = fire_records([f"caption {p}" for p in record_pair], ["video0"] * 200, label)
    pairs = pair_votes(fire)
    by_text = dict(zip(pairs.query, pairs.file_label.tolist()))
    assert all(by_text[f"caption {p}"] == {1: 1, -1: 0, 0: -1}[expected[p]] for p in set(record_pair.tolist()))
