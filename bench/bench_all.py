#!/usr/bin/python3
"""Runs every benchmark and prints each figure beside its floor and ratio, and the current
targets' verdicts.

Called by bench/bench_all.sh after it has built the programs. Figures are minima over
repeats; a figure and its floor are taken in turn (in one process where they can be, else
the processes interleaved), so a change in the machine's load touches both alike. The
machine, the load average and OpenBLAS's core type (from OPENBLAS_VERBOSE=2) come first.

The targets (met / NOT met; every other row is a measurement without one):
  charlm's step <= 1.4x its sgemm floor, <= 0.6x PyTorch eager, < 1x the C++ frontend;
  charlm's sampling <= 0.1x PyTorch's token loop; charlm's peak RSS < 100 MB;
  charlm at width 256 on 2 threads >= 1.6x faster than on 1;
  the whole digits process <= 2.1x the bare sgemm program and <= 0.18x libtorch's.
"""
import argparse
import os
import re
import resource
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "scripts"))
import torch_isa  # noqa: E402  PyTorch's runs (its children) held to OPENBLAS_CORETYPE's instruction set
from bench_charlm import charlm_rows, core_type  # noqa: E402

PYTHON = "/usr/bin/python3"  # Debian's, with torch
ONE_THREAD = {"OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}
PROCESS_FLOOR_TARGET = 2.1  # the whole digits process against the bare sgemm program
PROCESS_TORCH_TARGET = 0.18  # the whole digits process against libtorch's (torch_lesson)


def run(cmd, env_extra=None, check=True):
    env = dict(os.environ)
    env.update(env_extra or {})
    done = subprocess.run(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if check and done.returncode != 0:
        sys.exit(f"bench_all: {' '.join(cmd)} failed ({done.returncode}):\n{done.stderr}")
    return done.stdout + done.stderr


def machine(build):
    lscpu = run(["lscpu"])
    model = re.search(r"Model name:\s*(.*)", lscpu).group(1).strip()
    flags = re.search(r"Flags:\s*(.*)", lscpu).group(1).split()
    isa = "AVX-512" if "avx512f" in flags else "AVX2" if "avx2" in flags else "SSE"
    forced = os.environ.get("OPENBLAS_CORETYPE")
    load = open("/proc/loadavg").read().split()[:3]
    return (f"{model} ({isa}), {os.cpu_count()} cores; OpenBLAS core type {core_type(build)}"
            f" ({'forced by OPENBLAS_CORETYPE=' + forced if forced else 'detected'}); PyTorch: {torch_isa.describe()};"
            f" load average {' '.join(load)}")


class Table:
    def __init__(self):
        self.rows = []

    def add(self, what, measured, floor="", ratio=None, target="", met=None, ratio_text=None):
        """ratio_text, when given, is printed instead of the ratio (wall and cpu ratios)."""
        if ratio_text is None:
            ratio_text = "" if ratio is None else f"{ratio:.2f}x"
        verdict = "" if met is None else ("met" if met else "NOT met")
        self.rows.append((what, measured, floor, ratio_text, target, verdict))

    def verdicts(self):
        """(met, rows NOT met) over the rows that have a target."""
        judged = [r for r in self.rows if r[5]]
        return sum(r[5] == "met" for r in judged), [r[0].strip() for r in judged if r[5] != "met"]

    def print(self, markdown):
        head = ("Figure", "Measured", "Floor / reference", "Ratio", "Target", "Met")
        if markdown:
            print("| " + " | ".join(head) + " |")
            print("|" + "---|" * len(head))
            for r in self.rows:
                print("| " + " | ".join(r) + " |")
            return
        widths = [max(len(str(r[i])) for r in self.rows + [head]) for i in range(len(head))]
        for r in [head] + self.rows:
            print("  ".join(str(c).ljust(w) for c, w in zip(r, widths)).rstrip())


LESSON_LINE = re.compile(r"^(\S+)\s+wall\s+([\d.]+) ms\s+([\d.]+) us/step, floor\s+([\d.]+) ms: ([\d.]+)x \| "
                         r"cpu\s+([\d.]+) ms, floor\s+([\d.]+) ms: ([\d.]+)x\s+\((\d+) steps")


STATS_LINE = re.compile(r"^(\S+)\s+stats off cpu\s+([\d.]+) ms \| every (\d+):\s+([\d.]+) ms: ([\d.]+)x")


def bench_lesson(build, args):
    out = run([os.path.join(build, "bench", "bench_lesson"), "--threads", "1"] + args)
    figures = {}
    for line in out.splitlines():
        stats = STATS_LINE.match(line)
        if stats:  # the recorder's cost, under the key "stats <run>"
            figures["stats " + stats.group(1)] = {"off": float(stats.group(2)), "every": int(stats.group(3)),
                                                  "on": float(stats.group(4)), "ratio": float(stats.group(5))}
        m = LESSON_LINE.match(line)
        if m:
            g = m.groups()
            figures[g[0]] = {"wall": float(g[1]), "us_step": float(g[2]), "floor": float(g[3]), "ratio": float(g[4]),
                             "cpu": float(g[5]), "cpu_floor": float(g[6]), "cpu_ratio": float(g[7]),
                             "steps": int(g[8])}
    return figures


def pytorch_lesson(opts):
    out = run([PYTHON, os.path.join(ROOT, "bench", "bench_pytorch.py"), "lesson"] + opts, ONE_THREAD)
    m = re.search(r"pytorch lesson ([\d.]+) ms wall, ([\d.]+) us/step", out)
    return float(m.group(1)), float(m.group(2))


def lesson_rows(table, build, repeats, log):
    fig = bench_lesson(build, ["--repeats", str(repeats), "--record-gemm", log])
    names = {"none": "no norm", "batch": "BatchNorm1d", "layer": "LayerNorm", "lesson": "all three"}
    for key in ("none", "batch", "layer", "lesson"):
        f = fig[key]
        table.add(f"Lesson, {names[key]}: wall (cpu)", f"{f['wall']:.1f} ms ({f['cpu']:.1f})",
                  f"sgemm {f['floor']:.1f} ms ({f['cpu_floor']:.1f})", f["ratio"],
                  ratio_text=f"{f['ratio']:.2f}x ({f['cpu_ratio']:.2f}x)")
    stats = fig.get("stats lesson")
    if stats:
        table.add(f"Lesson with the statistics recorder (every {stats['every']}th step) / without: cpu",
                  f"{stats['on']:.1f} ms", f"{stats['off']:.1f} ms", stats["ratio"])
    return fig["lesson"]


def batch1_rows(table, build, repeats, with_torch):
    for norm, name in (("none", "no norm"), ("layer", "LayerNorm")):
        f = bench_lesson(build, ["--norm", norm, "--batch-size", "1", "--epochs", "1", "--repeats", str(repeats)])[norm]
        table.add(f"Batch size 1, {name}, 1437 steps: wall (cpu)",
                  f"{f['us_step']:.1f} us/step ({f['cpu'] / f['steps'] * 1e3:.1f})",
                  f"sgemm {f['floor'] / f['steps'] * 1e3:.1f} us/step ({f['cpu_floor'] / f['steps'] * 1e3:.1f})",
                  f["ratio"], ratio_text=f"{f['ratio']:.2f}x ({f['cpu_ratio']:.2f}x)")
        if with_torch:
            _, torch_us = pytorch_lesson(["--norm", norm, "--batch-size", "1", "--epochs", "1",
                                          "--repeats", str(max(1, repeats // 2))])
            table.add(f"  minidl / PyTorch (Python), batch size 1, {name}", f"{f['us_step']:.1f} us/step",
                      f"{torch_us:.1f} us/step", f["us_step"] / torch_us)


BY_HAND_LINE = re.compile(r"(\S+)\s+cpu: lesson\s+([\d.]+) ms, by hand\s+([\d.]+) ms, floor\s+([\d.]+) ms \| "
                          r"lesson/floor ([\d.]+)x, by hand/floor ([\d.]+)x, lesson/by hand ([\d.]+)x \((\d+) steps")


def by_hand_rows(table, build, repeats):
    """The lesson written by hand on the same kernels (bench_lesson_by_hand): the floor of any
    framework on them, and what the framework's bookkeeping adds to it."""
    batch1 = ["--batch-size", "1", "--epochs", "1"]
    cases = ((["--norm", "none,batch,layer"], "lesson", "Lesson (all three)", "ms"),
             (["--norm", "none"] + batch1, "none", "Batch size 1, no norm", "us/step"),
             (["--norm", "layer"] + batch1, "layer", "Batch size 1, LayerNorm", "us/step"))
    for args, key, what, unit in cases:
        out = run([os.path.join(build, "bench", "bench_lesson_by_hand"), "--repeats", str(repeats)] + args)
        m = {g.group(1): g for g in map(BY_HAND_LINE.match, out.splitlines()) if g}[key]
        steps = int(m.group(8))
        scale = 1.0 if unit == "ms" else 1e3 / steps
        hand, floor, lesson = (float(m.group(i)) * scale for i in (3, 4, 2))
        ratio = float(m.group(6))
        table.add(f"{what} written by hand on the same kernels, no framework / sgemm floor: cpu", f"{hand:.1f} {unit}",
                  f"sgemm {floor:.1f} {unit}", ratio)
        table.add(f"  {what}, through the framework / written by hand: cpu", f"{lesson:.1f} {unit}",
                  f"{hand:.1f} {unit}", float(m.group(7)))


WIDE_LINE = re.compile(r"threads (\d+): ([\d.]+) ms/step, GEMM floor ([\d.]+) ms/step .*wall ([\d.]+)x, cpu ([\d.]+)x")


def wide_rows(table, build, steps):
    out = run([os.path.join(build, "bench", "bench_wide"), "--steps", str(steps), "--threads", "1,2"])
    per = {int(m.group(1)): m for m in map(WIDE_LINE.match, out.splitlines()) if m}
    one, two = per[1], per[2]
    table.add("Wide net (8 x 1024, batch 512), 1 thread: wall (cpu)", f"{one.group(2)} ms/step",
              f"sgemm {one.group(3)} ms/step", float(one.group(4)), ratio_text=f"{one.group(4)}x ({one.group(5)}x)")
    table.add("Wide net, 2 threads: wall (cpu)", f"{two.group(2)} ms/step", f"sgemm {two.group(3)} ms/step",
              float(two.group(4)),
              ratio_text=f"{two.group(4)}x ({two.group(5)}x)")
    speedup = float(one.group(2)) / float(two.group(2))
    table.add("Wide net, 2 threads faster than 1", f"{speedup:.2f}x")


NORM_LINE = re.compile(r"^\s+(\w+)\s+forward ([\d.]+) ms, forward \+ backward ([\d.]+) ms(?:: [\d.]+ GB/s, ([\d.]+) of)?")


def parse_norm(out):
    figures, shape = {}, None
    for line in out.splitlines():
        head = re.match(r"^(?:pytorch )?(\[[\d, ]+\])", line)
        if head:
            shape = head.group(1)
        m = NORM_LINE.match(line)
        if m and shape:
            figures[(shape, m.group(1))] = (float(m.group(3)), float(m.group(4)) if m.group(4) else None)
    return figures


def norm_rows(table, build, repeats, with_torch):
    ours = parse_norm(run([os.path.join(build, "bench", "bench_norm"), "--threads", "1", "--repeats", str(repeats)]))
    theirs = parse_norm(run([PYTHON, os.path.join(ROOT, "bench", "bench_pytorch.py"), "norm", "--repeats",
                             str(repeats)], ONE_THREAD)) if with_torch else {}
    for (shape, layer), (ms, copy_fraction) in ours.items():
        table.add(f"{layer} {shape}, fwd + bwd, fraction of a copy", f"{ms:.4f} ms", "memcpy of the 5 tensors",
                  ratio_text=f"{copy_fraction:.2f}")
        if (shape, layer) in theirs:
            torch_ms = theirs[(shape, layer)][0]
            table.add(f"  {layer} {shape}, minidl / PyTorch (Python)", f"{ms:.4f} ms", f"{torch_ms:.4f} ms",
                      ms / torch_ms)


def conv_rows(table, build, repeats, with_torch):
    """Conv2d's layer and the digits' CNN step (bench_conv; bench_conv_pytorch.py), 1 thread."""
    conv = [os.path.join(build, "bench", "bench_conv"), "--threads", "1", "--repeats", str(repeats)]
    torch_cmd = [PYTHON, os.path.join(ROOT, "bench", "bench_conv_pytorch.py"), "--repeats", str(repeats)]
    ours = run(conv + ["--what", "layer"]) + run(conv + ["--what", "cnn"])
    theirs = run(torch_cmd + ["layer"], ONE_THREAD) + run(torch_cmd + ["cnn"], ONE_THREAD) if with_torch else ""
    conv_layer_rows(table, ours, theirs, 1, "cpu")
    conv_two_threads(table, conv, torch_cmd, with_torch)
    for m in re.finditer(r"^cnn (\w+) .*\| cpu ([\d.]+) us/step\s+floor ([\d.]+) us/step\s+ratio ([\d.]+)", ours, re.M):
        norm, us, floor, ratio = m.group(1), float(m.group(2)), float(m.group(3)), float(m.group(4))
        table.add(f"CNN step, batch 64, norm {norm}, 1 thread: cpu", f"{us:.0f} us", f"sgemm {floor:.0f} us", ratio)
        torch_cnn = re.search(rf"^pytorch cnn {norm} .*\| cpu ([\d.]+) us/step", theirs, re.M)
        if torch_cnn:
            torch_us = float(torch_cnn.group(1))
            table.add(f"  CNN step, norm {norm}, minidl / PyTorch (Python)", f"{us:.0f} us", f"{torch_us:.0f} us",
                      us / torch_us)


def conv_layer_rows(table, ours, theirs, threads, clock):
    """The Conv2d layer's rows from bench_conv's and bench_conv_pytorch.py's output on `threads`
    threads: against its floor and against PyTorch, in `clock` time ("cpu" or "wall")."""
    figure = (rf"^layer threads {threads}\s.*?{clock}\s+([\d.]+) ms\s+floor ([\d.]+) ms\s+ratio ([\d.]+)")
    layer = re.search(figure, ours, re.M)
    if not layer:
        return
    ms, floor, ratio = map(float, layer.groups())
    what = "1 thread" if threads == 1 else f"{threads} threads"
    table.add(f"Conv2d (32, 64, 32, 32) 3x3 64->64 pad 1, fwd + bwd, {what}: {clock}", f"{ms:.1f} ms",
              f"sgemm {floor:.1f} ms", ratio)
    torch_layer = re.search(rf"^pytorch layer threads {threads}\s.*?{clock} ([\d.]+) ms", theirs, re.M)
    if torch_layer:
        torch_ms = float(torch_layer.group(1))
        table.add(f"  Conv2d, {what}, minidl / PyTorch (Python, oneDNN): {clock}", f"{ms:.1f} ms",
                  f"{torch_ms:.1f} ms", ms / torch_ms)


def conv_two_threads(table, conv, torch_cmd, with_torch):
    """The Conv2d layer on 2 threads, in wall time (what a second thread is for)."""
    two = {"OMP_NUM_THREADS": "2", "OPENBLAS_NUM_THREADS": "2", "MKL_NUM_THREADS": "2"}
    ours = run(conv[:1] + ["--threads", "2"] + conv[3:] + ["--what", "layer"], two)  # conv: [program, --threads, 1, ...]
    theirs = run(torch_cmd + ["layer", "--threads", "2"], two) if with_torch else ""
    conv_layer_rows(table, ours, theirs, 2, "wall")


DIST_LINE = re.compile(r"^(\S+)\s+ranks (\d+)\s+threads/rank \d+\s+batch/rank \d+\s+([\d.]+) ms/step")


def no_communication_ceiling(mpirun, bench, repeats, steps):
    """What 2 ranks could reach if averaging the gradients cost nothing: two independent
    1-rank processes, each on half the global batch, started together on the two cores.
    Per norm (none and local BatchNorm1d, which communicate nothing else), the best over
    repeats of the slower process's step."""
    best = {}
    for _ in range(repeats):
        for norm, label in (("none", "none"), ("batch", "BatchNorm1d")):
            # Unbound: two mpiruns would each bind their one rank to the first core.
            cmd = mpirun + ["--bind-to", "none", "-np", "1", bench, "--threads", "1", "--batch", "256", "--norm", norm,
                            "--steps", str(steps)]
            pair = [subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True) for _ in range(2)]
            outs = [p.communicate()[0] for p in pair]
            if any(p.returncode != 0 for p in pair):
                sys.exit(f"bench_all: {' '.join(cmd)} failed:\n{outs[0]}\n{outs[1]}")
            step = max(float(m.group(3)) for out in outs for m in map(DIST_LINE.match, out.splitlines()) if m)
            best[label] = min(best.get(label, float("inf")), step)
    return best


def distributed_rows(table, build, repeats, steps):
    """Data parallelism on this machine: 1 rank against 2 ranks (1 thread each), interleaved."""
    bench = os.path.join(build, "bench", "bench_distributed")
    if not os.path.exists(bench):
        table.add("Data-parallel scaling", "not built (no MPI)")
        return
    mpirun = ["mpirun", "--allow-run-as-root", "--oversubscribe"]
    best = {}
    for _ in range(repeats):  # each repeat runs both, so both see the same load
        for ranks in (1, 2):
            out = run(mpirun + ["-np", str(ranks), bench, "--threads", "1", "--steps", str(steps)])
            for m in map(DIST_LINE.match, out.splitlines()):
                if m:
                    key = (m.group(1), int(m.group(2)))
                    best[key] = min(best.get(key, float("inf")), float(m.group(3)))
    ceiling = no_communication_ceiling(mpirun, bench, repeats, steps)
    for norm in ("none", "BatchNorm1d", "SyncBatchNorm"):
        one, two = best[(norm, 1)], best[(norm, 2)]
        table.add(f"Wide net, global batch 512, {norm}: 2 ranks / 1 rank, throughput", f"{two:.1f} ms/step (2 ranks)",
                  f"{one:.1f} ms/step (1 rank)", one / two)
        if norm in ceiling:
            pair = ceiling[norm]
            table.add("  the ceiling if averaging were free: two 1-rank processes at batch 256 side by side",
                      f"{pair:.1f} ms/step (each)", f"{one:.1f} ms/step (1 rank, 512)", one / pair)
    sync = best[("SyncBatchNorm", 2)] / best[("BatchNorm1d", 2)]
    table.add("  SyncBatchNorm / local BatchNorm1d, 2 ranks: step time", f"{best[('SyncBatchNorm', 2)]:.1f} ms",
              f"{best[('BatchNorm1d', 2)]:.1f} ms", sync)
    out = run(mpirun + ["-np", "2", bench, "--allreduce"])
    m = re.search(r"allreduce of ([\d.]+) MB on 2 ranks: minidl ([\d.]+) ms, MPI_Allreduce ([\d.]+) ms .*"
                  r"MPI_Iallreduce \+ MPI_Wait ([\d.]+) ms", out)
    if m:
        table.add(f"  Gradient allreduce, {m.group(1)} MB, 2 ranks: minidl / MPI_Allreduce", f"{m.group(2)} ms",
                  f"{m.group(3)} ms", float(m.group(2)) / float(m.group(3)))
        table.add("  The same, minidl / MPI_Iallreduce + MPI_Wait (an overlap's collective)", f"{m.group(2)} ms",
                  f"{m.group(4)} ms", float(m.group(2)) / float(m.group(4)))


def time_process(cmd, env_extra):
    """Wall and CPU (user + system) seconds of one run of cmd."""
    def children_cpu():
        usage = resource.getrusage(resource.RUSAGE_CHILDREN)
        return usage.ru_utime + usage.ru_stime
    start, cpu_start = time.perf_counter(), children_cpu()
    run(cmd, env_extra)
    return time.perf_counter() - start, children_cpu() - cpu_start


def process_rows(table, build, repeats, log, lesson_fig, with_torch):
    digits = [os.path.join(build, "apps", "digits", "digits"), "--threads", "1", "--seeds", "0", "--quiet"]
    commands = {"digits": digits, "sgemm": [os.path.join(build, "bench", "sgemm_lesson"), log]}
    torch_cpp = os.path.join(build, "bench", "torch_lesson")
    if os.path.exists(torch_cpp):
        commands["torch_cpp"] = [torch_cpp, "--threads", "1"]
    if with_torch:
        commands["torch_py"] = [PYTHON, os.path.join(ROOT, "bench", "bench_pytorch.py"), "process"]
    wall = {name: float("inf") for name in commands}
    cpu = dict(wall)
    for _ in range(repeats):  # interleaved: each repeat runs every process once
        for name, cmd in commands.items():
            w, c = time_process(cmd, ONE_THREAD)
            wall[name], cpu[name] = min(wall[name], w), min(cpu[name], c)

    def add(what, other, target=None):
        r, rc = wall["digits"] / wall[other], cpu["digits"] / cpu[other]
        table.add(what, f"{wall['digits']:.3f} s ({cpu['digits']:.3f})", f"{wall[other]:.3f} s ({cpu[other]:.3f})",
                  r, f"{target}x" if target else "", r <= target if target else None,
                  ratio_text=f"{r:.2f}x ({rc:.2f}x)")

    add("Whole digits process (3 runs, 1 thread) / bare sgemm program: wall (cpu)", "sgemm", PROCESS_FLOOR_TARGET)
    if "torch_cpp" in wall:
        add("Whole digits process / PyTorch C++ frontend (torch_lesson)", "torch_cpp", PROCESS_TORCH_TARGET)
    else:
        table.add("Whole digits process / PyTorch C++ frontend", "not built (no libtorch-dev)")
    if "torch_py" in wall:
        add("Whole digits process / PyTorch (Python) process", "torch_py")
    if with_torch:
        torch_ms, _ = pytorch_lesson(["--repeats", str(max(1, repeats // 2))])
        table.add("Lesson in process (train + evaluate), minidl / PyTorch (Python)", f"{lesson_fig['wall']:.1f} ms",
                  f"{torch_ms:.1f} ms", lesson_fig["wall"] / torch_ms)


def the_lesson(table, args, repeats, have_torch, everything):
    """The lesson's rows and the whole digits process's (its two targets); with everything,
    batch size 1 too."""
    with tempfile.TemporaryDirectory() as tmp:
        log = os.path.join(tmp, "lesson.gemm")
        lesson_fig = lesson_rows(table, args.build, repeats, log)
        if everything:
            batch1_rows(table, args.build, max(1, repeats // 2), have_torch)
        process_rows(table, args.build, repeats, log, lesson_fig, have_torch)


def all_but_charlm(table, args, repeats, have_torch):
    """The lesson's, the wide net's, the norms', the convolutions' and data parallelism's rows."""
    the_lesson(table, args, repeats, have_torch, everything=True)
    by_hand_rows(table, args.build, max(1, repeats // 2 + 1))
    wide_rows(table, args.build, 4 if args.quick else 20)
    norm_rows(table, args.build, repeats if args.quick else 4 * repeats, have_torch)
    conv_rows(table, args.build, repeats, have_torch)
    distributed_rows(table, args.build, max(1, repeats // 2 + 1), 3 if args.quick else 5)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--build", default=os.path.join(ROOT, "build"))
    parser.add_argument("--repeats", type=int, default=5, help="repeats of each figure (the minimum counts)")
    parser.add_argument("--quick", action="store_true", help="fewer repeats and steps: a smoke run")
    parser.add_argument("--markdown", action="store_true", help="print the table as docs/benchmarks.md holds it")
    parser.add_argument("--what", choices=("all", "charlm", "lesson"), default="all",
                        help="every row, charlm's alone, or the lesson's and the digits process's alone")
    args = parser.parse_args()
    repeats = 2 if args.quick else args.repeats
    have_torch = subprocess.run([PYTHON, "-c", "import torch"], capture_output=True).returncode == 0
    print(machine(args.build))
    print(f"Minima over {repeats} repeats; each figure and its floor taken in turn (in one process, or the"
          " processes interleaved). On a loaded machine, cpu ratios are the steadier." + "\n")
    table = Table()
    if args.what == "all":
        all_but_charlm(table, args, repeats, have_torch)
    if args.what == "lesson":
        the_lesson(table, args, repeats, have_torch, everything=False)
    else:
        charlm_rows(table, args.build, repeats, args.quick, have_torch)
    table.print(args.markdown)
    met, missed = table.verdicts()
    print(f"\nTargets: {met} of {met + len(missed)} met" + (f"; NOT met: {'; '.join(missed)}" if missed else ""))
    if not have_torch:
        print("\n(PyTorch rows left out: /usr/bin/python3 has no torch; bash scripts/setup.sh --with-torch)")


if __name__ == "__main__":
    main()
