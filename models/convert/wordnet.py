"""A small reader for the WordNet 3.0 noun database (Debian wordnet-base, /usr/share/wordnet).

Only what the prompt mapping needs: lemma -> synsets in sense order, a synset's lemmas, gloss and
hypernyms. Reading the files directly avoids nltk, whose reader also wants a `lexnames` file
that Debian's wordnet-base does not ship.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Dict, Iterator, List, Set

DEFAULT_DIR = Path("/usr/share/wordnet")


@dataclass
class Synset:
    offset: int
    lemmas: List[str]
    lexfile: int  # lexicographer file: 5 noun.animal, 6 noun.artifact, 13 noun.food, 18 noun.person...
    hypernyms: List[int] = field(default_factory=list)  # '@' and instance '@i'
    gloss: str = ""


class WordNet:
    def __init__(self, root: Path = DEFAULT_DIR):
        self.root = Path(root)
        self.synsets: Dict[int, Synset] = {}
        self.index: Dict[str, List[int]] = {}
        self.exceptions: Dict[str, str] = {}
        self._read_data(self.root / "data.noun")
        self._read_index(self.root / "index.noun")
        self._read_exceptions(self.root / "noun.exc")

    def _read_data(self, path: Path) -> None:
        with open(path, encoding="utf-8", errors="replace") as f:
            for line in f:
                if line.startswith("  "):  # licence header
                    continue
                head, _, gloss = line.partition(" | ")
                parts = head.split()
                offset, count = int(parts[0]), int(parts[3], 16)
                lemmas = [parts[4 + 2 * i].lower() for i in range(count)]
                # Adjective markers such as "(p)" never occur in nouns, but strip them to be safe.
                lemmas = [l.split("(")[0] for l in lemmas]
                pos = 4 + 2 * count
                pointers = int(parts[pos])
                hyper = [int(parts[pos + 1 + 4 * k + 1]) for k in range(pointers)
                         if parts[pos + 1 + 4 * k] in ("@", "@i")]
                self.synsets[offset] = Synset(offset, lemmas, int(parts[1]), hyper, gloss.strip())

    def _read_index(self, path: Path) -> None:
        with open(path, encoding="utf-8", errors="replace") as f:
            for line in f:
                if line.startswith("  "):
                    continue
                parts = line.split()
                synset_count, pointer_count = int(parts[2]), int(parts[3])
                offsets = parts[4 + pointer_count + 2:]
                self.index[parts[0]] = [int(o) for o in offsets[:synset_count]]

    def _read_exceptions(self, path: Path) -> None:
        with open(path, encoding="utf-8", errors="replace") as f:
            for line in f:
                parts = line.split()
                if len(parts) >= 2:
                    self.exceptions[parts[0]] = parts[1]

    def synset(self, key: str) -> Synset:
        """'dog.n.01' style key -> synset (sense numbers follow index.noun's order)."""
        lemma, _, sense = key.split(".")
        return self.synsets[self.index[lemma][int(sense) - 1]]

    def ancestors(self, offset: int) -> Set[int]:
        seen: Set[int] = set()
        stack = [offset]
        while stack:
            for h in self.synsets[stack.pop()].hypernyms:
                if h not in seen:
                    seen.add(h)
                    stack.append(h)
        return seen

    def lemmas(self) -> Iterator[str]:
        return iter(self.index)
