"""Holds PyTorch to the instruction set of the OpenBLAS core type a benchmark run forces.

OPENBLAS_CORETYPE picks minidl's products and PyTorch's (Debian's torch calls the system
BLAS), but PyTorch's convolutions go through oneDNN, which picks its kernels by CPU: under
OPENBLAS_CORETYPE=Haswell on an AVX-512 machine they would run AVX-512 code against minidl's
AVX2, which no AVX2 machine (Zen 2) runs. Importing this module before torch caps oneDNN
(ONEDNN_MAX_CPU_ISA) and ATen's vector code (ATEN_CPU_CAPABILITY) at that core type's
instruction set; a value already in the environment is kept.
"""
import os

# OpenBLAS core type -> (oneDNN's cap, ATen's capability); AVX-512 core types: no cap.
CAPS = {
    "Haswell": ("AVX2", "avx2"),
    "Zen": ("AVX2", "avx2"),
    "Sandybridge": ("AVX", "default"),
}

core = os.environ.get("OPENBLAS_CORETYPE", "")
if core in CAPS:
    os.environ.setdefault("ONEDNN_MAX_CPU_ISA", CAPS[core][0])
    os.environ.setdefault("ATEN_CPU_CAPABILITY", CAPS[core][1])


def describe():
    """The caps in force, for a benchmark's header line."""
    return (f"oneDNN ISA cap {os.environ.get('ONEDNN_MAX_CPU_ISA', 'none (its best)')}, "
            f"ATen capability {os.environ.get('ATEN_CPU_CAPABILITY', 'its default')}")
