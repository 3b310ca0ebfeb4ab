"""charlm's rows of bench/bench_all.py (`--what charlm` runs them alone).

charlm is measured from outside, as a process: bench/ links nothing of apps/. A figure per
step is (a run of 10 + N steps - a run of 10 steps) / N (WARMUP), both with one evaluation
at the end, so the data loading, the model's construction, the first steps and the final
evaluation cancel; each run is the minimum over repeats, and every repeat runs each program
once, interleaved.
  - the sgemm floor: charlm under bench/gemm_shim.cpp (LD_PRELOAD) logs its sgemm calls, a
    run of 10 + N steps and one of 10; sgemm_lesson replays each log alone (best of 2 passes);
  - PyTorch eager (bench/bench_charlm_pytorch.py step) and the C++ frontend (torch_charlm):
    the same model and step, timed in process over N steps of a fresh model;
  - sampling: charlm --sample W from the recorded run's checkpoint, less --sample 0, per
    word; PyTorch's token loop (bench_charlm_pytorch.py sample) on the same checkpoint;
  - width 256 on 1 and 2 threads; the peak RSS of one run of charlm's defaults.
"""
import os
import re
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PYTHON = "/usr/bin/python3"


def threads_env(n):
    return {"OMP_NUM_THREADS": str(n), "OPENBLAS_NUM_THREADS": str(n), "MKL_NUM_THREADS": str(n)}


class Process:
    """One run of cmd: wall and CPU seconds, peak RSS (MB), standard output."""

    def __init__(self, cmd, env_extra=None):
        env = dict(os.environ)
        env.update(env_extra or {})
        with tempfile.TemporaryFile("w+") as out, tempfile.TemporaryFile("w+") as err:
            start = time.perf_counter()
            child = subprocess.Popen(cmd, env=env, stdout=out, stderr=err)
            _, status, usage = os.wait4(child.pid, 0)
            self.wall = time.perf_counter() - start
            child.returncode = os.waitstatus_to_exitcode(status)
            out.seek(0)
            err.seek(0)
            self.stdout, self.stderr = out.read(), err.read()
        if child.returncode != 0:
            sys.exit(f"bench_all: {' '.join(cmd)} failed ({child.returncode}):\n{self.stderr}")
        self.cpu = usage.ru_utime + usage.ru_stime
        self.peak_mb = usage.ru_maxrss / 1024


class Best:
    """The minimum of each figure over repeats: a (wall, cpu) pair's two clocks each apart."""

    def __init__(self):
        self.values = {}

    def add(self, key, value):
        if key not in self.values:
            self.values[key] = value
        elif isinstance(value, tuple):
            self.values[key] = tuple(map(min, self.values[key], value))
        else:
            self.values[key] = min(self.values[key], value)

    def __getitem__(self, key):
        return self.values[key]


def core_type(build):
    """OpenBLAS's core type in use: OPENBLAS_CORETYPE's, else what it detects."""
    env = dict(os.environ, OPENBLAS_VERBOSE="2")
    done = subprocess.run([os.path.join(build, "bench", "sgemm_lesson")], env=env, capture_output=True, text=True)
    found = re.search(r"Core:\s*(\S+)", done.stdout + done.stderr)
    return found.group(1) if found else os.environ.get("OPENBLAS_CORETYPE", "?")


def replay(build, log):
    out = Process([os.path.join(build, "bench", "sgemm_lesson"), log, "2"], threads_env(1)).stdout
    m = re.search(r"best pass ([\d.]+) ms \(cpu ([\d.]+) ms\)", out)
    return float(m.group(1)) * 1e-3, float(m.group(2)) * 1e-3


def record(build, charlm, steps, log, save=None):
    """charlm's sgemm calls, through the preloaded shim."""
    env = dict(threads_env(1), LD_PRELOAD=os.path.join(build, "bench", "libgemm_shim.so"), MINIDL_GEMM_LOG=log)
    p = Process(charlm + ["--steps", str(steps), "--eval-every", str(max(steps, 1))] +
                (["--save", save] if save else []), env)
    if "not in the log" in p.stderr:
        sys.exit(f"bench_all: charlm's floor would miss calls:\n{p.stderr}")


def step_seconds(out):
    """(wall, cpu) seconds per step from "step X ms (cpu Y ms)"."""
    return tuple(float(v) * 1e-3 for v in re.search(r"step ([\d.]+) ms \(cpu ([\d.]+)", out).groups())


# Steps before the timed ones, on both sides: charlm's first steps touch Storage's blocks for
# the first time (7,700 page faults, about 13 us each under a hypervisor), and the floor's
# buffers are filled before its replay starts.
WARMUP = 10


def step_rows(table, build, repeats, steps, with_torch, tmp):
    charlm = [os.path.join(build, "apps", "charlm", "charlm"), "--threads", "1", "--seeds", "0", "--quiet"]
    runs = (WARMUP + steps, WARMUP)
    logs = {n: os.path.join(tmp, f"charlm{n}.gemm") for n in runs}
    record(build, charlm, runs[0], logs[runs[0]], save=os.path.join(tmp, "ckpt"))
    record(build, charlm, runs[1], logs[runs[1]])
    torch_cpp = os.path.join(build, "bench", "torch_charlm")
    best = Best()
    for _ in range(repeats):
        for n in runs:
            p = Process(charlm + ["--steps", str(n), "--eval-every", str(n)], threads_env(1))
            best.add(("charlm", n), (p.wall, p.cpu))
            best.add(("floor", n), replay(build, logs[n]))
        if with_torch:
            out = Process([PYTHON, os.path.join(ROOT, "bench", "bench_charlm_pytorch.py"), "step", "--steps",
                           str(steps)], threads_env(1)).stdout
            best.add("torch_py", step_seconds(out))
        if os.path.exists(torch_cpp):
            out = Process([torch_cpp, "--threads", "1", "--steps", str(steps)], threads_env(1)).stdout
            best.add("torch_cpp", step_seconds(out))
    per_step = {key: tuple((best[(key, runs[0])][i] - best[(key, runs[1])][i]) / steps for i in (0, 1))
                for key in ("charlm", "floor")}
    mine = per_step["charlm"]
    add_ratio(table, f"charlm step (defaults, batch 32 words, 1 thread, OpenBLAS {core_type(build)} kernels) / its "
              "sgemm calls replayed alone: wall (cpu)", mine, per_step["floor"], "sgemm ", 1.4)
    if with_torch:
        add_ratio(table, "  charlm step / PyTorch eager (Python, AdamW)", mine, best["torch_py"], "", 0.6)
    if os.path.exists(torch_cpp):
        add_ratio(table, "  charlm step / PyTorch C++ frontend (torch_charlm)", mine, best["torch_cpp"], "", 1.0)
    else:
        table.add("  charlm step / PyTorch C++ frontend", "not built (no libtorch-dev)")
    return os.path.join(tmp, "ckpt")


def add_ratio(table, what, mine, other, prefix, target, unit="ms", scale=1e3):
    """A row of wall (cpu) figures of 1-thread runs; the CPU ratio judged against target (below
    it; 1.0: strictly): on one thread CPU time is the wall time the process would take alone,
    and it holds on a pair of cores shared with other work, where wall time does not."""
    ratio, cpu_ratio = mine[0] / other[0], mine[1] / other[1]
    met = cpu_ratio < target if target == 1.0 else cpu_ratio <= target
    table.add(what, f"{mine[0] * scale:.2f} {unit} ({mine[1] * scale:.2f})",
              f"{prefix}{other[0] * scale:.2f} {unit} ({other[1] * scale:.2f})", ratio,
              f"< {target:g}x" if target == 1.0 else f"{target:g}x", met,
              ratio_text=f"{ratio:.2f}x ({cpu_ratio:.2f}x)")


def sample_rows(table, build, repeats, ckpt, with_torch, words):
    charlm = [os.path.join(build, "apps", "charlm", "charlm"), "--threads", "1", "--seeds", "0", "--quiet",
              "--steps", "0", "--init-from", ckpt]
    torch_cmd = [PYTHON, os.path.join(ROOT, "bench", "bench_charlm_pytorch.py"), "sample", "--checkpoint",
                 os.path.join(ckpt, "layer-pre.safetensors"), "--words", str(max(1, words // 20))]
    best, letters, torch_letters = Best(), 0.0, 0.0
    for _ in range(repeats):
        for n in (words, 0):
            p = Process(charlm + ["--sample", str(n)], threads_env(1))
            best.add(n, (p.wall, p.cpu))
            if n:
                written = p.stdout.split("samples of", 1)[1].splitlines()[1:1 + n]
                letters = sum(map(len, written)) / n
        if with_torch:
            out = Process(torch_cmd, threads_env(1)).stdout
            m = re.search(r"sample ([\d.]+) ms/word \(cpu ([\d.]+) ms\), ([\d.]+) letters", out)
            best.add("torch", (float(m.group(1)) * 1e-3, float(m.group(2)) * 1e-3))
            torch_letters = float(m.group(3))
    mine = tuple((best[words][i] - best[0][i]) / words for i in (0, 1))
    if with_torch:
        add_ratio(table, f"charlm sampling at batch size 1 (KV cache), per word ({letters:.1f} letters) / PyTorch's "
                  f"token loop ({torch_letters:.1f} letters): wall (cpu)", mine, best["torch"], "", 0.1)


def width_rows(table, build, repeats, steps):
    charlm = [os.path.join(build, "apps", "charlm", "charlm"), "--width", "256", "--seeds", "0", "--quiet"]
    best = Best()
    for _ in range(repeats):
        for threads in (1, 2):
            for n in (steps, 0):
                p = Process(charlm + ["--threads", str(threads), "--steps", str(n), "--eval-every", str(max(n, 1))],
                            threads_env(threads))
                best.add((threads, n), p.wall)
    one, two = ((best[(t, steps)] - best[(t, 0)]) / steps for t in (1, 2))
    table.add("charlm --width 256: step on 2 threads / 1 thread, wall", f"{two * 1e3:.1f} ms (2 threads)",
              f"{one * 1e3:.1f} ms (1 thread)", one / two, ">= 1.6x", one / two >= 1.6,
              ratio_text=f"{one / two:.2f}x faster")


def memory_row(table, build, quick):
    """One run of the defaults (1000 steps) on 1 thread: 2 threads on a shared pair of cores
    can take minutes; --quick: 200 steps."""
    steps = 200 if quick else 1000
    charlm = [os.path.join(build, "apps", "charlm", "charlm"), "--quiet", "--seeds", "0", "--threads", "1",
              "--steps", str(steps)]
    p = Process(charlm, threads_env(1))
    table.add(f"charlm at its defaults, 1 seed x {steps} steps, 1 thread: peak RSS", f"{p.peak_mb:.0f} MB", "", None,
              "< 100 MB", p.peak_mb < 100)
    bare = Process(charlm, dict(threads_env(1), MINIDL_NO_MEMORY_CACHING="1"))
    table.add("  the same without Storage's block cache (MINIDL_NO_MEMORY_CACHING=1): peak RSS, cpu",
              f"{bare.peak_mb:.0f} MB, {bare.cpu:.1f} s", f"{p.peak_mb:.0f} MB, {p.cpu:.1f} s (cached)",
              bare.cpu / p.cpu, ratio_text=f"{bare.cpu / p.cpu:.2f}x cpu")


def charlm_rows(table, build, repeats, quick, with_torch):
    steps = 50 if quick else 100
    with tempfile.TemporaryDirectory() as tmp:
        ckpt = step_rows(table, build, repeats, steps, with_torch, tmp)
        sample_rows(table, build, repeats, ckpt, with_torch, 100 if quick else 400)
    width_rows(table, build, repeats, 10 if quick else 30)
    memory_row(table, build, quick)
