#!/usr/bin/python3
"""PyTorch fixtures of the optimizers, the learning-rate schedules and gradient clipping.

Called from make_fixtures.py's main (optim_cases); writes into tests/fixtures/:

adam_<variant>.safetensors, adamw_<variant>.safetensors (module "Adam" / "AdamW", options in
  the metadata): parameters p0 (3, 4) and p1 (5,) trained STEPS steps on
  loss = sum(a * p * p) + sum(b * p) over both, as sgd_cases does; `a.p0`, `b.p0`, ... hold the
  coefficients, `p0`, `p1` the initial values, `step<k>.p0.grad` the gradient before step k,
  `step<k>.p0` the value after it, and `state.<i>.<name>` the optimizer's state_dict tensors
  after the last step (i: 0 for p0, 1 for p1; step, exp_avg, exp_avg_sq, max_exp_avg_sq).
  p1 has no gradient at step 0 (its loss term starts at step 1), so its step count lags.

clip_grad_<variant>.safetensors (module "clip_grad_norm_" or "clip_grad_value_"): gradients
  `g0`, `g1`, `g2` before the call, `clipped.g0`, ... after it, and `total_norm` (0-dim) for
  clip_grad_norm_; the options (max_norm, norm_type, clip_value) in the metadata.

lr_schedules.json: per case, the scheduler (its PyTorch construction), the optimizer's base
  lr and `lrs`: get_last_lr() after construction and after each of STEPS optimizer.step();
  scheduler.step() pairs (Python floats, exact in JSON).
"""

import json
import math
import os

import torch
import torch.nn as nn

from make_fixtures import Case

STEPS = 6
SCHEDULE_STEPS = 300


def quadratic_run(out, name, module, cls, options):
    case = Case(out, name, module, options)
    params = {"p0": torch.randn(3, 4), "p1": torch.randn(5)}
    coef = {k: (torch.rand(p.shape) + 0.5, torch.randn(p.shape)) for k, p in params.items()}
    for k in params:
        case.add("a." + k, coef[k][0])
        case.add("b." + k, coef[k][1])
    for k, p in params.items():
        case.add(k, p)
        p.requires_grad_(True)
    opt = cls(list(params.values()), **options)
    for step in range(STEPS):
        opt.zero_grad(set_to_none=True)
        active = {k: p for k, p in params.items() if step > 0 or k == "p0"}
        loss = sum((coef[k][0] * p * p).sum() + (coef[k][1] * p).sum() for k, p in active.items())
        loss.backward()
        for k, p in active.items():
            case.add(f"step{step}.{k}.grad", p.grad)
        opt.step()
        for k, p in params.items():
            case.add(f"step{step}.{k}", p)
    for i, entries in sorted(opt.state_dict()["state"].items()):
        for key, value in sorted(entries.items()):
            case.add(f"state.{i}.{key}", value)
    case.write()


def adam_cases(out):
    specs = [
        ("default", {}),
        ("lr", {"lr": 0.1}),
        ("betas", {"lr": 0.05, "betas": (0.5, 0.9)}),
        ("eps", {"lr": 0.05, "eps": 0.1}),
        ("weight_decay", {"lr": 0.05, "weight_decay": 0.3}),
        ("amsgrad", {"lr": 0.1, "betas": (0.8, 0.7), "amsgrad": True}),
        ("maximize", {"lr": 0.05, "maximize": True}),
        ("all", {"lr": 0.07, "betas": (0.6, 0.8), "eps": 1e-3, "weight_decay": 0.2, "amsgrad": True,
                 "maximize": True}),
    ]
    for variant, options in specs:
        quadratic_run(out, "adam_" + variant, "Adam", torch.optim.Adam, options)
        quadratic_run(out, "adamw_" + variant, "AdamW", torch.optim.AdamW, options)


def clip_case(out, name, module, options, scale=1.0, special=None):
    # JSON has no inf: the metadata spells norm_type inf as "inf".
    case = Case(out, name, module, {k: "inf" if v == math.inf else v for k, v in options.items()})
    grads = [torch.randn(4, 3) * scale, torch.randn(7) * scale, torch.randn(2, 2, 2) * scale]
    if special is not None:
        grads[1][2] = special
    for k, g in enumerate(grads):
        case.add(f"g{k}", g)
    params = [torch.zeros(g.shape, requires_grad=True) for g in grads]
    for p, g in zip(params, grads):
        p.grad = g.clone()
    if module == "clip_grad_norm_":
        case.add("total_norm", nn.utils.clip_grad_norm_(params, **options))
    else:
        nn.utils.clip_grad_value_(params, **options)
    for k, p in enumerate(params):
        case.add(f"clipped.g{k}", p.grad)
    case.write()


def clip_cases(out):
    norm = "clip_grad_norm_"
    clip_case(out, "clip_grad_norm_l2_clips", norm, {"max_norm": 1.0})
    clip_case(out, "clip_grad_norm_l2_below", norm, {"max_norm": 100.0})
    clip_case(out, "clip_grad_norm_l1", norm, {"max_norm": 2.0, "norm_type": 1.0})
    clip_case(out, "clip_grad_norm_l3", norm, {"max_norm": 0.5, "norm_type": 3.0})
    clip_case(out, "clip_grad_norm_l0.5", norm, {"max_norm": 3.0, "norm_type": 0.5})
    clip_case(out, "clip_grad_norm_inf", norm, {"max_norm": 0.7, "norm_type": math.inf})
    clip_case(out, "clip_grad_norm_inf_below", norm, {"max_norm": 50.0, "norm_type": math.inf})
    clip_case(out, "clip_grad_norm_tiny", norm, {"max_norm": 1.0}, scale=1e-7)
    clip_case(out, "clip_grad_norm_large", norm, {"max_norm": 1.0}, scale=1e15)
    clip_case(out, "clip_grad_norm_inf_entry", norm, {"max_norm": 1.0}, special=math.inf)
    clip_case(out, "clip_grad_norm_nan_entry", norm, {"max_norm": 1.0}, special=math.nan)
    clip_case(out, "clip_grad_value", "clip_grad_value_", {"clip_value": 0.5})
    clip_case(out, "clip_grad_value_large", "clip_grad_value_", {"clip_value": 100.0})


def schedule_case(name, make, lr=0.1):
    p = torch.zeros(1, requires_grad=True)
    opt = torch.optim.SGD([p], lr=lr)
    scheduler = make(opt)
    lrs = [scheduler.get_last_lr()[0]]
    for _ in range(SCHEDULE_STEPS):
        opt.step()
        scheduler.step()
        lrs.append(scheduler.get_last_lr()[0])
    return {"case": name, "lr": lr, "lrs": lrs}


def schedule_cases(out):
    S = torch.optim.lr_scheduler
    cases = [
        ("linear_default", lambda o: S.LinearLR(o)),
        ("linear_warmup", lambda o: S.LinearLR(o, start_factor=0.01, end_factor=1.0, total_iters=50)),
        ("linear_decay", lambda o: S.LinearLR(o, start_factor=1.0, end_factor=0.1, total_iters=200)),
        ("cosine", lambda o: S.CosineAnnealingLR(o, T_max=300)),
        ("cosine_cycles", lambda o: S.CosineAnnealingLR(o, T_max=70, eta_min=0.002)),
        ("step", lambda o: S.StepLR(o, step_size=30)),
        ("step_gamma", lambda o: S.StepLR(o, step_size=45, gamma=0.5)),
        ("lambda", lambda o: S.LambdaLR(o, lambda e: 1.0 / (1.0 + 0.05 * e))),
        ("sequential_warmup_cosine", lambda o: S.SequentialLR(
            o, [S.LinearLR(o, start_factor=0.1, total_iters=20), S.CosineAnnealingLR(o, T_max=280)], [20])),
        ("sequential_warmup_step", lambda o: S.SequentialLR(
            o, [S.LinearLR(o, start_factor=0.25, total_iters=10), S.StepLR(o, step_size=50, gamma=0.3)], [10])),
        ("sequential_three", lambda o: S.SequentialLR(
            o, [S.LinearLR(o, start_factor=0.5, total_iters=40), S.LambdaLR(o, lambda e: 0.99 ** e),
                S.CosineAnnealingLR(o, T_max=100, eta_min=0.01)], [30, 150])),
    ]
    table = [schedule_case(name, make) for name, make in cases]
    with open(os.path.join(out, "lr_schedules.json"), "w") as f:
        json.dump(table, f, indent=1)
        f.write("\n")


def optim_cases(out):
    adam_cases(out)
    clip_cases(out)
    schedule_cases(out)
