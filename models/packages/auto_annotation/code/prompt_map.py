"""Map a free-text prompt onto COCO classes, the only things the offline default can detect.

Lookup order for a prompt, first hit wins:
  1. a COCO class name ("dog", "traffic light");
  2. SYNONYMS below, written by hand for words WordNet gets wrong or lacks ("bike", "tv");
  3. coco_vocab.json, built from WordNet 3.0 by `make models`: synonyms, hyponyms
     (puppy -> dog, lorry -> truck) and not-too-general hypernyms (fruit -> banana, apple, orange).
Each step tries the phrase as written, then its singular, then shorter tails of it, so
"red sports cars" finds "sports car" and then "car". A prompt that maps to nothing is reported
as unsupported by the caller, never silently dropped.
"""
from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Dict, Iterator, List, Sequence

# Hand-written: common words whose WordNet answer is missing, too narrow or the wrong sense.
SYNONYMS: Dict[str, Sequence[str]] = {
    "people": ["person"], "human": ["person"], "pedestrian": ["person"], "man": ["person"],
    "men": ["person"], "soldier": ["person"], "face": ["person"], "crowd": ["person"],
    "bike": ["bicycle"], "cycle": ["bicycle"], "motorbike": ["motorcycle"], "scooter": ["motorcycle"],
    "moped": ["motorcycle"], "plane": ["airplane"], "aeroplane": ["airplane"], "aircraft": ["airplane"],
    "jet": ["airplane"], "coach": ["bus"], "minibus": ["bus"], "tram": ["train"], "streetcar": ["train"],
    "locomotive": ["train"], "lorry": ["truck"], "van": ["car", "truck"], "suv": ["car"],
    "ship": ["boat"], "vessel": ["boat"], "yacht": ["boat"], "traffic signal": ["traffic light"],
    "stoplight": ["traffic light"], "hydrant": ["fire hydrant"], "stop": ["stop sign"],
    "road sign": ["stop sign"], "meter": ["parking meter"], "kitten": ["cat"], "kitty": ["cat"],
    "puppy": ["dog"], "pup": ["dog"], "pony": ["horse"], "foal": ["horse"], "lamb": ["sheep"],
    "calf": ["cow"], "cattle": ["cow"], "bull": ["cow"], "ox": ["cow"], "cub": ["bear"],
    "rucksack": ["backpack"], "knapsack": ["backpack"], "purse": ["handbag"], "bag": ["handbag", "backpack", "suitcase"],
    "luggage": ["suitcase"], "necktie": ["tie"], "ski": ["skis"], "ball": ["sports ball"],
    "football": ["sports ball"], "soccer ball": ["sports ball"], "basketball": ["sports ball"],
    "tennis ball": ["sports ball"], "bat": ["baseball bat"], "glove": ["baseball glove"],
    "mitt": ["baseball glove"], "racket": ["tennis racket"], "racquet": ["tennis racket"],
    "glass": ["wine glass", "cup"], "mug": ["cup"], "doughnut": ["donut"], "hotdog": ["hot dog"],
    "sofa": ["couch"], "plant": ["potted plant"], "houseplant": ["potted plant"],
    "table": ["dining table"], "desk": ["dining table"], "television": ["tv"], "monitor": ["tv"],
    "screen": ["tv", "laptop"], "computer": ["laptop"], "notebook": ["laptop"],
    "remote control": ["remote"], "phone": ["cell phone"], "cellphone": ["cell phone"],
    "mobile phone": ["cell phone"], "smartphone": ["cell phone"], "fridge": ["refrigerator"],
    "microwave oven": ["microwave"], "teddy": ["teddy bear"], "hair dryer": ["hair drier"],
    "hairdryer": ["hair drier"], "blow dryer": ["hair drier"], "vehicle": [
        "bicycle", "car", "motorcycle", "airplane", "bus", "train", "truck", "boat"],
    "animal": ["bird", "cat", "dog", "horse", "sheep", "cow", "elephant", "bear", "zebra", "giraffe"],
    "pet": ["cat", "dog"], "livestock": ["horse", "sheep", "cow"],
    "food": ["banana", "apple", "sandwich", "orange", "broccoli", "carrot", "hot dog", "pizza",
             "donut", "cake"],
    "cutlery": ["fork", "knife", "spoon"], "utensil": ["fork", "knife", "spoon"],
    "furniture": ["bench", "chair", "couch", "bed", "dining table"],
}

_PLURAL_RULES = (("ies", "y"), ("ches", "ch"), ("shes", "sh"), ("xes", "x"), ("ses", "s"),
                 ("zes", "z"), ("men", "man"), ("s", ""))


class PromptMapper:
    def __init__(self, classes: List[str], vocab_path: Path):
        vocab = json.loads(Path(vocab_path).read_text())
        if vocab["classes"] != classes:
            raise ValueError("coco_vocab.json was built for another label list")
        self.classes = classes
        self.by_name = {c: i for i, c in enumerate(classes)}
        self.lemmas: Dict[str, List[int]] = vocab["lemmas"]
        self.exceptions: Dict[str, str] = vocab["exceptions"]
        self.synonyms = {k: [self.by_name[c] for c in v] for k, v in SYNONYMS.items()}

    def _singulars(self, word: str) -> Iterator[str]:
        yield word
        if word in self.exceptions:
            yield self.exceptions[word]
        for suffix, repl in _PLURAL_RULES:
            if word.endswith(suffix) and len(word) > len(suffix) + 1:
                yield word[: -len(suffix)] + repl

    def _lookup(self, phrase: str) -> List[int]:
        words = phrase.split(" ")
        # Pluralisation is on the last word: "sports cars" -> "sports car".
        for last in self._singulars(words[-1]):
            key = " ".join(words[:-1] + [last])
            if key in self.by_name:
                return [self.by_name[key]]
            if key in self.synonyms:
                return self.synonyms[key]
            if key.replace(" ", "_") in self.lemmas:
                return self.lemmas[key.replace(" ", "_")]
        return []

    def classes_for(self, prompt: str) -> List[int]:
        """COCO class indices a prompt denotes, [] when it names nothing COCO has."""
        words = re.sub(r"[^a-z0-9 ]+", " ", prompt.lower().replace("-", " ")).split()
        # English puts the head noun last: "small brown dog" is a dog. Try longest tails first.
        for start in range(len(words)):
            found = self._lookup(" ".join(words[start:]))
            if found:
                return sorted(set(found))
        return []
