"""How many steps of a training run a float32 implementation can be held to, step by step.

A float32 run differs from the exact computation by rounding, and how the rounding falls
depends on the summation order: another sgemm kernel, another blocking, another thread count.
In a chaotic run (deep tanh with LayerNorm, instance norm) those differences grow from step to
step, so no fixed tolerance holds past some step whatever the implementation. The rule
(docs/numerics-and-pytorch.md, "How close is the same"):

  reference  PyTorch float64 from the same initial weights in the same batch order;
  ensemble   PyTorch float32 runs that differ from one another only by rounding: the
             plain run, the examples permuted within each batch (gradient and batch
             statistic sums change order; the loss is the same mean), the hidden units and
             channels permuted consistently between adjacent layers (the same function, other
             dot-product and norm-reduction orders), both at once, and runs whose initial
             weights are nudged by about one ulp (relative noise 1e-7): where a value sits
             on a knife-edge (a ReLU input or a norm's centred value near zero) the sign of
             its rounding picks the branch, and these runs take the other branches;
  horizon    the steps before the first one where any ensemble member is more than
             TOLERANCE / 4 from float64;
  check      over the horizon, the implementation's float32 loss within TOLERANCE of float64.

Imported by fixtures/lesson.py (the lesson's fixtures) and check_checkpoints_torch.py.
"""

import torch
import torch.nn as nn
import torch.nn.functional as F

from fixtures.norms import RMSNormRef

TOLERANCE = 1e-4  # a compared step loss against float64, absolute
ENSEMBLE_LIMIT = TOLERANCE / 4  # the horizon ends where an ensemble member leaves this
ENSEMBLE_SEEDS = (1, 2)
# About one float32 ulp (2^-24 = 6e-8 relative): a run whose first results rounded otherwise.
WEIGHT_NUDGE, NUDGE_SEEDS = 1e-7, (1, 2, 3, 4)

WEIGHTED = (nn.Linear, nn.Conv2d)  # layers whose input and output units can be permuted
# Layers between two weighted ones that keep a unit where it is (per-unit or permutation
# invariant); norms among them carry per-unit parameters and buffers that move with the unit.
UNIT_WISE = (nn.Tanh, nn.ReLU, nn.GELU, nn.SiLU, nn.Dropout, nn.BatchNorm1d, nn.BatchNorm2d, nn.LayerNorm,
             nn.GroupNorm, RMSNormRef, nn.AdaptiveAvgPool2d, nn.Flatten)


def unit_permutation(units, between, generator):
    """A random order of `units` that keeps each GroupNorm group together (its statistics are
    over the group's channels): the groups shuffled, and the channels within each."""
    groups = next((m.num_groups for m in between if isinstance(m, nn.GroupNorm)), 1)
    size = units // groups
    return torch.cat([g * size + torch.randperm(size, generator=generator)
                      for g in torch.randperm(groups, generator=generator).tolist()])


def permute_units(model, generator):
    """Reorders the hidden units of every pair of weighted layers in an nn.Sequential (and in
    the Sequentials the model holds) that only unit-wise layers separate: the output units of
    the first, the per-unit entries of the norms between, the input units of the second. The
    model computes the same function with other summation orders. Units feeding anything else
    (a residual sum, the logits) stay where they are."""
    if isinstance(model, nn.Sequential):
        permute_pairs(list(model.children()), generator)
    for child in model.children():
        if not isinstance(child, WEIGHTED + UNIT_WISE):
            permute_units(child, generator)


def permute_pairs(modules, generator):
    for i, first in enumerate(modules):
        if not isinstance(first, WEIGHTED):
            continue
        j = i + 1
        while j < len(modules) and isinstance(modules[j], UNIT_WISE):
            j += 1
        if j == len(modules) or not isinstance(modules[j], WEIGHTED):
            continue
        between = modules[i + 1:j]
        order = unit_permutation(first.weight.shape[0], between, generator)
        with torch.no_grad():
            for tensor in [first.weight, first.bias] + [t for m in between for t in per_unit_tensors(m)]:
                if tensor is not None:
                    tensor.copy_(tensor[order])
            modules[j].weight.copy_(modules[j].weight[:, order])


def per_unit_tensors(module):
    if isinstance(module, nn.LayerNorm) and len(module.normalized_shape) != 1:
        raise ValueError("permute_units: a LayerNorm over more than the unit dimension")
    names = ("weight", "bias", "running_mean", "running_var")
    return [getattr(module, name) for name in names if getattr(module, name, None) is not None]


def replay(build, state, batches, X, y, dtype=torch.float32, units_seed=None, lr=0.05):
    """The step losses of plain SGD (CrossEntropyLoss, mean) from `state` over `batches` (index
    tensors into X, y), in training mode; the units permuted first when units_seed is given."""
    model = build().to(dtype)
    model.load_state_dict(state)  # copies, converting to the model's dtype
    if units_seed is not None:
        permute_units(model, torch.Generator().manual_seed(units_seed))
    model.train()
    X = X.to(dtype)
    opt, losses = torch.optim.SGD(model.parameters(), lr=lr), []
    for batch in batches:
        opt.zero_grad()
        loss = F.cross_entropy(model(X[batch]), y[batch])
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return losses


def shuffled_within(batches, seed):
    generator = torch.Generator().manual_seed(seed)
    return [batch[torch.randperm(len(batch), generator=generator)] for batch in batches]


def nudged(state, seed, relative=WEIGHT_NUDGE):
    """The state with every floating-point entry multiplied by (1 + relative * N(0, 1))."""
    generator = torch.Generator().manual_seed(seed)
    return {name: value * (1 + relative * torch.randn(value.shape, generator=generator, dtype=torch.float64))
            .to(value.dtype) if value.is_floating_point() else value for name, value in state.items()}


def float32_ensemble(build, state, batches, X, y, seeds=ENSEMBLE_SEEDS):
    """The step losses of the ensemble's float32 runs (module doc), the plain run first."""
    runs = [replay(build, state, batches, X, y)]
    for seed in seeds:
        runs.append(replay(build, state, shuffled_within(batches, seed), X, y))
        runs.append(replay(build, state, batches, X, y, units_seed=seed))
        runs.append(replay(build, state, shuffled_within(batches, seed + 100), X, y, units_seed=seed + 100))
    for seed in NUDGE_SEEDS:
        runs.append(replay(build, nudged(state, seed), batches, X, y))
    return runs


def horizon(reference64, ensemble, limit=ENSEMBLE_LIMIT):
    """The number of leading steps over which every ensemble run stays within limit of float64."""
    for step, exact in enumerate(reference64):
        if any(abs(run[step] - exact) > limit for run in ensemble):
            return step
    return len(reference64)


def spread(reference64, ensemble, steps):
    """The largest distance of an ensemble run from float64 over the first `steps` steps."""
    return max((abs(run[s] - reference64[s]) for run in ensemble for s in range(steps)), default=0.0)
