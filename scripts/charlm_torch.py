#!/usr/bin/python3
"""Trains the model of minidl's `charlm` in PyTorch over several seeds: the range its
validation loss should fall in.

    /usr/bin/python3 scripts/charlm_torch.py [--norm layer] [--position pre] [--seeds 0-4]
        [--steps 2000] [--threads 1]

The model, data and optimizer are charlm's defaults (scripts/charlm_model.py): each epoch a
permutation of the training words (torch's generator, seeded by the seed, so the batches are
not charlm's), batches of 32, the short last one dropped. Prints one line per seed (final
validation loss over every real position of the validation words, in eval mode, and the
time per step) and the mean and range; docs/charlm.md compares them with charlm's.
"""

import argparse
import os
import statistics
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import torch  # noqa: E402

import charlm_model as cm  # noqa: E402


def seed_list(text):
    if "-" in text:
        first, last = text.split("-")
        return list(range(int(first), int(last) + 1))
    return [int(s) for s in text.split(",")]


def train(config, words, seed, steps, batch_size=32):
    train_words, val_words = words
    torch.manual_seed(seed)
    model = cm.CharLM(config)
    opt = cm.adamw(model)
    generator = torch.Generator().manual_seed(seed)
    batches, start, step = [], time.perf_counter(), 0
    while step < steps:
        if not batches:
            batches = cm.batches_of(torch.randperm(len(train_words), generator=generator).tolist(), batch_size)
        x, y = cm.make_batch([train_words[i] for i in batches.pop(0)])
        opt.zero_grad()
        cm.loss_of(model, x, y).backward()
        opt.step()
        step += 1
    seconds = time.perf_counter() - start
    return cm.val_loss(model, val_words), seconds / max(steps, 1)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--norm", default="layer", choices=cm.NORMS)
    parser.add_argument("--position", default="pre", choices=("pre", "post"))
    parser.add_argument("--seeds", default="0-4")
    parser.add_argument("--steps", type=int, default=2000)
    parser.add_argument("--threads", type=int, default=1)
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    words = cm.load_words()
    config = cm.Config(norm=args.norm, position=args.position)
    losses = []
    for seed in seed_list(args.seeds):
        loss, per_step = train(config, words, seed, args.steps)
        losses.append(loss)
        print(f"seed {seed}: val loss {loss:.4f}, {per_step * 1e3:.1f} ms a step", flush=True)
    print(f"{args.norm}-{args.position}, {args.steps} steps: val loss mean {statistics.mean(losses):.4f}, "
          f"range {min(losses):.4f} - {max(losses):.4f} over {len(losses)} seeds")


if __name__ == "__main__":
    main()
