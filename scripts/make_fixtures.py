#!/usr/bin/python3
"""Writes PyTorch reference fixtures for minidl's tests into tests/fixtures/.

Run with Debian's python3-torch (PyTorch 1.13):   /usr/bin/python3 scripts/make_fixtures.py
Options: --only layers | lesson   (default: both), --out DIR (default: tests/fixtures),
--sensitivity (writes nothing: prints how far runs of the lesson that differ only by rounding
drift apart: float32 against float64, and against itself with some initial weights' last bit
flipped).

The generator is deterministic: every case seeds torch from a CRC32 of its own name, PyTorch
runs on one thread, and the files are written by hand in a fixed order, so running it twice
gives byte-identical files (compare with `sha256sum tests/fixtures/*.safetensors`).

Layer fixtures: tests/fixtures/<layer>_<variant>.safetensors
----------------------------------------------------------------
One safetensors file per case (F32 tensors; I64 for class targets and num_batches_tracked).
The options of a case are in the header's "__metadata__" ("module", "options" as JSON,
"case"); the C++ tests state the same options in their case tables. Tensor names:

  input                  the input x (float, or the logits for cross_entropy)
  target                 cross_entropy: class indices (I64), shape (N,)
  weight, bias, ...      parameters (and buffers) before the call, state_dict names;
                         cross_entropy: `weight` is the class-weight option
  output                 the forward result
  grad_output            a fixed random w; gradients are those of sum(output * w)
  input.grad             d sum(output * w) / d input
  weight.grad, ...       d sum(output * w) / d parameter

Layers that keep state across calls (BatchNorm) run a sequence of calls; the names above then
carry a prefix `step<k>.` (k = 0, 1, ...), a tensor `training` of shape (K,) says which calls
ran in training mode (1) and which in eval mode (0), and `step<k>.running_mean`,
`step<k>.running_var`, `step<k>.num_batches_tracked` hold the buffers after call k.
Parameter gradients are zeroed before every call.

SGD fixtures (sgd_<variant>.safetensors): parameters p0 (3, 4) and p1 (5,) are trained on
loss = sum(a * p * p) + sum(b * p) over both parameters; `a.p0`, `b.p0`, ... hold the
coefficients, `p0`, `p1` the initial values, `step<k>.p0.grad` the gradient computed before
step k and `step<k>.p0` the value after step k.

The lesson: tests/fixtures/lesson/
------------------------------------
For each run of the lesson (none, batch, layer = no normalization, BatchNorm1d, LayerNorm), the
lesson's own code (torch.manual_seed(0); deep_net(norm); SGD lr 0.05; DataLoader batch 64,
shuffle) with the data from data/digits.csv and the split files. The layout is the one the
digits CLI reads (--init-from DIR takes DIR/<run>.safetensors):
  init/<run>.safetensors   the state_dict before training (num_batches_tracked I64)
  batch_order.txt          one line per epoch: the permutation of 0..1436 (indices into the
                           training split in file order) the DataLoader drew; batches are
                           consecutive chunks of 64 of it, the last one short. The three runs
                           draw the same order (building each model consumes the same random
                           numbers: the norm layers' init draws none); the generator checks it.
  <run>_losses.txt         the loss of every optimizer step (115 lines, Python repr)
  <run>_losses_float64.txt the same run in float64 from the same weights in the same order:
                           the reference minidl's float32 step losses are compared with
  pytorch_results.json     per run: training loss and val loss (eval mode, whole split) and
                           val accuracy, as the lesson prints them, and `compared_steps`: how
                           many leading step losses a float32 implementation can be held to

How far a step-by-step comparison can hold (scripts/float32_horizon.py): `compared_steps` is
the number of leading steps over which every float32 run of an ensemble that differs from
PyTorch's only in summation order (examples permuted within each batch, hidden units
permuted between layers, both) stays within 2.5e-5 of float64; over them minidl's tests hold
minidl's float32 within 1e-4 of float64. `ensemble_runs` counts the ensemble,
`ensemble_spread` is its farthest distance from float64 over the compared steps and
`ensemble_spread_all_steps` over all.
"""

import argparse
import json
import os
import struct
import zlib

import torch
import torch.nn as nn
import torch.nn.functional as F

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# ----------------------------------------------------------------------------- safetensors


def save_safetensors(path, tensors, metadata=None):
    """tensors: list of (name, tensor) in file order. F32 for floating tensors, I64 for int."""
    header, blobs, offset = {}, [], 0
    if metadata:
        header["__metadata__"] = {k: str(v) for k, v in metadata.items()}
    for name, t in tensors:
        t = t.detach().contiguous()
        if t.dtype in (torch.int64, torch.int32):
            dtype, data = "I64", t.to(torch.int64).numpy().astype("<i8").tobytes()
        else:
            dtype, data = "F32", t.to(torch.float32).numpy().astype("<f4").tobytes()
        assert name not in header, name
        header[name] = {"dtype": dtype, "shape": list(t.shape), "data_offsets": [offset, offset + len(data)]}
        blobs.append(data)
        offset += len(data)
    text = json.dumps(header, separators=(",", ":")).encode("utf-8")
    text += b" " * (-len(text) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)))
        f.write(text)
        for b in blobs:
            f.write(b)


def load_safetensors(path):
    """The reader for the files above (used by the lesson check script)."""
    with open(path, "rb") as f:
        raw = f.read()
    (n,) = struct.unpack("<Q", raw[:8])
    header = json.loads(raw[8:8 + n])
    header.pop("__metadata__", None)
    out = {}
    for name, info in header.items():
        b, e = info["data_offsets"]
        buf = bytearray(raw[8 + n + b:8 + n + e])
        dtype = {"F32": torch.float32, "I64": torch.int64}[info["dtype"]]
        out[name] = torch.frombuffer(buf, dtype=dtype).reshape(info["shape"]).clone() if e > b \
            else torch.zeros(info["shape"], dtype=dtype)
    return out


# ----------------------------------------------------------------------------- cases


class Case:
    """Collects the tensors of one fixture file."""

    def __init__(self, out_dir, name, module, options):
        self.path = os.path.join(out_dir, name + ".safetensors")
        self.meta = {"case": name, "module": module, "options": json.dumps(options, sort_keys=True)}
        self.tensors = []
        torch.manual_seed(zlib.crc32(name.encode()))

    def add(self, name, t):
        # A copy: an optimizer step or a BatchNorm update later changes the tensor in place.
        self.tensors.append((name, t.detach().clone()))

    def write(self):
        save_safetensors(self.path, self.tensors, self.meta)


def forward_backward(case, prefix, fn, x, params):
    """Runs out = fn(x), backward of sum(out * w); records input, output, w and the grads."""
    x = x.detach().clone().requires_grad_(True)
    for p in params.values():
        p.grad = None
    out = fn(x)
    w = torch.randn(out.shape)
    (out * w).sum().backward()
    case.add(prefix + "input", x)
    case.add(prefix + "output", out)
    case.add(prefix + "grad_output", w)
    case.add(prefix + "input.grad", x.grad)
    for name, p in params.items():
        case.add(prefix + name + ".grad", p.grad)


def module_case(out_dir, name, module_name, options, make, shape, scale=1.0, offset=0.0, randomize=True):
    """A stateless module: one call."""
    case = Case(out_dir, name, module_name, options)
    m = make()
    params = dict(m.named_parameters())
    if randomize:
        randomize_affine(m)  # away from the default ones / zeros
    for p_name, p in params.items():
        case.add(p_name, p)
    x = torch.randn(shape) * scale + offset
    forward_backward(case, "", m, x, params)
    case.write()


def elementwise_cases(out):
    for shape, tag in [((4, 5), "2d"), ((2, 3, 4), "3d")]:
        module_case(out, f"tanh_{tag}", "Tanh", {}, nn.Tanh, shape, scale=1.5)

    # ReLU with a few exact zeros: PyTorch's gradient there is 0.
    case = Case(out, "relu", "ReLU", {})
    x = torch.randn(4, 5)
    x[0, 0] = 0.0
    x[2, 3] = 0.0
    forward_backward(case, "", torch.relu, x, {})
    case.write()


def linear_cases(out):
    module_case(out, "linear_bias", "Linear", {"in_features": 5, "out_features": 3, "bias": True},
                lambda: nn.Linear(5, 3), (4, 5), randomize=False)
    module_case(out, "linear_nobias", "Linear", {"in_features": 5, "out_features": 3, "bias": False},
                lambda: nn.Linear(5, 3, bias=False), (4, 5), randomize=False)
    module_case(out, "linear_batch1", "Linear", {"in_features": 7, "out_features": 2, "bias": True},
                lambda: nn.Linear(7, 2), (1, 7), randomize=False)
    # nn.Linear takes (N, *, in) and a single (in) example.
    module_case(out, "linear_3d", "Linear", {"in_features": 5, "out_features": 3, "bias": True},
                lambda: nn.Linear(5, 3), (2, 4, 5), randomize=False)
    module_case(out, "linear_1d", "Linear", {"in_features": 5, "out_features": 3, "bias": False},
                lambda: nn.Linear(5, 3, bias=False), (5,), randomize=False)


def two_input_case(out, name, module, options, fn, a, b):
    """out = fn(a, b), backward of sum(out * w); records a, b, output, w and both grads."""
    case = Case(out, name, module, options)
    a = a.detach().clone().requires_grad_(True)
    b = b.detach().clone().requires_grad_(True)
    result = fn(a, b)
    w = torch.randn(result.shape)
    (result * w).sum().backward()
    for key, t in [("a", a), ("b", b), ("output", result), ("grad_output", w), ("a.grad", a.grad),
                   ("b.grad", b.grad)]:
        case.add(key, t)
    case.write()


def matmul_cases(out):
    # torch.matmul's cases: 1-D operands, a batch against one matrix, batches that broadcast.
    for tag, a_shape, b_shape in [
        ("vec_mat", (4,), (4, 3)),
        ("mat_vec", (3, 4), (4,)),
        ("vec_vec", (5,), (5,)),
        ("batch_mat", (2, 3, 4), (4, 5)),
        ("batch_batch", (2, 3, 4), (2, 4, 5)),
        ("broadcast_batch", (2, 1, 3, 4), (3, 4, 2)),
        ("vec_batch", (4,), (2, 4, 3)),
        ("batch_vec", (2, 3, 4), (4,)),
    ]:
        torch.manual_seed(zlib.crc32(tag.encode()))
        a, b = torch.randn(a_shape), torch.randn(b_shape)
        two_input_case(out, "matmul_" + tag, "matmul", {}, torch.matmul, a, b)


def transpose_cases(out):
    for tag, shape, d0, d1 in [("3d_0_2", (2, 3, 4), 0, 2), ("4d_1_-1", (2, 3, 4, 5), 1, -1), ("3d_-1_-2", (2, 3, 4), -1, -2)]:
        case = Case(out, "transpose_" + tag, "transpose", {"dim0": d0, "dim1": d1})
        forward_backward(case, "", lambda x: torch.transpose(x, d0, d1), torch.randn(shape), {})
        case.write()


def log_softmax_cases(out):
    for name, shape, dim, scale, offset in [
        ("log_softmax_2d_dim1", (4, 6), 1, 1.0, 0.0),
        ("log_softmax_2d_dim0", (4, 6), 0, 1.0, 0.0),
        ("log_softmax_3d_dim1", (2, 3, 4), 1, 1.0, 0.0),
        ("log_softmax_3d_dim-1", (2, 3, 4), -1, 1.0, 0.0),
        ("log_softmax_large", (3, 5), 1, 30.0, 500.0),  # exp would overflow without the max shift
    ]:
        case = Case(out, name, "log_softmax", {"dim": dim})
        forward_backward(case, "", lambda x: F.log_softmax(x, dim=dim), torch.randn(shape) * scale + offset, {})
        case.write()


def write_cross_entropy_case(case, x, target, weight, ignore_index, reduction, smoothing):
    case.add("target", target)
    if weight is not None:
        case.add("weight", weight)
    fn = lambda logits: F.cross_entropy(logits, target, weight=weight, ignore_index=ignore_index,
                                        reduction=reduction, label_smoothing=smoothing)
    forward_backward(case, "", fn, x, {})
    case.write()


def cross_entropy_cases(out):
    n, c = 6, 5
    cases = [
        # name, reduction, weight?, ignore_index (None: default -100), label_smoothing, ignored rows
        ("mean", "mean", False, None, 0.0, 0),
        ("sum", "sum", False, None, 0.0, 0),
        ("none", "none", False, None, 0.0, 0),
        ("weight_mean", "mean", True, None, 0.0, 0),
        ("weight_sum", "sum", True, None, 0.0, 0),
        ("weight_none", "none", True, None, 0.0, 0),
        ("ignore_default_mean", "mean", False, None, 0.0, 2),
        ("ignore_default_none", "none", False, None, 0.0, 2),
        ("ignore2_mean", "mean", False, 2, 0.0, 2),
        ("ignore2_sum", "sum", False, 2, 0.0, 2),
        ("ignore2_none", "none", False, 2, 0.0, 2),
        ("smoothing_mean", "mean", False, None, 0.1, 0),
        ("smoothing_sum", "sum", False, None, 0.25, 0),
        ("smoothing_none", "none", False, None, 0.1, 0),
        ("weight_ignore_mean", "mean", True, 3, 0.0, 2),
        ("weight_smoothing_mean", "mean", True, None, 0.2, 0),
        ("weight_smoothing_sum", "sum", True, None, 0.2, 0),
        ("weight_smoothing_none", "none", True, None, 0.2, 0),
        ("weight_ignore_smoothing_mean", "mean", True, 1, 0.3, 2),
        ("weight_ignore_smoothing_none", "none", True, 1, 0.3, 2),
        ("ignore_smoothing_sum", "sum", False, 4, 0.1, 3),
    ]
    for tag, reduction, use_weight, ignore, smoothing, n_ignored in cases:
        name = "cross_entropy_" + tag
        options = {"reduction": reduction, "weight": use_weight, "ignore_index": -100 if ignore is None else ignore,
                   "label_smoothing": smoothing}
        case = Case(out, name, "cross_entropy", options)
        x = 2.0 * torch.randn(n, c)
        target = torch.randint(0, c, (n,))
        ignore_index = -100 if ignore is None else ignore
        if ignore is not None:
            target[target == ignore_index] = (ignore_index + 1) % c  # only the chosen rows are ignored
        target[torch.randperm(n)[:n_ignored]] = ignore_index
        weight = torch.rand(c) + 0.5 if use_weight else None
        write_cross_entropy_case(case, x, target, weight, ignore_index, reduction, smoothing)


def cross_entropy_nd_cases(out):
    """(N, C, d1, ...) logits with (N, d1, ...) class indices, and class-probability targets."""
    cases = [
        # name, logits shape, probabilities?, reduction, weight?, ignore_index, label_smoothing
        ("spatial_mean", (2, 4, 3), False, "mean", False, -100, 0.0),
        ("spatial_none", (2, 4, 3, 2), False, "none", False, -100, 0.0),
        ("spatial_weight_ignore_smoothing_mean", (2, 4, 3), False, "mean", True, 1, 0.2),
        ("probs_mean", (3, 4), True, "mean", False, -100, 0.0),
        ("probs_weight_smoothing_sum", (3, 4), True, "sum", True, -100, 0.3),
        ("probs_spatial_weight_none", (2, 4, 3), True, "none", True, -100, 0.0),
        ("probs_spatial_smoothing_mean", (2, 4, 3), True, "mean", False, -100, 0.1),
        ("probs_unbatched_weight_mean", (4,), True, "mean", True, -100, 0.0),
    ]
    for tag, shape, probabilities, reduction, use_weight, ignore_index, smoothing in cases:
        name = "cross_entropy_" + tag
        options = {"reduction": reduction, "weight": use_weight, "ignore_index": ignore_index,
                   "label_smoothing": smoothing}
        case = Case(out, name, "cross_entropy_nd", options)
        x = 2.0 * torch.randn(shape)
        c = shape[1] if len(shape) > 1 else shape[0]
        if probabilities:
            target = torch.softmax(torch.randn(shape), dim=1 if len(shape) > 1 else 0)
        else:
            target = torch.randint(0, c, (shape[0],) + shape[2:])
            if ignore_index != -100:
                target.view(-1)[0] = ignore_index
        weight = torch.rand(c) + 0.5 if use_weight else None
        write_cross_entropy_case(case, x, target, weight, ignore_index, reduction, smoothing)


# ----------------------------------------------------------------------------- norm layers


def randomize_affine(m):
    with torch.no_grad():
        if getattr(m, "weight", None) is not None:
            m.weight.copy_(1.0 + 0.5 * torch.randn(m.weight.shape))
        if getattr(m, "bias", None) is not None:
            m.bias.copy_(0.5 * torch.randn(m.bias.shape))


def batchnorm_case(out, name, module_name, cls, c, shape, modes, **options):
    case = Case(out, name, module_name, dict(num_features=c, **options))
    m = cls(c, **options)
    randomize_affine(m)
    params = dict(m.named_parameters())
    for key, value in m.state_dict().items():
        case.add(key, value)
    case.add("training", torch.tensor([1.0 if mode == "train" else 0.0 for mode in modes]))
    for k, mode in enumerate(modes):
        m.train(mode == "train")
        x = torch.randn(shape) * 2.0 + 0.7 * (k + 1)  # the statistics move from call to call
        forward_backward(case, f"step{k}.", m, x, params)
        for key, value in m.named_buffers():
            case.add(f"step{k}.{key}", value.clone())
    case.write()


def batchnorm_cases(out):
    train3 = ["train"] * 3
    mixed = ["train", "train", "train", "eval", "train", "eval"]
    for tag, shape in [("nc", (6, 4)), ("ncl", (3, 4, 5))]:
        batchnorm_case(out, f"batchnorm1d_{tag}", "BatchNorm1d", nn.BatchNorm1d, 4, shape, mixed)
        batchnorm_case(out, f"batchnorm1d_{tag}_momentum0.5", "BatchNorm1d", nn.BatchNorm1d, 4, shape, mixed,
                       momentum=0.5)
        batchnorm_case(out, f"batchnorm1d_{tag}_momentum_none", "BatchNorm1d", nn.BatchNorm1d, 4, shape,
                       ["train"] * 4 + ["eval"], momentum=None)
        batchnorm_case(out, f"batchnorm1d_{tag}_no_affine", "BatchNorm1d", nn.BatchNorm1d, 4, shape, mixed,
                       affine=False)
        batchnorm_case(out, f"batchnorm1d_{tag}_no_running_stats", "BatchNorm1d", nn.BatchNorm1d, 4, shape,
                       ["train", "eval", "train"], track_running_stats=False)
    batchnorm_case(out, "batchnorm1d_nc_eps0.1", "BatchNorm1d", nn.BatchNorm1d, 4, (6, 4), train3 + ["eval"], eps=0.1)
    batchnorm_case(out, "batchnorm1d_nc_eval_fresh", "BatchNorm1d", nn.BatchNorm1d, 4, (1, 4), ["eval"])
    batchnorm_case(out, "batchnorm1d_nc_two_rows", "BatchNorm1d", nn.BatchNorm1d, 3, (2, 3), train3 + ["eval"])
    shape2d = (2, 3, 4, 5)
    batchnorm_case(out, "batchnorm2d", "BatchNorm2d", nn.BatchNorm2d, 3, shape2d, mixed)
    batchnorm_case(out, "batchnorm2d_momentum0.5", "BatchNorm2d", nn.BatchNorm2d, 3, shape2d, mixed, momentum=0.5)
    batchnorm_case(out, "batchnorm2d_momentum_none", "BatchNorm2d", nn.BatchNorm2d, 3, shape2d,
                   ["train"] * 4 + ["eval"], momentum=None)
    batchnorm_case(out, "batchnorm2d_no_affine", "BatchNorm2d", nn.BatchNorm2d, 3, shape2d, mixed, affine=False)
    batchnorm_case(out, "batchnorm2d_no_running_stats", "BatchNorm2d", nn.BatchNorm2d, 3, shape2d,
                   ["train", "eval", "train"], track_running_stats=False)


class LayerNormNoBias(nn.Module):
    """LayerNorm(bias=False) as PyTorch >= 2.1 has it: a weight and no bias."""

    def __init__(self, shape, eps=1e-5):
        super().__init__()
        self.shape, self.eps = tuple(shape), eps
        self.weight = nn.Parameter(torch.ones(shape))

    def forward(self, x):
        return F.layer_norm(x, self.shape, self.weight, None, self.eps)


class RMSNormRef(nn.Module):
    """RMSNorm from its formula (PyTorch 1.13 has no module): y = x / sqrt(mean(x^2) + eps) * weight,
    the mean over the trailing dims of normalized_shape; eps None means float32's machine epsilon."""

    def __init__(self, shape, eps=None, elementwise_affine=True):
        super().__init__()
        self.shape = tuple(shape)
        self.eps = torch.finfo(torch.float32).eps if eps is None else eps
        self.weight = nn.Parameter(torch.ones(shape)) if elementwise_affine else None

    def forward(self, x):
        dims = tuple(range(-len(self.shape), 0))
        y = x * torch.rsqrt(x.pow(2).mean(dim=dims, keepdim=True) + self.eps)
        return y * self.weight if self.weight is not None else y


def layernorm_cases(out):
    specs = [
        ("layernorm_2d", (4, 6), [6], {}),
        ("layernorm_3d_last", (2, 3, 4), [4], {}),
        ("layernorm_3d_last2", (2, 3, 4), [3, 4], {}),
        ("layernorm_no_affine", (4, 6), [6], {"elementwise_affine": False}),
        ("layernorm_3d_last2_no_affine", (2, 3, 4), [3, 4], {"elementwise_affine": False}),
        ("layernorm_eps0.1", (4, 6), [6], {"eps": 0.1}),
    ]
    for name, shape, norm_shape, options in specs:
        module_case(out, name, "LayerNorm", dict(normalized_shape=norm_shape, **options),
                    lambda: nn.LayerNorm(norm_shape, **options), shape, scale=2.0, offset=1.5)
    for name, shape, norm_shape in [("layernorm_no_bias", (4, 6), [6]), ("layernorm_3d_last2_no_bias", (2, 3, 4), [3, 4])]:
        module_case(out, name, "LayerNorm", {"normalized_shape": norm_shape, "bias": False},
                    lambda: LayerNormNoBias(norm_shape), shape, scale=2.0, offset=1.5)


def rmsnorm_cases(out):
    specs = [
        ("rmsnorm_2d", (4, 6), [6], {}),
        ("rmsnorm_3d_last", (2, 3, 4), [4], {}),
        ("rmsnorm_3d_last2", (2, 3, 4), [3, 4], {}),
        ("rmsnorm_no_affine", (4, 6), [6], {"elementwise_affine": False}),
        ("rmsnorm_eps1e-6", (4, 6), [6], {"eps": 1e-6}),
        ("rmsnorm_eps0.5", (2, 3, 4), [4], {"eps": 0.5}),
    ]
    for name, shape, norm_shape, options in specs:
        module_case(out, name, "RMSNorm", dict(normalized_shape=norm_shape, **options),
                    lambda: RMSNormRef(norm_shape, **options), shape, scale=1.5, offset=0.5)


def groupnorm_cases(out):
    specs = [
        ("groupnorm_3d_g1", 1, (2, 6, 5), {}),
        ("groupnorm_3d_g3", 3, (2, 6, 5), {}),
        ("groupnorm_3d_g6", 6, (2, 6, 5), {}),
        ("groupnorm_4d_g1", 1, (2, 6, 3, 4), {}),
        ("groupnorm_4d_g2", 2, (2, 6, 3, 4), {}),
        ("groupnorm_4d_g6", 6, (2, 6, 3, 4), {}),
        ("groupnorm_3d_g3_no_affine", 3, (2, 6, 5), {"affine": False}),
        ("groupnorm_4d_g2_no_affine", 2, (2, 6, 3, 4), {"affine": False}),
        ("groupnorm_2d_g2", 2, (3, 6), {}),
        ("groupnorm_3d_g3_eps0.1", 3, (2, 6, 5), {"eps": 0.1}),
    ]
    for name, groups, shape, options in specs:
        module_case(out, name, "GroupNorm", dict(num_groups=groups, num_channels=shape[1], **options),
                    lambda: nn.GroupNorm(groups, shape[1], **options), shape, scale=2.0, offset=-1.0)


# ----------------------------------------------------------------------------- SGD


def sgd_cases(out, steps=5):
    specs = [
        ("sgd_plain", {}),
        ("sgd_momentum", {"momentum": 0.9}),
        ("sgd_dampening", {"momentum": 0.9, "dampening": 0.5}),
        ("sgd_weight_decay", {"weight_decay": 0.1}),
        ("sgd_momentum_weight_decay", {"momentum": 0.5, "weight_decay": 0.1, "dampening": 0.2}),
        ("sgd_nesterov", {"momentum": 0.9, "nesterov": True}),
        ("sgd_maximize", {"maximize": True}),
        ("sgd_momentum_maximize", {"momentum": 0.9, "maximize": True}),
        ("sgd_all", {"momentum": 0.8, "weight_decay": 0.05, "nesterov": True, "maximize": True}),
    ]
    for name, options in specs:
        options = dict(lr=0.1, **options)
        case = Case(out, name, "SGD", options)
        params = {"p0": torch.randn(3, 4), "p1": torch.randn(5)}
        coef = {k: (torch.rand(p.shape) + 0.5, torch.randn(p.shape)) for k, p in params.items()}
        for k, p in params.items():
            case.add("a." + k, coef[k][0])
            case.add("b." + k, coef[k][1])
        for k, p in params.items():
            case.add(k, p)
            p.requires_grad_(True)
        opt = torch.optim.SGD(list(params.values()), **options)
        for step in range(steps):
            opt.zero_grad()
            loss = sum((coef[k][0] * p * p).sum() + (coef[k][1] * p).sum() for k, p in params.items())
            loss.backward()
            for k, p in params.items():
                case.add(f"step{step}.{k}.grad", p.grad.clone())
            opt.step()
            for k, p in params.items():
                case.add(f"step{step}.{k}", p.detach().clone())
        case.write()


# ----------------------------------------------------------------------------- the lesson

LESSON_RUNS = [("none", "no normalization", None), ("batch", "BatchNorm1d", nn.BatchNorm1d),
               ("layer", "LayerNorm", nn.LayerNorm)]


def load_digits_split(data_dir):
    """X_train, X_val, y_train, y_val as the lesson builds them (pixels / 16, float32)."""
    rows = []
    with open(os.path.join(data_dir, "digits.csv")) as f:
        for line in f:
            rows.append([int(v) for v in line.split(",")])
    data = torch.tensor(rows, dtype=torch.int64)
    X, y = (data[:, :64].double() / 16.0).float(), data[:, 64]

    def indices(name):
        with open(os.path.join(data_dir, name)) as f:
            return torch.tensor([int(v) for v in f.read().split()])

    train, val = indices("digits_train_indices.txt"), indices("digits_test_indices.txt")
    return X[train], X[val], y[train], y[val]


def deep_net(norm=None, depth=8, width=64):
    """The lesson's model, verbatim."""
    layers, n_in = [], 64
    for _ in range(depth):
        layers += [nn.Linear(n_in, width)] + ([norm(width)] if norm else []) + [nn.Tanh()]
        n_in = width
    return nn.Sequential(*layers, nn.Linear(width, 10))


def lesson_run(norm, X_train, y_train, X_val, y_val, epochs=5, dtype=torch.float32):
    """The lesson's loop, verbatim, with an index column added to the dataset so the batch
    order can be recorded (the sampler's random draws depend only on the dataset's length).
    dtype float64 runs the same weights and order in double (the --sensitivity check)."""
    from torch.utils.data import DataLoader, TensorDataset
    loss_fn = nn.CrossEntropyLoss()
    torch.manual_seed(0)
    model = deep_net(norm).to(dtype)
    X_train, X_val = X_train.to(dtype), X_val.to(dtype)
    init = {k: v.clone() for k, v in model.state_dict().items()}
    opt = torch.optim.SGD(model.parameters(), lr=0.05)
    order, losses = [], []
    index = torch.arange(len(X_train))
    for epoch in range(epochs):
        model.train()
        epoch_order = []
        for xb, yb, ib in DataLoader(TensorDataset(X_train, y_train, index), batch_size=64, shuffle=True):
            opt.zero_grad()
            loss = loss_fn(model(xb), yb)
            loss.backward()
            opt.step()
            losses.append(loss.item())
            epoch_order += ib.tolist()
        order.append(epoch_order)
    model.eval()
    with torch.no_grad():
        acc = (model(X_val).argmax(1) == y_val).float().mean().item()
        train_loss = loss_fn(model(X_train), y_train).item()
        val_loss = loss_fn(model(X_val), y_val).item()
    return init, order, losses, {"train_loss": train_loss, "val_loss": val_loss, "val_accuracy": acc}


BIT_FLIP_NOISE, BIT_FLIP_DRAWS = 1e-8, 5


def comparison_horizon(norm, init, order, losses32, X_train, y_train):
    """PyTorch float64's step losses from the same weights in the same order, and how many of
    them a float32 implementation can be held to (scripts/float32_horizon.py)."""
    import float32_horizon as rule  # imports this module's RMSNormRef
    batches = [torch.tensor(epoch_order[start:start + 64]) for epoch_order in order
               for start in range(0, len(epoch_order), 64)]
    build = lambda: deep_net(norm)  # noqa: E731
    losses64 = rule.replay(build, init, batches, X_train, y_train, dtype=torch.float64)
    ensemble = rule.float32_ensemble(build, init, batches, X_train, y_train)
    assert ensemble[0] == losses32, "the replay is not the lesson's loop"
    steps = rule.horizon(losses64, ensemble)
    return losses64, {"compared_steps": steps, "ensemble_runs": len(ensemble),
                      "ensemble_spread": rule.spread(losses64, ensemble, steps),
                      "ensemble_spread_all_steps": rule.spread(losses64, ensemble, len(losses64))}


def lesson_fixtures(out, data_dir):
    out = os.path.join(out, "lesson")
    os.makedirs(os.path.join(out, "init"), exist_ok=True)
    X_train, X_val, y_train, y_val = load_digits_split(data_dir)
    results, orders = {}, []
    for run, name, norm in LESSON_RUNS:
        init, order, losses, figures = lesson_run(norm, X_train, y_train, X_val, y_val)
        orders.append(order)
        save_safetensors(os.path.join(out, "init", f"{run}.safetensors"), list(init.items()),
                         {"run": run, "norm": name, "seed": "0"})
        with open(os.path.join(out, f"{run}_losses.txt"), "w") as f:
            for loss in losses:
                f.write(repr(loss) + "\n")
        losses64, horizon = comparison_horizon(norm, init, order, losses, X_train, y_train)
        with open(os.path.join(out, f"{run}_losses_float64.txt"), "w") as f:
            for loss in losses64:
                f.write(repr(loss) + "\n")
        results[run] = dict(name=name, steps=len(losses), **figures, **horizon)
        print(f"{name:<17} training loss {figures['train_loss']:.3f}   val accuracy {figures['val_accuracy']:.3f}   "
              f"compared over the first {horizon['compared_steps']} of {len(losses)} steps")
    assert all(order == orders[0] for order in orders), "the runs drew different batch orders"
    with open(os.path.join(out, "batch_order.txt"), "w") as f:
        for epoch_order in orders[0]:
            f.write(" ".join(str(i) for i in epoch_order) + "\n")
    with open(os.path.join(out, "pytorch_results.json"), "w") as f:
        json.dump({"torch_version": torch.__version__, "runs": results}, f, indent=2, sort_keys=True)
        f.write("\n")


def replay_losses(norm, init, order, X_train, y_train, steps, relative_noise=0.0, seed=0):
    """PyTorch's losses over the first steps from init in the given order, after multiplying
    every initial weight by (1 + relative_noise * N(0, 1)): 1e-8 flips the last bit of some."""
    model = deep_net(norm)
    model.load_state_dict(init)
    gen = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for p in model.parameters():
            p.mul_(1 + relative_noise * torch.randn(p.shape, generator=gen))
    opt, losses = torch.optim.SGD(model.parameters(), lr=0.05), []
    for epoch_order in order:
        for start in range(0, len(epoch_order), 64):
            batch = torch.tensor(epoch_order[start:start + 64])
            opt.zero_grad()
            loss = F.cross_entropy(model(X_train[batch]), y_train[batch])
            loss.backward()
            opt.step()
            losses.append(loss.item())
            if len(losses) == steps:
                return losses
    return losses


def lesson_sensitivity(data_dir):
    """How far runs of the lesson that differ only by rounding drift apart, step by step:
    float32 against float64, and float32 against itself with the last bit of some initial
    weights flipped (what any implementation that rounds differently amounts to)."""
    X_train, X_val, y_train, y_val = load_digits_split(data_dir)
    for run, name, norm in LESSON_RUNS:
        init, order32, losses32, _ = lesson_run(norm, X_train, y_train, X_val, y_val)
        _, order64, losses64, _ = lesson_run(norm, X_train, y_train, X_val, y_val, dtype=torch.float64)
        assert order32 == order64
        diffs = [abs(a - b) for a, b in zip(losses32, losses64)]
        print(f"{name:<17} float32 vs float64 step losses: max |diff| {max(diffs[:14]):.1e} over the first 14 "
              f"steps, {max(diffs[:20]):.1e} over 20, {max(diffs):.1e} over all {len(diffs)}")
        for seed in range(1, 6):
            noisy = replay_losses(norm, init, order32, X_train, y_train, 20, 1e-8, seed)
            diffs = [abs(a - b) for a, b in zip(noisy, losses32)]
            print(f"{'':<17} last bits flipped (seed {seed}): max |diff| {max(diffs[:14]):.1e} over the first 14 "
                  f"steps, {max(diffs):.1e} over 20")


# ----------------------------------------------------------------------------- main


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--only", choices=["layers", "lesson"])
    parser.add_argument("--sensitivity", action="store_true",
                        help="write nothing; print how far float32 and float64 runs of the lesson drift apart")
    parser.add_argument("--out", default=os.path.join(REPO, "tests", "fixtures"))
    parser.add_argument("--data", default=os.path.join(REPO, "data"))
    args = parser.parse_args()
    torch.set_num_threads(1)
    if args.sensitivity:
        lesson_sensitivity(args.data)
        return
    os.makedirs(args.out, exist_ok=True)
    if args.only != "lesson":
        for make in (elementwise_cases, linear_cases, matmul_cases, transpose_cases, log_softmax_cases, cross_entropy_cases, cross_entropy_nd_cases,
                     batchnorm_cases,
                     layernorm_cases, rmsnorm_cases, groupnorm_cases, sgd_cases):
            make(args.out)
        __import__("fixtures_conv").conv_cases(args.out)
        __import__("fixtures_nn_extras").nn_extras_cases(args.out)
    if args.only != "layers":
        lesson_fixtures(args.out, args.data)
    if args.only != "lesson":
        fixtures_optim.optim_cases(args.out)


if __name__ == "__main__":
    import fixtures_optim  # noqa: E402 (imports this module's helpers)

    main()
