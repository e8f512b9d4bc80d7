"""Build tvrbench's embedded sample: 36 invented videos, 112 captions, 3 models, FIRE labels.

Nothing here is copied from a dataset: the videos are short descriptions written for tvrbench
and stand for clips that do not exist; each has a set of *facets* (who, what they do, objects,
place). A caption names some facets, and the ground truth follows FIRE's rule: a caption is
relevant to a video when every facet it mentions is shown in the video. Everything else is
derived from that, with seeded randomness, so re-running this script reproduces every file
byte for byte (tests/data/test_sample.py checks it):

    python tvrbench/data/sample/build_sample.py [--out DIR]

See README.md in this folder for what each file holds.
"""

from __future__ import annotations

import argparse
import csv
import hashlib
import io
from pathlib import Path

import numpy as np

from tvrbench.io.atomic import atomic_write, write_json, write_npy
from tvrbench.io.fire import FireLabels, RaggedInts, write_fire

SEED = 20240601
DATASET = "SAMPLE"
POOL_DEPTH = 5  # each model's top-5 videos per caption are sent to the simulated annotators
ANNOTATORS = (1, 2, 3, 4, 5, 6)

# facet -> facets it implies; applied to videos so that general captions ("someone", "an animal") match
IMPLIES = {
    "man": {"male", "person"},
    "woman": {"female", "person"},
    "boy": {"male", "child", "person"},
    "girl": {"female", "child", "person"},
    "chef": {"person"},
    "crowd": {"person", "group"},
    "dog": {"animal"},
    "cat": {"animal"},
    "horse": {"animal"},
    "bird": {"animal"},
    "rabbit": {"animal"},
    "mouse": {"animal"},
    "fish": {"animal"},
    "car": {"vehicle"},
    "truck": {"vehicle"},
    "bus": {"vehicle"},
    "motorcycle": {"vehicle"},
    "guitar": {"instrument"},
    "piano": {"instrument"},
    "violin": {"instrument"},
    "drums": {"instrument"},
    "chopping": {"cutting"},
    "slicing": {"cutting"},
    "tomato": {"vegetable"},
    "onion": {"vegetable"},
    "highway": {"road"},
}

# video id, theme, what the (imagined) clip shows, its facets before implications
VIDEOS = [
    ("video01", "cooking", "a man chops onions with a knife in a kitchen", "man chopping onion knife kitchen cooking"),
    ("video02", "cooking", "a woman stirs a pot of soup on a stove", "woman stirring soup pot kitchen cooking"),
    ("video03", "cooking", "a girl and her mother bake a cake", "girl woman group baking cake kitchen cooking"),
    ("video04", "cooking", "a chef flips pancakes in a pan", "man chef flipping pancake pan kitchen cooking"),
    ("video05", "cooking", "a woman slices tomatoes at a picnic table", "woman slicing tomato knife outdoors cooking"),
    ("video06", "cooking", "a boy pours milk into a bowl of cereal", "boy pouring milk cereal bowl kitchen"),
    ("video07", "sports", "a man plays tennis on a court", "man playing hitting tennis racket ball court sport"),
    ("video08", "sports", "a woman runs laps on a track", "woman running track sport outdoors"),
    ("video09", "sports", "boys play soccer in a field", "boy group playing kicking soccer ball field sport outdoors"),
    ("video10", "sports", "a girl swims in a pool", "girl swimming pool water sport"),
    ("video11", "sports", "a man lifts weights in a gym", "man lifting weights gym sport"),
    ("video12", "sports", "a woman rides a bicycle along a road", "woman riding bicycle road outdoors sport"),
    ("video13", "music", "a man plays the guitar on a stage", "man playing guitar stage music"),
    ("video14", "music", "a woman sings into a microphone", "woman singing microphone stage music"),
    ("video15", "music", "a girl plays the piano at home", "girl playing piano music room"),
    ("video16", "music", "a band of men plays drums and guitars", "man group playing drums guitar stage music"),
    ("video17", "music", "a boy plays the violin", "boy playing violin music"),
    ("video18", "music", "a crowd dances at a concert", "crowd dancing music stage"),
    ("video19", "animals", "a dog runs and plays on a beach", "dog running playing beach sand water outdoors"),
    ("video20", "animals", "a cat sleeps on a sofa", "cat sleeping sofa room"),
    ("video21", "animals", "a woman feeds an apple to a horse on a farm", "woman feeding apple horse farm outdoors"),
    ("video22", "animals", "a man walks his dog in a park", "man walking dog park outdoors"),
    ("video23", "animals", "birds fly over a lake", "bird group flying water sky outdoors"),
    ("video24", "animals", "a girl holds and pets a rabbit", "girl holding petting playing rabbit"),
    ("video25", "cartoons", "a cartoon cat chases a mouse", "cartoon cat mouse chasing running"),
    ("video26", "cartoons", "a cartoon superhero girl flies across the sky", "cartoon superhero girl flying sky"),
    ("video27", "cartoons", "cartoon cars race along a road", "cartoon car group racing driving fast road"),
    ("video28", "cartoons", "a cartoon boy throws a ball to his dog", "cartoon boy dog playing throwing ball"),
    ("video29", "cartoons", "a cartoon chef cooks in a kitchen", "cartoon man chef cooking kitchen"),
    ("video30", "cartoons", "a cartoon fish swims in the ocean", "cartoon fish swimming water ocean"),
    ("video31", "driving", "a man drives a car on a highway", "man driving car highway"),
    ("video32", "driving", "a woman talks while driving through a city", "woman talking driving car road city"),
    ("video33", "driving", "a red sports car races around a track", "red car racing driving fast track"),
    ("video34", "driving", "a man rides a motorcycle down a road", "man riding motorcycle road outdoors"),
    ("video35", "driving", "a truck drives through snow", "truck driving snow road outdoors"),
    ("video36", "driving", "a city bus stops to pick up people", "bus stopping driving person group road city"),
]

# video id, caption text, the facets the caption mentions ("he" / "she" mention male / female)
CAPTIONS = [
    ("video01", "a man is cooking", "man cooking"),
    ("video01", "a man chops onions with a knife", "man chopping onion knife"),
    ("video01", "he is cutting vegetables in the kitchen", "male cutting vegetable kitchen"),
    ("video01", "someone is preparing food", "person cooking"),
    ("video02", "a woman is cooking", "woman cooking"),
    ("video02", "a woman stirs a pot of soup", "woman stirring pot soup"),
    ("video02", "she is making soup in the kitchen", "female soup cooking kitchen"),
    ("video03", "a girl and her mother bake a cake", "girl woman baking cake"),
    ("video03", "a little girl is baking", "girl baking"),
    ("video03", "two people are cooking in a kitchen", "person group cooking kitchen"),
    ("video04", "a chef flips pancakes in a pan", "chef flipping pancake pan"),
    ("video04", "a man is making food", "man cooking"),
    ("video04", "he cooks pancakes for breakfast", "male cooking pancake"),
    ("video05", "a woman slices tomatoes outside", "woman slicing tomato outdoors"),
    ("video05", "a woman is cutting vegetables", "woman cutting vegetable"),
    ("video05", "someone uses a knife to cut food", "person knife cutting"),
    ("video06", "a boy pours milk into his cereal", "boy pouring milk cereal"),
    ("video06", "a boy is in the kitchen", "boy kitchen"),
    ("video06", "someone pours milk into a bowl", "person pouring milk bowl"),
    ("video07", "a man is playing tennis", "man playing tennis"),
    ("video07", "a man hits a ball with a racket", "man hitting ball racket"),
    ("video07", "a person is playing a sport", "person playing sport"),
    ("video08", "a woman is running on a track", "woman running track"),
    ("video08", "she runs as fast as she can", "female running"),
    ("video08", "an athlete is running", "person running sport"),
    ("video09", "boys are playing soccer in a field", "boy group playing soccer field"),
    ("video09", "a boy kicks a ball", "boy kicking ball"),
    ("video09", "kids are playing a game outside", "child group playing outdoors"),
    ("video09", "a group of people play a sport", "person group playing sport"),
    ("video10", "a girl is swimming in a pool", "girl swimming pool"),
    ("video10", "she swims laps", "female swimming"),
    ("video10", "someone is in the water", "person water"),
    ("video11", "a man lifts weights at the gym", "man lifting weights gym"),
    ("video11", "a man is working out", "man sport"),
    ("video11", "he lifts a heavy barbell", "male lifting weights"),
    ("video12", "a woman rides a bicycle down the road", "woman riding bicycle road"),
    ("video12", "a woman is riding a bike", "woman riding bicycle"),
    ("video12", "a cyclist on a road", "person bicycle road"),
    ("video13", "a man plays the guitar on stage", "man playing guitar stage"),
    ("video13", "a man is playing an instrument", "man playing instrument"),
    ("video13", "someone is playing music", "person playing music"),
    ("video14", "a woman sings into a microphone", "woman singing microphone"),
    ("video14", "a woman is singing on stage", "woman singing stage"),
    ("video14", "she performs a song", "female singing music"),
    ("video15", "a girl is playing the piano", "girl playing piano"),
    ("video15", "a young girl plays music at home", "girl playing music room"),
    ("video15", "her fingers move across the piano keys", "female piano"),
    ("video16", "a band plays on stage", "group playing music stage"),
    ("video16", "a man is playing the drums", "man playing drums"),
    ("video16", "men are playing guitar and drums", "man group playing guitar drums"),
    ("video17", "a boy is playing the violin", "boy playing violin"),
    ("video17", "a young boy plays an instrument", "boy playing instrument"),
    ("video17", "a child makes music", "child music"),
    ("video18", "people are dancing at a concert", "person group dancing music"),
    ("video18", "a crowd dances to music", "crowd dancing music"),
    ("video18", "a group of people is dancing", "person group dancing"),
    ("video19", "a dog runs on the beach", "dog running beach"),
    ("video19", "a dog is playing in the sand", "dog playing sand"),
    ("video19", "an animal is running outside", "animal running outdoors"),
    ("video20", "a cat is sleeping on a sofa", "cat sleeping sofa"),
    ("video20", "a cat takes a nap", "cat sleeping"),
    ("video20", "a pet is resting indoors", "animal sleeping room"),
    ("video21", "a woman feeds a horse", "woman feeding horse"),
    ("video21", "she gives an apple to a horse", "female feeding apple horse"),
    ("video21", "a horse on a farm", "horse farm"),
    ("video22", "a man walks his dog in the park", "man walking dog park"),
    ("video22", "a man is walking with a dog", "man walking dog"),
    ("video22", "someone walks outside", "person walking outdoors"),
    ("video23", "birds are flying over the water", "bird group flying water"),
    ("video23", "a flock of birds in the sky", "bird group sky"),
    ("video23", "animals are flying", "animal group flying"),
    ("video24", "a girl holds a rabbit", "girl holding rabbit"),
    ("video24", "a girl is petting a bunny", "girl petting rabbit"),
    ("video24", "she is playing with her pet", "female playing animal"),
    ("video25", "a cartoon cat chases a mouse", "cartoon cat chasing mouse"),
    ("video25", "a cartoon mouse is running", "cartoon mouse running"),
    ("video25", "an animated cartoon with animals", "cartoon animal"),
    ("video26", "a cartoon girl flies through the sky", "cartoon girl flying sky"),
    ("video26", "an animated girl is flying", "cartoon girl flying"),
    ("video26", "a cartoon about a superhero", "cartoon superhero"),
    ("video27", "cartoon cars are racing", "cartoon car group racing"),
    ("video27", "a cartoon car drives down the road", "cartoon car driving road"),
    ("video27", "an animated race", "cartoon racing"),
    ("video28", "a cartoon boy plays ball with his dog", "cartoon boy playing ball dog"),
    ("video28", "a boy and a dog are playing", "boy dog playing"),
    ("video28", "he throws a ball to the dog", "male throwing ball dog"),
    ("video29", "a cartoon chef is cooking", "cartoon chef cooking"),
    ("video29", "an animated man cooks in a kitchen", "cartoon man cooking kitchen"),
    ("video29", "a cartoon about cooking", "cartoon cooking"),
    ("video30", "a cartoon fish swims in the ocean", "cartoon fish swimming ocean"),
    ("video30", "a fish is swimming", "fish swimming"),
    ("video30", "animated sea creatures", "cartoon animal ocean"),
    ("video31", "a man is driving a car", "man driving car"),
    ("video31", "a man drives on the highway", "man driving highway"),
    ("video31", "someone is driving", "person driving"),
    ("video31", "a car on a road", "car road"),
    ("video32", "a woman is driving a car", "woman driving car"),
    ("video32", "she talks while driving in the city", "female talking driving city"),
    ("video32", "a woman drives through the city", "woman driving city"),
    ("video33", "a red car races around a track", "red car racing track"),
    ("video33", "a sports car is driving fast", "car driving fast"),
    ("video33", "a race car on a track", "car racing track"),
    ("video34", "a man rides a motorcycle", "man riding motorcycle"),
    ("video34", "a man is riding down the road", "man riding road"),
    ("video34", "a motorbike on the street", "motorcycle road"),
    ("video35", "a truck drives through the snow", "truck driving snow"),
    ("video35", "a vehicle on a snowy road", "vehicle snow road"),
    ("video35", "a big truck is driving", "truck driving"),
    ("video36", "a bus stops to pick up people", "bus stopping person group"),
    ("video36", "a bus is driving in the city", "bus driving city"),
    ("video36", "people get on a bus", "person group bus"),
    ("video36", "a vehicle in the city", "vehicle city"),
]

ACTIONS = {
    "chopping",
    "cutting",
    "stirring",
    "baking",
    "flipping",
    "slicing",
    "pouring",
    "playing",
    "hitting",
    "running",
    "kicking",
    "swimming",
    "lifting",
    "riding",
    "singing",
    "dancing",
    "sleeping",
    "feeding",
    "walking",
    "flying",
    "holding",
    "petting",
    "chasing",
    "racing",
    "throwing",
    "driving",
    "talking",
    "stopping",
    "cooking",
}
GENDERED = {"man": "person", "woman": "person", "boy": "child", "girl": "child", "male": "person", "female": "person"}

# model name -> (how it sees facets, score noise): three systems of different quality that disagree
MODELS = {
    "strong": (lambda facets: facets, 0.05),
    "genderblind": (lambda facets: {GENDERED.get(f, f) for f in facets}, 0.10),
    "objectonly": (lambda facets: (facets - ACTIONS) or {"something"}, 0.15),
}


def video_facets() -> dict[str, frozenset[str]]:
    """Each video's facets closed under IMPLIES."""
    closed = {}
    for video_id, _, _, facets in VIDEOS:
        shown = set(facets.split())
        while True:
            implied = set().union(*(IMPLIES.get(f, set()) for f in shown)) - shown
            if not implied:
                break
            shown |= implied
        closed[video_id] = frozenset(shown)
    return closed


def relevance_matrix(shown: dict[str, frozenset[str]]) -> np.ndarray:
    """Coverage: the share of a caption's facets its video shows; 1.0 exactly when FIRE's rule says relevant."""
    video_ids = [v[0] for v in VIDEOS]
    matrix = np.zeros((len(CAPTIONS), len(VIDEOS)), dtype=np.float32)
    for row, (_, _, facets) in enumerate(CAPTIONS):
        mentioned = set(facets.split())
        for column, video_id in enumerate(video_ids):
            matrix[row, column] = len(mentioned & shown[video_id]) / len(mentioned)
    return matrix


def model_scores(shown: dict[str, frozenset[str]], rng: np.random.Generator) -> dict[str, np.ndarray]:
    """A model sees facets through its view; score = 0.7 coverage + 0.3 IoU of what it sees, plus noise."""
    video_ids = [v[0] for v in VIDEOS]
    scores = {}
    for name, (view, noise) in MODELS.items():
        matrix = np.zeros((len(CAPTIONS), len(VIDEOS)))
        for row, (_, _, facets) in enumerate(CAPTIONS):
            seen_caption = view(set(facets.split()))
            for column, video_id in enumerate(video_ids):
                seen_video = view(set(shown[video_id]))
                common = len(seen_caption & seen_video)
                matrix[row, column] = 0.7 * common / len(seen_caption) + 0.3 * common / len(seen_caption | seen_video)
        scores[name] = (matrix + rng.normal(scale=noise, size=matrix.shape)).astype(np.float32)
    return scores


def simulate_labels(truth: bool, rng: np.random.Generator) -> list[int]:
    """1-3 annotators: one for most pairs; a second for 25%; a third for half of the split pairs."""

    def vote(error: float) -> int:
        return int(truth) if rng.random() > error else 1 - int(truth)

    labels = [vote(0.03)]
    if rng.random() < 0.25:
        labels.append(vote(0.15))
        if labels[0] != labels[1] and rng.random() < 0.5:
            labels.append(vote(0.03))
    return labels


def fire_labels(scores: dict[str, np.ndarray], relevant: np.ndarray, rng: np.random.Generator, captions_md5: str) -> FireLabels:
    """Pool each model's top-5 per caption (own video excluded: it is relevant by definition),
    then label every pooled pair with simulated annotators."""
    video_ids = [v[0] for v in VIDEOS]
    own = [video_ids.index(c[0]) for c in CAPTIONS]
    pools: dict[tuple[int, int], list[str]] = {}
    for name, matrix in scores.items():
        top = np.argsort(-matrix, axis=1, kind="stable")[:, : POOL_DEPTH + 1]
        for row, columns in enumerate(top.tolist()):
            for column in [c for c in columns if c != own[row]][:POOL_DEPTH]:
                pools.setdefault((row, column), []).append(name)
    queues = {name: 9001 + i for i, name in enumerate(MODELS)}
    rows = {"query": [], "video_id": [], "label": [], "models": [], "annotator_labels": [], "annotator_ids": [], "response_ids": [], "queue_ids": []}
    next_response = 1
    for (row, column), models in sorted(pools.items()):
        labels = simulate_labels(bool(relevant[row, column]), rng)
        votes = sum(labels)
        majority = 1 if votes * 2 > len(labels) else 0 if votes * 2 < len(labels) else -1
        rows["query"].append(CAPTIONS[row][1])
        rows["video_id"].append(video_ids[column])
        rows["label"].append(majority)
        rows["models"].append(tuple(models))
        rows["annotator_labels"].append(tuple(labels))
        rows["annotator_ids"].append(tuple(rng.choice(ANNOTATORS, size=len(labels), replace=False).tolist()))
        rows["response_ids"].append(tuple(range(next_response, next_response + len(labels))))
        rows["queue_ids"].append(tuple(queues[models[k % len(models)]] for k in range(len(labels))))
        next_response += len(labels)
    order = np.argsort(np.array(rows["label"]) == -1, kind="stable")  # annotations first, then disagreements
    pick = lambda values: [values[i] for i in order]  # noqa: E731
    objects = lambda values: np.array(pick(values), dtype=object)  # noqa: E731
    return FireLabels(
        query=objects(rows["query"]),
        video_id=objects(rows["video_id"]),
        label=np.array(pick(rows["label"]), dtype=np.int8),
        dataset=objects([DATASET] * len(order)),
        models=pick(rows["models"]),
        annotator_labels=pick(rows["annotator_labels"]),
        annotator_ids=pick(rows["annotator_ids"]),
        metadata={
            "source_ds": "tvrbench-sample-1",
            "source_data_md5": captions_md5,
            "source_annotator_map_md5": hashlib.md5(repr(ANNOTATORS).encode()).hexdigest(),
            "created_ds": "2026-01-01 00:00:00",
            "email": "",
            "creator": "tvrbench build_sample.py (simulated annotators)",
            "website": "",
            "license": "CC0-1.0",
            "datasets": [DATASET],
        },
        source="<build_sample>",
        response_ids=RaggedInts.from_rows(pick(rows["response_ids"])),
        queue_ids=RaggedInts.from_rows(pick(rows["queue_ids"])),
    )


def captions_csv() -> str:
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(["caption_id", "text", "video_id"])
    for index, (video_id, text, _) in enumerate(CAPTIONS):
        writer.writerow([f"cap{index:03d}", text, video_id])
    return buffer.getvalue()


def check_ground_truth(shown: dict[str, frozenset[str]]) -> None:
    """Guards against typos in the tables above: every caption fits its own video, texts are unique."""
    texts = [c[1] for c in CAPTIONS]
    assert len(set(texts)) == len(texts), "caption texts must be unique (FIRE keys pairs by text)"
    for video_id, text, facets in CAPTIONS:
        missing = set(facets.split()) - shown[video_id]
        assert not missing, f"{text!r} mentions {missing}, which {video_id} does not show"


def build(out: Path) -> None:
    shown = video_facets()
    check_ground_truth(shown)
    rng = np.random.default_rng(SEED)
    out.mkdir(parents=True, exist_ok=True)
    table = captions_csv()
    with atomic_write(out / "captions.csv") as handle:
        handle.write(table)
    with atomic_write(out / "videos.txt") as handle:
        handle.write("".join(f"{v[0]}\n" for v in VIDEOS))
    relevance = relevance_matrix(shown)
    write_npy(out / "relevance.npy", relevance)
    scores = model_scores(shown, rng)
    for name, matrix in scores.items():
        write_npy(out / f"scores_{name}.npy", matrix)
    write_fire(out / "fire.json", fire_labels(scores, relevance == 1.0, rng, hashlib.md5(table.encode()).hexdigest()))
    write_json(
        out / "facets.json",
        {
            "rule": "a caption is relevant to a video when every facet it mentions is among the video's facets",
            "implies": {facet: sorted(implied) for facet, implied in IMPLIES.items()},
            "videos": {v[0]: {"theme": v[1], "shows": v[2], "facets": sorted(shown[v[0]])} for v in VIDEOS},
            "captions": {f"cap{i:03d}": {"text": c[1], "video_id": c[0], "facets": sorted(c[2].split())} for i, c in enumerate(CAPTIONS)},
        },
    )


def main() -> None:
    parser = argparse.ArgumentParser(description="Rebuild tvrbench's embedded sample.")
    parser.add_argument("--out", type=Path, default=Path(__file__).parent, help="folder to write (default: this one)")
    build(parser.parse_args().out)


if __name__ == "__main__":
    main()
