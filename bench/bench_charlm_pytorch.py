#!/usr/bin/python3
"""charlm's training step and its sampling in PyTorch eager: the references of charlm's rows
in bench/bench_all.py. The model, batches and optimizer are scripts/charlm_model.py's (charlm's
defaults: pre-norm LayerNorm, 4 layers, 4 heads, 64 channels, AdamW lr 5e-4).

    bench_charlm_pytorch.py step [--steps 200] [--repeats 3] [--width 64] [--threads 1]
        a fresh model per repeat, its steps timed with the batches made (as charlm's are);
        prints the best repeat's wall and CPU ms per step
    bench_charlm_pytorch.py sample --checkpoint FILE [--words 50] [--threads 1]
        the model loaded from charlm's checkpoint, eval mode, no_grad: nanoGPT's generate
        loop at batch size 1, the whole growing prefix fed every token, stopping at token 0
        or a full block; prints ms per word and tokens per word
"""

import argparse
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "scripts"))
import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402

import charlm_model as cm  # noqa: E402
from fixtures.common import load_safetensors  # noqa: E402


def time_steps(config, words, steps, batch_size=32):
    """Wall and CPU seconds per step of a fresh model over `steps` steps."""
    torch.manual_seed(0)
    model = cm.CharLM(config)
    opt = cm.adamw(model)
    order, start, cpu_start = [], time.perf_counter(), time.process_time()
    for _ in range(steps):
        if len(order) < batch_size:
            order = torch.randperm(len(words)).tolist()
        picks, order = order[:batch_size], order[batch_size:]
        x, y = cm.make_batch([words[i] for i in picks])
        opt.zero_grad()
        cm.loss_of(model, x, y).backward()
        opt.step()
    return (time.perf_counter() - start) / steps, (time.process_time() - cpu_start) / steps


@torch.no_grad()
def generate_word(model, block_size):
    """One word, a token at a time from token 0, the whole prefix fed every time."""
    idx = torch.zeros(1, 1, dtype=torch.long)
    while idx.size(1) < block_size:
        logits = model(idx)[:, -1, :]
        token = torch.multinomial(F.softmax(logits, dim=-1), num_samples=1)
        if token.item() == 0:
            break
        idx = torch.cat((idx, token), dim=1)
    return idx.size(1) - 1


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("what", choices=("step", "sample"))
    parser.add_argument("--steps", type=int, default=200)
    parser.add_argument("--repeats", type=int, default=1)
    parser.add_argument("--width", type=int, default=64)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--checkpoint")
    parser.add_argument("--words", type=int, default=50)
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    config = cm.Config(width=args.width)
    if args.what == "step":
        train, _ = cm.load_words()
        best = min(time_steps(config, train, args.steps) for _ in range(args.repeats))
        print(f"pytorch charlm step {best[0] * 1e3:.3f} ms (cpu {best[1] * 1e3:.3f} ms), {args.steps} steps")
        return
    if not args.checkpoint:
        sys.exit("bench_charlm_pytorch.py: sample needs --checkpoint FILE (charlm --save)")
    model = cm.CharLM(config)
    model.load_state_dict(load_safetensors(args.checkpoint), strict=True)
    model.eval()
    torch.manual_seed(0)
    start, cpu_start = time.perf_counter(), time.process_time()
    letters = sum(generate_word(model, config.block_size) for _ in range(args.words))
    wall, cpu = time.perf_counter() - start, time.process_time() - cpu_start
    print(f"pytorch charlm sample {wall / args.words * 1e3:.3f} ms/word (cpu {cpu / args.words * 1e3:.3f} ms), "
          f"{letters / args.words:.2f} letters/word, {args.words} words")


if __name__ == "__main__":
    main()
