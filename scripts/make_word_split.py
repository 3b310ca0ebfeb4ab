#!/usr/bin/python3
"""Writes the word data of the character-level language model (apps/charlm) into data/.

  /usr/bin/python3 scripts/make_word_split.py     # needs Debian's wamerican for --source

data/words.txt              the lines of --source that are lowercase a-z words (^[a-z]+$),
                            in the list's order (Debian's wamerican 2020.12.07: 63,875 words)
data/words_val_indices.txt  --val-size 0-based line numbers of words.txt, one a line, ascending
data/words_train_indices.txt  every other line number, ascending

The split is a seeded permutation: a Fisher-Yates shuffle of 0..n-1 driven by
random.Random(--seed).random(), the one part of Python's random module whose sequence is
guaranteed across versions; its first --val-size entries are the validation words. A rerun
on the same list writes the same bytes.
"""

import argparse
import os
import random
import re

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
WORD = re.compile(r"[a-z]+")


def read_words(path):
    """The lines of path that are lowercase a-z words, in order."""
    with open(path, encoding="utf-8") as f:
        return [line for line in f.read().split("\n") if WORD.fullmatch(line)]


def permutation(n, seed):
    """0..n-1 shuffled by Fisher-Yates, each swap drawn from random.Random(seed).random()."""
    rng = random.Random(seed)
    order = list(range(n))
    for i in range(n - 1, 0, -1):
        j = int(rng.random() * (i + 1))
        order[i], order[j] = order[j], order[i]
    return order


def write_lines(path, lines):
    with open(path, "w", encoding="utf-8", newline="\n") as f:
        f.write("".join(f"{line}\n" for line in lines))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--source", default="/usr/share/dict/american-english",
                        help="the word list, one word a line (Debian package wamerican)")
    parser.add_argument("--out", default=os.path.join(REPO, "data"))
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--val-size", type=int, default=1000)
    args = parser.parse_args()
    if not os.path.isfile(args.source):
        parser.error(f"cannot read {args.source}: install it with `sudo apt-get install wamerican` "
                     "or pass --source FILE")
    words = read_words(args.source)
    if not 0 < args.val_size < len(words):
        parser.error(f"--val-size must be in [1, {len(words) - 1}] for {len(words)} words, got {args.val_size}")
    order = permutation(len(words), args.seed)
    val = sorted(order[:args.val_size])
    train = sorted(order[args.val_size:])
    write_lines(os.path.join(args.out, "words.txt"), words)
    write_lines(os.path.join(args.out, "words_train_indices.txt"), train)
    write_lines(os.path.join(args.out, "words_val_indices.txt"), val)
    print(f"{len(words)} words: {len(train)} training, {len(val)} validation (seed {args.seed})")


if __name__ == "__main__":
    main()
