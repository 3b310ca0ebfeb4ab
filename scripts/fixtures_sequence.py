#!/usr/bin/python3
"""PyTorch fixtures for the sequence models' tensor ops: softmax, masked_fill, tril, triu,
cat, stack, split, chunk, narrow, slice, permute, topk, and matmul on attention's shapes.

Run with Debian's python3-torch (PyTorch 1.13):   /usr/bin/python3 scripts/fixtures_sequence.py
Options: --out DIR (default: tests/fixtures).

The files are those of make_fixtures.py's layer fixtures, written by a copy of its writer
(save_safetensors and Case, below): tests/fixtures/<case>.safetensors, F32 tensors, the
header's "__metadata__" holding "case", "module" and "options" (JSON, PyTorch's keyword
names). Every case seeds torch from a CRC32 of its name, so the files come out the same on
every run. Inputs are drawn in float32; every op then runs in float64 on those values and
the results are rounded to float32 once, so a fixture is the correctly rounded answer.

Tensor names. One input and one output: input, output, grad_output (a fixed random w),
input.grad (the gradient of sum(output * w)). Several inputs (cat, stack, matmul): input0,
input1, ... and input0.grad, ...; several outputs (split, chunk): output0, grad_output0, ...,
the gradient being that of the sum over outputs of sum(output_i * w_i). masked_fill also has
`mask` (0/1 as float32, minidl's masks) and `value` (rank 0: JSON has no -inf); topk has
`indices` (float32) beside its values in `output`.
"""

import argparse
import json
import os
import struct
import zlib

import torch

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def save_safetensors(path, tensors, metadata=None):
    """make_fixtures.py's writer: tensors is a list of (name, tensor) in file order, all F32 here."""
    header, blobs, offset = {}, [], 0
    if metadata:
        header["__metadata__"] = {k: str(v) for k, v in metadata.items()}
    for name, t in tensors:
        data = t.detach().contiguous().to(torch.float32).numpy().astype("<f4").tobytes()
        assert name not in header, name
        header[name] = {"dtype": "F32", "shape": list(t.shape), "data_offsets": [offset, offset + len(data)]}
        blobs.append(data)
        offset += len(data)
    text = json.dumps(header, separators=(",", ":")).encode("utf-8")
    text += b" " * (-len(text) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)))
        f.write(text)
        for b in blobs:
            f.write(b)


class Case:
    """The tensors of one fixture file (make_fixtures.py's Case)."""

    def __init__(self, out_dir, name, module, options):
        self.path = os.path.join(out_dir, name + ".safetensors")
        self.meta = {"case": name, "module": module, "options": json.dumps(options, sort_keys=True)}
        self.tensors = []
        torch.manual_seed(zlib.crc32(name.encode()))

    def add(self, name, t):
        self.tensors.append((name, t.detach().clone()))

    def write(self):
        save_safetensors(self.path, self.tensors, self.meta)


def randn(*shape):
    """Normal draws in float32, then float64 for the computation."""
    return torch.randn(shape).double()


def run_case(out, name, module, options, fn, inputs, extra=()):
    """outputs = fn(*inputs) (a tensor or a list), backward of sum_i sum(output_i * w_i) in
    float64; records inputs, outputs, each w and the input gradients."""
    case = Case(out, name, module, options)
    for key, t in extra:
        case.add(key, t)
    inputs = [t.detach().clone().requires_grad_(True) for t in inputs]
    result = fn(*inputs)
    outputs = list(result) if isinstance(result, (list, tuple)) else [result]
    weights = [randn(*o.shape) for o in outputs]
    sum((o * w).sum() for o, w in zip(outputs, weights)).backward()
    single_in, single_out = len(inputs) == 1, not isinstance(result, (list, tuple))
    for i, t in enumerate(inputs):
        case.add("input" if single_in else f"input{i}", t)
    for i, (o, w) in enumerate(zip(outputs, weights)):
        case.add("output" if single_out else f"output{i}", o)
        case.add("grad_output" if single_out else f"grad_output{i}", w)
    for i, t in enumerate(inputs):
        case.add("input.grad" if single_in else f"input{i}.grad", t.grad)
    case.write()


def softmax_cases(out):
    for tag, shape, dim in [("2d_dim1", (4, 6), 1), ("2d_dim0", (4, 6), 0), ("3d_dim1", (2, 3, 4), 1),
                            ("attention", (2, 2, 3, 5), -1)]:
        torch.manual_seed(zlib.crc32(tag.encode()))
        run_case(out, "softmax_" + tag, "softmax", {"dim": dim}, lambda x: torch.softmax(x, dim), [randn(*shape)])
    torch.manual_seed(1)
    large = randn(3, 5) * 30 + 500  # exp would overflow without the max shift
    run_case(out, "softmax_large", "softmax", {"dim": 1}, lambda x: torch.softmax(x, 1), [large])
    # A causal row pattern: -inf above the diagonal gives exact zeros and no gradient there.
    masked = randn(2, 4, 4).masked_fill(torch.ones(4, 4, dtype=torch.bool).triu(1), float("-inf"))
    run_case(out, "softmax_masked_rows", "softmax", {"dim": -1}, lambda x: torch.softmax(x, -1), [masked])


def masked_fill_case(out, name, x_shape, mask_shape, value, causal=False):
    torch.manual_seed(zlib.crc32(name.encode()))
    x = randn(*x_shape)
    mask = torch.ones(mask_shape, dtype=torch.bool).triu(1) if causal else torch.rand(mask_shape) < 0.4
    extra = [("mask", mask.double()), ("value", torch.tensor(value, dtype=torch.float64))]
    run_case(out, name, "masked_fill", {}, lambda t: t.masked_fill(mask, value), [x], extra)


def masked_fill_cases(out):
    masked_fill_case(out, "masked_fill_same_shape", (3, 4), (3, 4), 0.5)
    masked_fill_case(out, "masked_fill_causal", (2, 2, 4, 4), (4, 4), float("-inf"), causal=True)
    masked_fill_case(out, "masked_fill_padding", (2, 3, 5), (2, 1, 5), -1e9)
    masked_fill_case(out, "masked_fill_input_broadcast", (4,), (3, 4), 2.0)  # x copied into each row


def triangle_cases(out):
    for fn_name, fn in [("tril", torch.tril), ("triu", torch.triu)]:
        for tag, shape, diagonal in [("square", (4, 4), 0), ("above", (3, 5), 1), ("below", (5, 3), -1),
                                     ("batched", (2, 3, 4), 2)]:
            name = f"{fn_name}_{tag}"
            torch.manual_seed(zlib.crc32(name.encode()))
            run_case(out, name, fn_name, {"diagonal": diagonal}, lambda x: fn(x, diagonal), [randn(*shape)])


def join_cases(out):
    for tag, shapes, dim in [("dim0", [(2, 3), (4, 3)], 0), ("dim1_three", [(2, 1), (2, 3), (2, 2)], 1),
                             ("last", [(2, 3, 2), (2, 3, 4)], -1), ("kv_cache", [(1, 2, 3, 4), (1, 2, 1, 4)], 2)]:
        name = "cat_" + tag
        torch.manual_seed(zlib.crc32(name.encode()))
        run_case(out, name, "cat", {"dim": dim}, lambda *ts: torch.cat(ts, dim), [randn(*s) for s in shapes])
    for tag, shape, count, dim in [("dim0", (2, 3), 3, 0), ("middle", (2, 3), 2, 1), ("last", (2, 3), 2, -1)]:
        name = "stack_" + tag
        torch.manual_seed(zlib.crc32(name.encode()))
        run_case(out, name, "stack", {"dim": dim}, lambda *ts: torch.stack(ts, dim),
                 [randn(*shape) for _ in range(count)])
    for tag, shape, size, dim in [("int", (7, 2), 3, 0), ("sizes", (2, 9), [2, 3, 4], 1), ("qkv", (2, 3, 12), 4, -1)]:
        name = "split_" + tag
        torch.manual_seed(zlib.crc32(name.encode()))
        run_case(out, name, "split", {"split_size_or_sections": size, "dim": dim},
                 lambda x: list(torch.split(x, size, dim)), [randn(*shape)])
    for tag, shape, chunks, dim in [("even", (6, 2), 3, 0), ("uneven", (2, 7), 3, 1), ("fewer", (6,), 4, 0)]:
        name = "chunk_" + tag
        torch.manual_seed(zlib.crc32(name.encode()))
        run_case(out, name, "chunk", {"chunks": chunks, "dim": dim}, lambda x: list(torch.chunk(x, chunks, dim)),
                 [randn(*shape)])


def slicing_cases(out):
    for tag, shape, dim, start, length in [("dim0", (5, 3), 0, 1, 3), ("negative_start", (2, 6), 1, -4, 2),
                                           ("last_token", (2, 4, 3), 1, 3, 1)]:
        name = "narrow_" + tag
        torch.manual_seed(zlib.crc32(name.encode()))
        run_case(out, name, "narrow", {"dim": dim, "start": start, "length": length},
                 lambda x: torch.narrow(x, dim, start, length), [randn(*shape)])
    for tag, shape, dim, start, end, step in [("step2", (7, 2), 0, 1, 6, 2), ("negative", (2, 8), 1, -5, -1, 1),
                                              ("clamped_step3", (2, 3, 10), -1, 2, 100, 3)]:
        name = "slice_" + tag
        torch.manual_seed(zlib.crc32(name.encode()))
        index = lambda x: x[(slice(None),) * (dim % x.dim()) + (slice(start, end, step),)]
        run_case(out, name, "slice", {"dim": dim, "start": start, "end": end, "step": step}, index, [randn(*shape)])


def permute_cases(out):
    for tag, shape, dims in [("2d", (3, 4), [1, 0]), ("heads", (2, 3, 4, 5), [0, 2, 1, 3]),
                             ("cycle", (2, 3, 4), [2, 0, 1]), ("negative", (2, 3, 4), [-1, 0, -2])]:
        name = "permute_" + tag
        torch.manual_seed(zlib.crc32(name.encode()))
        run_case(out, name, "permute", {"dims": dims}, lambda x: x.permute(dims), [randn(*shape)])


def topk_cases(out):
    for tag, shape, k, dim, largest in [("last", (3, 6), 2, -1, True), ("dim0_smallest", (5, 3), 3, 0, False),
                                        ("middle", (2, 5, 3), 4, 1, True), ("all", (2, 4), 4, 1, True)]:
        name = "topk_" + tag
        torch.manual_seed(zlib.crc32(name.encode()))
        x = randn(*shape)
        indices = torch.topk(x, k, dim, largest).indices.double()
        run_case(out, name, "topk", {"k": k, "dim": dim, "largest": largest},
                 lambda t: torch.topk(t, k, dim, largest).values, [x], [("indices", indices)])


def attention_matmul_cases(out):
    # (B, H, T, D) @ (B, H, D, T), then the weights @ (B, H, T, D); and a KV cache's one query.
    for tag, a_shape, b_shape in [("scores", (2, 2, 3, 4), (2, 2, 4, 3)), ("values", (2, 2, 3, 3), (2, 2, 3, 4)),
                                  ("one_query", (1, 2, 1, 4), (1, 2, 4, 5))]:
        name = "matmul_attention_" + tag
        torch.manual_seed(zlib.crc32(name.encode()))
        run_case(out, name, "matmul_attention", {}, torch.matmul, [randn(*a_shape), randn(*b_shape)])


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", default=os.path.join(REPO, "tests", "fixtures"))
    args = parser.parse_args()
    torch.set_num_threads(1)
    os.makedirs(args.out, exist_ok=True)
    for make in (softmax_cases, masked_fill_cases, triangle_cases, join_cases, slicing_cases, permute_cases,
                 topk_cases, attention_matmul_cases):
        make(args.out)


if __name__ == "__main__":
    main()
