"""Reads the event files `digits --tensorboard` and `charlm --tensorboard` write with an
independent decoder, and checks them against the runs' CSVs:

  check_event_files.py --digits EXE --charlm EXE --work DIR

- the frames: CRC-32C recomputed here bit by bit (no table, unlike the writer's), and a
  corrupted byte in a length, a CRC or an event's data caught by the check;
- the events: parsed by the classes protoc generates from this folder's .proto files
  (Debian's protobuf-compiler and python3-protobuf), file_version first;
- every scalar equal to its CSV value to the bit (float32), the learning rate to the
  schedule's formula, each histogram to the --stats bins, the settings as text;
- the CSVs byte for byte the same with and without --tensorboard.
Exit 0 passed, 1 failed, 77 skipped (protoc or python3-protobuf missing; a failure under CI=true).
"""
import argparse
import csv
import math
import os
import shutil
import struct
import subprocess
import sys
from collections import defaultdict
from pathlib import Path

HERE = Path(__file__).resolve().parent


def skip(reason):
    if os.environ.get("CI") == "true":
        sys.exit(f"check_event_files: error: {reason}, and CI runs every test")
    print(f"check_event_files: skipped: {reason}")
    sys.exit(77)


def crc32c(data):
    crc = 0xFFFFFFFF
    for byte in data:
        crc ^= byte
        for _ in range(8):
            crc = (crc >> 1) ^ (0x82F63B78 if crc & 1 else 0)
    return crc ^ 0xFFFFFFFF


def masked(crc):
    return ((((crc >> 15) | (crc << 17)) & 0xFFFFFFFF) + 0xA282EAD8) & 0xFFFFFFFF


class CrcError(Exception):
    pass


def records(data):
    """The TFRecord frames' payloads; CrcError where a frame does not check."""
    at = 0
    while at < len(data):
        if len(data) - at < 12:
            raise CrcError(f"a frame header cut short at byte {at}")
        header = data[at:at + 8]
        (length,) = struct.unpack("<Q", header)
        (length_crc,) = struct.unpack("<I", data[at + 8:at + 12])
        if masked(crc32c(header)) != length_crc:
            raise CrcError(f"the length's CRC of the frame at byte {at} does not match")
        payload = data[at + 12:at + 12 + length]
        if len(payload) != length or len(data) < at + 16 + length:
            raise CrcError(f"the frame at byte {at} is cut short")
        (data_crc,) = struct.unpack("<I", data[at + 12 + length:at + 16 + length])
        if masked(crc32c(payload)) != data_crc:
            raise CrcError(f"the data's CRC of the frame at byte {at} does not match")
        yield payload
        at += 16 + length


def f32(value):
    return struct.pack("<f", float(value))


def run(command, cwd):
    result = subprocess.run(command, cwd=cwd, capture_output=True, text=True)
    if result.returncode != 0:
        sys.exit(f"check_event_files: {' '.join(map(str, command))} exited {result.returncode}:\n{result.stderr}")


class Checker:
    def __init__(self, event_pb2, string_type):
        self.pb = event_pb2
        self.string_type = string_type
        self.failures = []
        self.checked = 0

    def expect(self, ok, what):
        self.checked += 1
        if not ok and len(self.failures) < 20:
            self.failures.append(what)

    def events(self, run_dir):
        files = sorted(run_dir.glob("events.out.tfevents.*"))
        self.expect(len(files) == 1, f"{run_dir}: {len(files)} event files, expected one")
        events = []
        for payload in records(files[0].read_bytes()):
            event = self.pb.Event()
            event.ParseFromString(payload)
            events.append(event)
        self.expect(events and events[0].file_version == "brain.Event:2", f"{run_dir}: file_version is not first")
        return files[0], events[1:]

    def run_events(self, run_dir, csv_scalars, expected_lr, bins, settings_key):
        """csv_scalars: tag -> {step: CSV text}; expected_lr(step); bins: (step, tag) -> [(low, high, density)]."""
        path, events = self.events(run_dir)
        scalars, histograms, texts = defaultdict(dict), {}, []
        for event in events:
            for value in event.summary.value:
                kind = value.WhichOneof("value")
                if kind == "simple_value":
                    self.expect(event.step not in scalars[value.tag], f"{run_dir}: {value.tag} twice at {event.step}")
                    scalars[value.tag][event.step] = value.simple_value
                elif kind == "histo":
                    histograms[(event.step, value.tag)] = value.histo
                elif kind == "tensor":
                    texts.append((value.tag, value.metadata.plugin_data.plugin_name, value.tensor))
        for tag, rows in csv_scalars.items():
            logged = scalars.get(tag, {})
            self.expect(sorted(logged) == sorted(rows), f"{run_dir}: {tag} at steps {sorted(logged)}, CSV {sorted(rows)}")
            for step, text in rows.items():
                self.expect(step in logged and f32(logged[step]) == f32(text),
                            f"{run_dir}: {tag} at step {step}: {logged.get(step)} against the CSV's {text}")
        for step, lr in scalars.get("train/lr", {}).items():
            want = expected_lr(step)
            self.expect(math.isclose(lr, want, rel_tol=1e-6), f"{run_dir}: train/lr at step {step} is {lr}, not {want}")
        self.expect(sorted(scalars.get("train/lr", {})) == sorted(csv_scalars["train/loss"]), f"{run_dir}: lr steps")
        self.expect(sorted(histograms) == sorted(bins), f"{run_dir}: histograms {len(histograms)}, CSV {len(bins)}")
        for key, csv_bins in bins.items():
            h = histograms.get(key)
            if h is None:
                continue
            # Each bucket is its bin's share of the values: back to a density over the event's
            # own edges, against the CSV's (9 significant digits).
            edges = [h.min, *h.bucket_limit]
            densities = [b / (edges[i + 1] - edges[i]) for i, b in enumerate(h.bucket)]
            close = lambda a, b: math.isclose(a, b, rel_tol=1e-8, abs_tol=1e-300)
            self.expect(len(densities) == len(csv_bins) and close(h.min, csv_bins[0][0])
                        and all(close(d, density) and close(limit, high)
                                for d, limit, (_, high, density) in zip(densities, h.bucket_limit, csv_bins)),
                        f"{run_dir}: histogram {key} differs from the --stats bins")
        self.expect(len(texts) == 1 and texts[0][0] == "settings" and texts[0][1] == "text"
                    and texts[0][2].dtype == self.string_type
                    and settings_key in texts[0][2].string_val[0].decode(),
                    f"{run_dir}: the settings text is missing or lacks {settings_key}")
        return path

    def corruption_caught(self, path):
        data = bytearray(path.read_bytes())
        for at in (3, 9, 14, 40, len(data) // 2, len(data) - 1):
            broken = bytearray(data)
            broken[at] ^= 0x10
            try:
                for _ in records(bytes(broken)):
                    pass
                caught = False
            except CrcError:
                caught = True
            self.expect(caught, f"{path}: a flipped bit at byte {at} was not caught by the CRC check")


def read_csv(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def stats_bins(rows, run_key):
    """(run, seed) -> {(step, "layer/quantity"): [(low, high, density)]} of the --stats CSV's bins."""
    bins = defaultdict(lambda: defaultdict(list))
    for row in rows:
        if row["statistic"].startswith("bin:"):
            _, low, high = row["statistic"].split(":")
            key = (int(row["step"]), f"{row['layer']}/{row['quantity']}")
            bins[(row[run_key], row["seed"])][key].append((float(low), float(high), float(row["value"])))
    return bins


def check_program(checker, name, exe, args, work, val_columns, lr_of):
    """Runs exe with and without --tensorboard, then checks each run's events against the CSVs."""
    outputs = lambda d: ["--curves", d / "curves.csv", "--val-curves", d / "val.csv", "--stats", d / "stats.csv"]
    plain, logged = work / f"{name}_plain", work / f"{name}_logged"
    for d in (plain, logged):
        shutil.rmtree(d, ignore_errors=True)
        d.mkdir(parents=True)
    run([exe, *args, *outputs(plain)], work)
    run([exe, *args, *outputs(logged), "--tensorboard", logged / "tb"], work)
    for csv_name in ("curves.csv", "val.csv", "stats.csv"):
        checker.expect((plain / csv_name).read_bytes() == (logged / csv_name).read_bytes(),
                       f"{name}: {csv_name} differs with --tensorboard")
    scalars = defaultdict(lambda: defaultdict(dict))
    for row in read_csv(logged / "curves.csv"):
        scalars[(row["run"], row["seed"])]["train/loss"][int(row["step"])] = row["loss"]
    for row in read_csv(logged / "val.csv"):
        for column, tag in val_columns.items():
            scalars[(row["run"], row["seed"])][tag][int(row["step"])] = row[column]
    bins = stats_bins(read_csv(logged / "stats.csv"), "run")
    run_dirs = sorted(p.parent for p in (logged / "tb").glob("*/seed*/events.out.tfevents.*"))
    checker.expect(len(run_dirs) == len(scalars), f"{name}: {len(run_dirs)} run directories for {len(scalars)} runs")
    last = None
    for (run_name, seed), tags in scalars.items():
        last = checker.run_events(logged / "tb" / run_name / f"seed{seed}", tags, lr_of, bins[(run_name, seed)], '"lr"')
    return last


def refuses_a_file_for_a_directory(checker, name, exe, args, work):
    """--tensorboard naming a file: the runs train, the other outputs are written, exit 1 naming the path."""
    blocker = work / f"{name}_not_a_directory"
    blocker.write_text("a file")
    result = subprocess.run([exe, *args, "--curves", work / f"{name}_blocked.csv", "--tensorboard", blocker],
                            cwd=work, capture_output=True, text=True)
    checker.expect(result.returncode == 1 and f"cannot create the event file's directory {blocker}/" in result.stderr
                   and (work / f"{name}_blocked.csv").exists(),
                   f"{name} --tensorboard FILE: exit {result.returncode}, {result.stderr!r}")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--digits", required=True, type=lambda p: Path(p).resolve())
    parser.add_argument("--charlm", required=True, type=lambda p: Path(p).resolve())
    parser.add_argument("--work", required=True, type=lambda p: Path(p).resolve())
    args = parser.parse_args()
    protoc = shutil.which("protoc")
    if protoc is None:
        skip("protoc is not on PATH (apt-get install -y protobuf-compiler)")
    try:
        import google.protobuf  # noqa: F401
    except ImportError:
        skip(f"{sys.executable} has no google.protobuf (apt-get install -y python3-protobuf)")
    generated = args.work / "tensorboard_pb"
    generated.mkdir(parents=True, exist_ok=True)
    subprocess.run([protoc, f"-I{HERE}", f"--python_out={generated}", "event.proto", "summary.proto", "tensor.proto"],
                   cwd=HERE, check=True)
    sys.path.insert(0, str(generated))
    import event_pb2
    import tensor_pb2

    checker = Checker(event_pb2, tensor_pb2.DT_STRING)
    digits_lr = 0.05
    path = check_program(checker, "digits", args.digits,
                         ["--norm", "none,layer", "--seeds", "0,1", "--epochs", "2", "--jobs", "1", "--quiet",
                          "--stats-every", "10"],
                         args.work, {"val_loss": "val/loss", "val_accuracy": "val/accuracy"},
                         lambda step: struct.unpack("<f", f32(digits_lr))[0])
    checker.corruption_caught(path)
    refuses_a_file_for_a_directory(checker, "digits", args.digits, ["--norm", "none", "--seeds", "0", "--epochs", "1",
                                                                     "--quiet"], args.work)
    warmup, charlm_lr = 4, 5e-4  # LinearLR from 0.01 lr to lr over the warmup's steps
    check_program(checker, "charlm", args.charlm,
                  ["--norm", "layer,rms", "--seeds", "0,1", "--steps", "12", "--eval-every", "5", "--warmup",
                   str(warmup), "--layers", "1", "--width", "16", "--heads", "2", "--batch-size", "8", "--quiet",
                   "--threads", "1", "--stats-every", "6"],
                  args.work, {"val_loss": "val/loss"},
                  lambda step: charlm_lr * (0.01 + 0.99 * min(step - 1, warmup) / warmup))
    if checker.failures:
        print("\n".join(checker.failures))
        sys.exit(f"check_event_files: {len(checker.failures)} failed checks of {checker.checked}")
    print(f"check_event_files: {checker.checked} checks passed")


if __name__ == "__main__":
    main()
