"""The model of minidl's `charlm` program written in PyTorch, with its data and batches.

makemore's Transformer (its state_dict names), with the norm and its position chosen as
`charlm --norm --norm-position` choose them (docs/charlm.md):
  tokens     '.' is 0 (start and end), 'a'..'z' are 1..26; a word of n letters is the input
             [0, w1..wn] and the target [w1..wn, 0]; a batch is padded to its longest word + 1,
             inputs with 0 and targets with -1 (ignore_index).
  model      wte(idx) + wpe(0..T-1), blocks, ln_f (pre-norm with a norm only), lm_head (no bias).
  block      pre:  x = x + attn(ln_1(x)); x = x + mlp(ln_2(x))
             post: x = ln_1(x + attn(x)); x = ln_2(x + mlp(x))
  norms      layer: LayerNorm(C); rms: RMSNorm(C) (PyTorch 2.x's, eps None); batch:
             BatchNorm1d(C) over (B, C, T), padding included; batch-masked: BatchNorm1d(C) over
             the real positions' rows only, the padding rows zero; none: no layer; dyt:
             DyT(C) (weight * tanh(alpha * x) + bias, alpha 0.5 at init).
Imported by check_charlm_against_pytorch.py and charlm_torch.py.
"""

import math
import os

import torch
import torch.nn as nn
import torch.nn.functional as F

from fixtures.common import REPO
from fixtures.norms import DyTRef, RMSNormRef

VOCAB = 27
IGNORE = -1
NORMS = ("layer", "rms", "batch", "batch-masked", "none", "dyt")


class Config:
    def __init__(self, norm="layer", position="pre", layers=4, heads=4, width=64, block_size=32):
        self.norm, self.position = norm, position
        self.layers, self.heads, self.width, self.block_size = layers, heads, width, block_size


class BatchNormOverTime(nn.BatchNorm1d):
    """BatchNorm1d on (B, T, C) activations: statistics over every position, padding included."""

    def forward(self, x, real=None):
        return super().forward(x.transpose(1, 2)).transpose(1, 2)


class MaskedBatchNorm(nn.BatchNorm1d):
    """BatchNorm1d over the rows of real positions only; the padding rows of the output are zero."""

    def forward(self, x, real=None):
        if real is None:
            real = torch.ones(x.shape[:2], dtype=torch.bool)
        out = torch.zeros_like(x)
        out[real] = super().forward(x[real])
        return out


class Plain(nn.Module):
    def __init__(self, norm):
        super().__init__()
        self.norm = norm

    def forward(self, x, real=None):
        return self.norm(x)


def make_norm(kind, width):
    if kind == "none":
        return None
    if kind == "batch":
        return BatchNormOverTime(width)
    if kind == "batch-masked":
        return MaskedBatchNorm(width)
    if kind == "dyt":
        return DyTRef(width)
    return nn.LayerNorm(width) if kind == "layer" else RMSNormRef([width])


def apply_norm(norm, x, real):
    if norm is None:
        return x
    if isinstance(norm, (BatchNormOverTime, MaskedBatchNorm)):
        return norm(x, real)
    return norm(x)


class CausalSelfAttention(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.heads = config.heads
        self.c_attn = nn.Linear(config.width, 3 * config.width)
        self.c_proj = nn.Linear(config.width, config.width)

    def forward(self, x):
        B, T, C = x.shape
        q, k, v = self.c_attn(x).split(C, dim=2)
        q, k, v = (t.view(B, T, self.heads, C // self.heads).transpose(1, 2) for t in (q, k, v))
        att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(k.size(-1)))
        causal = torch.ones(T, T, dtype=torch.bool).tril()
        att = F.softmax(att.masked_fill(~causal, float("-inf")), dim=-1)
        return self.c_proj((att @ v).transpose(1, 2).contiguous().view(B, T, C))


class Block(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.pre = config.position == "pre"
        self.ln_1 = make_norm(config.norm, config.width)
        self.attn = CausalSelfAttention(config)
        self.ln_2 = make_norm(config.norm, config.width)
        self.mlp = nn.ModuleDict(dict(c_fc=nn.Linear(config.width, 4 * config.width),
                                      c_proj=nn.Linear(4 * config.width, config.width)))

    def mlp_forward(self, x):
        return self.mlp.c_proj(F.gelu(self.mlp.c_fc(x), approximate="tanh"))

    def forward(self, x, real):
        if self.pre:
            x = x + self.attn(apply_norm(self.ln_1, x, real))
            return x + self.mlp_forward(apply_norm(self.ln_2, x, real))
        x = apply_norm(self.ln_1, x + self.attn(x), real)
        return apply_norm(self.ln_2, x + self.mlp_forward(x), real)


class CharLM(nn.Module):
    def __init__(self, config):
        super().__init__()
        layers = dict(wte=nn.Embedding(VOCAB, config.width), wpe=nn.Embedding(config.block_size, config.width),
                      h=nn.ModuleList([Block(config) for _ in range(config.layers)]))
        if config.position == "pre" and config.norm != "none":
            layers["ln_f"] = make_norm(config.norm, config.width)
        self.transformer = nn.ModuleDict(layers)
        self.lm_head = nn.Linear(config.width, VOCAB, bias=False)

    def forward(self, idx, real=None):
        T = idx.shape[1]
        x = self.transformer.wte(idx) + self.transformer.wpe(torch.arange(T))
        for block in self.transformer.h:
            x = block(x, real)
        if "ln_f" in self.transformer:
            x = apply_norm(self.transformer.ln_f, x, real)
        return self.lm_head(x)


def loss_of(model, x, y):
    logits = model(x, real=y != IGNORE)
    return F.cross_entropy(logits.reshape(-1, VOCAB), y.reshape(-1), ignore_index=IGNORE)


def encode(word):
    return [ord(c) - ord("a") + 1 for c in word]


def make_batch(words):
    """Inputs and targets (B, T), T the longest word + 1."""
    T = max(len(w) for w in words) + 1
    x = torch.zeros(len(words), T, dtype=torch.long)
    y = torch.full((len(words), T), IGNORE, dtype=torch.long)
    for i, word in enumerate(words):
        tokens = encode(word)
        x[i, 1:len(tokens) + 1] = torch.tensor(tokens, dtype=torch.long)
        y[i, :len(tokens) + 1] = torch.tensor(tokens + [0], dtype=torch.long)
    return x, y


def read_lines(path):
    with open(path) as f:
        return [line.strip() for line in f if line.strip()]


def load_words(data_dir=os.path.join(REPO, "data")):
    """The training and validation words of the shipped split."""
    words = read_lines(os.path.join(data_dir, "words.txt"))
    train = [words[int(i)] for i in read_lines(os.path.join(data_dir, "words_train_indices.txt"))]
    val = [words[int(i)] for i in read_lines(os.path.join(data_dir, "words_val_indices.txt"))]
    return train, val


def batches_of(order, batch_size):
    """Consecutive batches of a permutation of the training split, the short last one dropped."""
    return [order[start:start + batch_size] for start in range(0, len(order) - batch_size + 1, batch_size)]


def val_loss(model, words, batch_size=32):
    """The mean loss over every real position of `words`, in eval mode."""
    model.eval()
    total, count = 0.0, 0
    with torch.no_grad():
        for start in range(0, len(words), batch_size):
            x, y = make_batch(words[start:start + batch_size])
            logits = model(x, real=y != IGNORE)
            total += F.cross_entropy(logits.reshape(-1, VOCAB), y.reshape(-1), ignore_index=IGNORE,
                                     reduction="sum").item()
            count += int((y != IGNORE).sum())
    model.train()
    return total / count


def adamw(model, lr=5e-4):
    """makemore's optimizer: AdamW, betas (0.9, 0.99), eps 1e-8, weight decay 0.01."""
    return torch.optim.AdamW(model.parameters(), lr=lr, betas=(0.9, 0.99), eps=1e-8, weight_decay=0.01)
