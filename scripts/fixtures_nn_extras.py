"""PyTorch fixtures for GELU, SiLU and the residual blocks (imported by make_fixtures.py).

Files in tests/fixtures/, in make_fixtures' layout (input, output, grad_output, input.grad,
parameters by their state_dict names and <name>.grad):
  gelu_none, gelu_tanh, gelu_none_3d   nn.GELU(approximate) on inputs spread over [-10, 10]
                                       with exact zeros and the far tails
  silu, silu_3d                        nn.SiLU
  prenorm_<norm>, postnorm_<norm>      PreNormBlock / PostNormBlock below (norm: layer, rms),
                                       width 6, expansion 2, GELU; every parameter randomized
  residual_linear                      Residual(nn.Linear(5, 5))

The block classes here are the PyTorch equivalents of minidl's nn::Residual, MLPBlock,
PreNormBlock and PostNormBlock: a minidl checkpoint of them loads with strict=True.
"""

import torch
import torch.nn as nn

from make_fixtures import Case, RMSNormRef, forward_backward


NORMS = {"layer": nn.LayerNorm, "rms": lambda width: RMSNormRef([width])}
ACTIVATIONS = {"gelu": nn.GELU, "tanh": nn.Tanh, "relu": nn.ReLU, "silu": nn.SiLU}


class Residual(nn.Module):
    """y = x + fn(x)."""

    def __init__(self, fn):
        super().__init__()
        self.fn = fn

    def forward(self, x):
        return x + self.fn(x)


def mlp(width, expansion=4, activation="gelu", dropout=0.0):
    """Linear(width, width * expansion) -> activation -> Linear(back to width) [-> Dropout]."""
    hidden = width * expansion
    layers = [nn.Linear(width, hidden), ACTIVATIONS[activation](), nn.Linear(hidden, width)]
    return nn.Sequential(*layers, *([nn.Dropout(dropout)] if dropout > 0 else []))


class PreNormBlock(nn.Module):
    """y = x + mlp(norm(x))."""

    def __init__(self, width, expansion=4, norm="layer", activation="gelu", dropout=0.0):
        super().__init__()
        self.norm = NORMS[norm](width)
        self.mlp = mlp(width, expansion, activation, dropout)

    def forward(self, x):
        return x + self.mlp(self.norm(x))


class PostNormBlock(nn.Module):
    """y = norm(x + mlp(x))."""

    def __init__(self, width, expansion=4, norm="layer", activation="gelu", dropout=0.0):
        super().__init__()
        self.norm = NORMS[norm](width)
        self.mlp = mlp(width, expansion, activation, dropout)

    def forward(self, x):
        return self.norm(x + self.mlp(x))


def randomize_all(m):
    with torch.no_grad():
        for name, p in m.named_parameters():
            p.copy_(0.5 * torch.randn(p.shape) + (1.0 if name == "norm.weight" else 0.0))


def elementwise_extra_cases(out):
    for approximate, shape, tag in [("none", (6, 7), "none"), ("tanh", (6, 7), "tanh"), ("none", (2, 3, 4), "none_3d")]:
        case = Case(out, f"gelu_{tag}", "GELU", {"approximate": approximate})
        x = torch.randn(shape) * 3.0
        x.view(-1)[:6] = torch.tensor([0.0, -10.0, 10.0, -5.5, 6.0, 1e-3])
        forward_backward(case, "", nn.GELU(approximate=approximate), x, {})
        case.write()
    for shape, tag in [((6, 7), ""), ((2, 3, 4), "_3d")]:
        case = Case(out, f"silu{tag}", "SiLU", {})
        x = torch.randn(shape) * 3.0
        x.view(-1)[:5] = torch.tensor([0.0, -20.0, 20.0, -8.0, 1e-3])
        forward_backward(case, "", nn.SiLU(), x, {})
        case.write()


def block_case(out, name, module_name, options, make, shape):
    case = Case(out, name, module_name, options)
    m = make()
    randomize_all(m)
    params = dict(m.named_parameters())
    for p_name, p in params.items():
        case.add(p_name, p)
    forward_backward(case, "", m, torch.randn(shape) * 1.5 + 0.5, params)
    case.write()


def block_cases(out):
    for norm in NORMS:
        for cls, tag in [(PreNormBlock, "prenorm"), (PostNormBlock, "postnorm")]:
            options = {"width": 6, "expansion": 2, "norm": norm, "activation": "gelu"}
            block_case(out, f"{tag}_{norm}", cls.__name__, options, lambda: cls(6, 2, norm), (5, 6))
    block_case(out, "residual_linear", "Residual", {"module": "Linear(5, 5)"}, lambda: Residual(nn.Linear(5, 5)), (4, 5))


def nn_extras_cases(out):
    elementwise_extra_cases(out)
    block_cases(out)


if __name__ == "__main__":  # only these cases: /usr/bin/python3 scripts/fixtures_nn_extras.py
    import os

    torch.set_num_threads(1)
    nn_extras_cases(os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "tests", "fixtures"))
