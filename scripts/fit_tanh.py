#!/usr/bin/python3
"""Fits the polynomials of minidl's float tanh (src/kernels/tanh_value.hpp).

Run with Debian's python3 (mpmath, numpy): /usr/bin/python3 scripts/fit_tanh.py
Prints, highest degree first and rounded to float32:
  tanh: p(s) ~ (tanh(x) - x) / x^3 with s = x^2, on |x| < 0.9 (9 terms), so that
        tanh(x) ~ x + x^3 p(x^2);
  exp:  h(r) ~ (e^r - 1 - r) / r^2 on |r| <= ln 2 / 2 (6 terms), so that
        e^r ~ 1 + r + r^2 h(r), a degree-7 polynomial.
Both are Chebyshev fits (mpmath.chebyfit: near minimax in absolute error). The error of the
whole formula is measured, not predicted: `build/bench/bench_tanh --all-floats`.
"""
import mpmath as mp
import numpy as np

mp.mp.dps = 40
SWITCH = 0.9  # |x| below it takes the polynomial


def tanh_part(s):
    if s == 0:
        return mp.mpf(-1) / 3
    x = mp.sqrt(s)
    return (mp.tanh(x) - x) / x**3


def exp_part(r):
    if r == 0:
        return mp.mpf(1) / 2
    return (mp.exp(r) - 1 - r) / r**2


def as_floats(coefficients):
    return ", ".join(repr(float(np.float32(float(c)))) for c in coefficients)


def main():
    tanh_poly = mp.chebyfit(tanh_part, [0, SWITCH * SWITCH], 9)
    half_ln2 = float(mp.log(2)) / 2 * 1.001
    exp_poly = mp.chebyfit(exp_part, [-half_ln2, half_ln2], 6)
    print("tanh:", as_floats(tanh_poly))
    print("exp: ", as_floats(exp_poly))


if __name__ == "__main__":
    main()
