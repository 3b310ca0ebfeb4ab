#!/usr/bin/python3
"""Fits the polynomials of minidl's float tanh (src/kernels/tanh_value.hpp).

Run with Debian's python3 (mpmath, numpy): /usr/bin/python3 scripts/fit_tanh.py
Prints, highest degree first and rounded to float32:
  tanh: p(s) ~ (tanh(x) - x) / x^3 with s = x^2, on |x| < 0.9 (7 terms), so that
        tanh(x) ~ x + x^3 p(x^2);
  exp:  q(r) ~ e^(2r) on |r| <= ln 2 / 4 (7 terms, degree 6), so that
        e^(2a) = 2^n q(r) with a = n ln 2 / 2 + r.
Both are Chebyshev fits (mpmath.chebyfit: near minimax in absolute error). The error of the
whole formula is measured, not predicted: `build/bench/bench_tanh --all-floats`.
"""
import mpmath as mp
import numpy as np

mp.mp.dps = 40
SWITCH = 0.9  # |x| below it takes the polynomial
TANH_TERMS = 7
EXP_TERMS = 7


def tanh_part(s):
    if s == 0:
        return mp.mpf(-1) / 3
    x = mp.sqrt(s)
    return (mp.tanh(x) - x) / x**3


def as_floats(coefficients):
    return ", ".join(repr(float(np.float32(float(c)))) for c in coefficients)


def main():
    tanh_poly = mp.chebyfit(tanh_part, [0, SWITCH * SWITCH], TANH_TERMS)
    quarter_ln2 = float(mp.log(2)) / 4 * 1.001  # the reduction's |r|, with room for its rounding
    exp_poly = mp.chebyfit(lambda r: mp.exp(2 * r), [-quarter_ln2, quarter_ln2], EXP_TERMS)
    print("tanh:", as_floats(tanh_poly))
    print("exp: ", as_floats(exp_poly))


if __name__ == "__main__":
    main()
