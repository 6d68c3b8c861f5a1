"""Build the WordNet vocabulary the default auto-annotation package maps prompts with.

For every WordNet noun, the COCO classes it denotes, found at build time so the package needs no
WordNet at run time:
  - a word whose sense is a COCO class's synset or lies below one maps to that class
    (puppy -> dog, lorry -> truck, sedan -> car);
  - a word whose sense lies above a few COCO classes maps to all of them
    (vehicle -> bicycle, car, ..., fruit -> banana, apple, orange), unless it covers so many
    classes that it names nothing in particular (object, artifact, entity).
Senses are tried in WordNet's order (most frequent first) and the first that maps wins, so
"cat" is the animal, not the slang for a man. A later sense counts only in the first sense's
lexicographer file (animal, artifact, food...): "lorry" the wagon falls through to "lorry" the
truck, but "tiger" the animal never falls through to "tiger" the fierce person.

    python3 coco_vocab.py LABEL_LIST.yaml OUT.json [WORDNET_DIR]
"""
from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Dict, List, Set

from wordnet import DEFAULT_DIR, WordNet

# COCO class -> the WordNet 3.0 synsets it covers (sense numbers checked against the glosses).
COCO_SYNSETS: Dict[str, List[str]] = {
    "person": ["person.n.01"], "bicycle": ["bicycle.n.01"], "car": ["car.n.01"],
    "motorcycle": ["motorcycle.n.01"], "airplane": ["airplane.n.01"], "bus": ["bus.n.01"],
    "train": ["train.n.01", "locomotive.n.01", "car.n.02"], "truck": ["truck.n.01"],
    "boat": ["boat.n.01", "ship.n.01"], "traffic light": ["traffic_light.n.01"],
    "fire hydrant": ["fireplug.n.01"], "stop sign": [], "parking meter": ["parking_meter.n.01"],
    "bench": ["bench.n.01"], "bird": ["bird.n.01"], "cat": ["cat.n.01"], "dog": ["dog.n.01"],
    "horse": ["horse.n.01"], "sheep": ["sheep.n.01"], "cow": ["cattle.n.01"],
    "elephant": ["elephant.n.01"], "bear": ["bear.n.01"], "zebra": ["zebra.n.01"],
    "giraffe": ["giraffe.n.01"], "backpack": ["backpack.n.01"], "umbrella": ["umbrella.n.01"],
    "handbag": ["handbag.n.01"], "tie": ["necktie.n.01"], "suitcase": ["suitcase.n.01"],
    "frisbee": ["frisbee.n.01"], "skis": ["ski.n.01"], "snowboard": ["snowboard.n.01"],
    "sports ball": ["ball.n.01"], "kite": ["kite.n.03"], "baseball bat": ["baseball_bat.n.01"],
    "baseball glove": ["baseball_glove.n.01"], "skateboard": ["skateboard.n.01"],
    "surfboard": ["surfboard.n.01"], "tennis racket": ["racket.n.04"], "bottle": ["bottle.n.01"],
    "wine glass": ["wineglass.n.01"], "cup": ["cup.n.01"], "fork": ["fork.n.01"],
    "knife": ["knife.n.01"], "spoon": ["spoon.n.01"], "bowl": ["bowl.n.01", "bowl.n.03"],
    "banana": ["banana.n.02"], "apple": ["apple.n.01"], "sandwich": ["sandwich.n.01"],
    "orange": ["orange.n.01"], "broccoli": ["broccoli.n.02"], "carrot": ["carrot.n.01", "carrot.n.03"],
    "hot dog": ["hotdog.n.02"], "pizza": ["pizza.n.01"], "donut": ["donut.n.01"],
    "cake": ["cake.n.03"], "chair": ["chair.n.01"], "couch": ["sofa.n.01"],
    "potted plant": ["pot_plant.n.01", "houseplant.n.01"], "bed": ["bed.n.01"],
    "dining table": ["table.n.02", "dining_table.n.01"], "toilet": ["toilet.n.02"],
    "tv": ["television_receiver.n.01"], "laptop": ["laptop.n.01"], "mouse": ["mouse.n.04"],
    "remote": ["remote_control.n.01"], "keyboard": ["keyboard.n.01"],
    "cell phone": ["cellular_telephone.n.01"], "microwave": ["microwave.n.02"],
    "oven": ["oven.n.01"], "toaster": ["toaster.n.02"], "sink": ["sink.n.01"],
    "refrigerator": ["refrigerator.n.01"], "book": ["book.n.02", "book.n.01"],
    "clock": ["clock.n.01"], "vase": ["vase.n.01"], "scissors": ["scissors.n.01"],
    "teddy bear": ["teddy.n.01"], "hair drier": ["hand_blower.n.01"],
    "toothbrush": ["toothbrush.n.01"],
}

MAX_CLASSES = 12   # a hypernym above more classes than this is too general to mean anything
MAX_SENSES = 4     # rarer senses of a word are more often noise than meaning
PERSON = "person"
# Lexicographer files of things a photo shows: animal, artifact, food, plant.
CONCRETE = {5, 6, 13, 20}


def read_labels(path: Path) -> List[str]:
    """label_list.yaml as written in this repository: one `- name` per line."""
    labels = [l.strip()[2:].strip().strip("'\"") for l in path.read_text().splitlines()
              if l.strip().startswith("- ")]
    if len(labels) != 80:
        raise ValueError(f"{path}: {len(labels)} labels, want COCO's 80")
    return labels


def build(wn: WordNet, labels: List[str]) -> Dict[str, object]:
    if set(COCO_SYNSETS) != set(labels):
        raise ValueError(f"COCO_SYNSETS and labels differ: {set(COCO_SYNSETS) ^ set(labels)}")
    owner: Dict[int, Set[int]] = {}    # synset -> classes it is (or lies below)
    covers: Dict[int, Set[int]] = {}   # ancestor synset -> classes below it
    for idx, name in enumerate(labels):
        for key in COCO_SYNSETS[name]:
            offset = wn.synset(key).offset
            owner.setdefault(offset, set()).add(idx)
            for a in wn.ancestors(offset):
                covers.setdefault(a, set()).add(idx)

    def classes_of(offset: int) -> Set[int]:
        found = set(owner.get(offset, ()))
        for a in wn.ancestors(offset):
            found |= owner.get(a, set())
        if found:
            return found
        below = covers.get(offset, set())
        return below if len(below) <= MAX_CLASSES else set()

    person = labels.index(PERSON)
    lemmas: Dict[str, List[int]] = {}
    for lemma in wn.lemmas():
        senses = wn.index[lemma][:MAX_SENSES]
        domain = wn.synsets[senses[0]].lexfile
        for offset in senses:
            if wn.synsets[offset].lexfile != domain:
                continue
            found = classes_of(offset)
            if found:
                if found == {person} and any(wn.synsets[o].lexfile in CONCRETE for o in senses[:2]):
                    # "tiger": WordNet's first sense is a fierce person, but a prompt means the
                    # animal, which COCO lacks; unsupported is better than boxing people.
                    break
                lemmas[lemma] = sorted(found)
                break
    exceptions = {k: v for k, v in wn.exceptions.items() if v in lemmas}
    return {"source": "WordNet 3.0 (Princeton University), Debian wordnet-base",
            "classes": labels, "lemmas": lemmas, "exceptions": exceptions}


def main(argv: List[str]) -> int:
    if len(argv) not in (2, 3):
        print(__doc__, file=sys.stderr)
        return 2
    wn = WordNet(Path(argv[2]) if len(argv) == 3 else DEFAULT_DIR)
    vocab = build(wn, read_labels(Path(argv[0])))
    Path(argv[1]).write_text(json.dumps(vocab, sort_keys=True, separators=(",", ":")))
    print(f"coco_vocab: {len(vocab['lemmas'])} words map to COCO classes")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
