#!/usr/bin/env python3
"""exsum_ref.py -- the exact accumulator (core/pl_exsum.h, [solver] reproducible) against exact rational arithmetic:
every sum (and every dot product of rounded products) of adversarial inputs -- cancellation across the whole double
range, subnormals, ties at the rounding point, partial sums beyond DBL_MAX whose total is finite, inf and NaN, empty
and zero sums -- must be the exact sum rounded once to nearest-even (Python's Fraction -> float), bit for bit, and
every order and every split into parts combined as ranks or threads combine them (exsum_sum's lines) must give
those bits; each input also runs a second time shuffled.

usage: exsum_ref.py EXSUM_SUM     exit 0 = pass, 1 = fail"""
import math
import os
import random
import struct
import subprocess
import sys
import tempfile
from fractions import Fraction

MAX = sys.float_info.max
TINY = 5e-324  # 2^-1074


def exact(terms):
    """the exact sum rounded once (IEEE special values as addition gives them)"""
    if any(math.isnan(t) for t in terms) or (math.inf in terms and -math.inf in terms):
        return math.nan
    if math.inf in terms or -math.inf in terms:
        return math.inf if math.inf in terms else -math.inf
    s = sum((Fraction(t) for t in terms), Fraction(0))
    try:
        return float(s)  # correctly rounded (integer true division)
    except OverflowError:
        return math.inf if s > 0 else -math.inf


def bits(x):
    return struct.pack(">d", x).hex()  # the 64 bits as one number, as exsum_sum prints them


def run(exe, tmp, mode, vals):
    path = os.path.join(tmp, "v.bin")
    with open(path, "wb") as f:
        f.write(struct.pack(f"={len(vals)}d", *vals))
    p = subprocess.run([exe, mode, path], capture_output=True, text=True, check=True)
    return [line.split() for line in p.stdout.splitlines()]


def cases():
    r = random.Random(30)
    yield "tie to even, down", [1.0, 2.0 ** -53]
    yield "tie to even, up", [1.0 + 2.0 ** -52, 2.0 ** -53]
    yield "just above the tie", [1.0, 2.0 ** -53, TINY]
    yield "just below the tie", [1.0, 2.0 ** -53, -TINY]
    yield "partial sums beyond DBL_MAX, total finite", [MAX, MAX, -MAX, MAX / 2, -MAX / 2]
    yield "overflow to inf", [MAX, MAX / 2 ** 52]
    yield "cancellation to the smallest subnormal", [1e308, 1.0, -1e308, TINY, -1.0]
    yield "subnormals into the normal range", [TINY * r.randrange(1, 2 ** 52) for _ in range(1000)]
    yield "empty", []
    yield "exact zero", [1.0, -1.0, 3.5, -3.5]
    yield "inf", [1.0, math.inf, -5.0]
    yield "inf - inf", [math.inf, 2.0, -math.inf]
    yield "nan", [1.0, math.nan]
    big = [r.choice((-1, 1)) * math.ldexp(r.random(), r.randrange(-1074, 1000)) for _ in range(3000)]
    yield "the whole exponent range, cancelling to a remainder", big + [-x for x in big[:2990]]
    yield "a sum of a million terms", [r.gauss(0, 1) * 10.0 ** r.randrange(-20, 20) for _ in range(1_000_000)]
    ill = [r.gauss(0, 1) * 2.0 ** r.randrange(0, 200) for _ in range(5000)]
    yield "ill-conditioned (condition ~1e60)", ill + [-x for x in ill] + [1e-10, 3e-30]


def dot_cases():
    r = random.Random(31)
    n = 20000
    x = [r.gauss(0, 1) for _ in range(n)]
    y = [r.gauss(0, 1) for _ in range(n)]
    yield "random", x, y
    yield "cancelling", x + x, y + [-t for t in y]
    yield "tiny and huge products", [r.choice((1e-200, 1e150, 1.0)) * t for t in x], y
    yield "squares (a norm)", x, x


def check(exe, tmp, name, mode, vals, terms):
    want = bits(exact(terms))
    fail = 0
    for shuffled in (False, True):
        v = vals
        if shuffled:  # the same terms in another order
            idx = list(range(len(terms)))
            random.Random(7).shuffle(idx)
            v = [vals[i] for i in idx] if mode == "sum" else ([vals[i] for i in idx] +
                                                              [vals[len(terms) + i] for i in idx])
        got = run(exe, tmp, mode, v)
        bad = [f"{how} {b}" for how, b in got if b != want]
        ok = not bad and len(got) == 15
        fail |= 0 if ok else 1
        print(f"{'ok' if ok else 'FAIL'}: {mode} {name}{' (shuffled)' if shuffled else ''}: {len(terms)} terms, "
              f"{exact(terms)!r} = {want} in {len(got)} orders and splits{'; got ' + ', '.join(bad[:4]) if bad else ''}")
    return fail


def main():
    exe = sys.argv[1]
    fail = 0
    with tempfile.TemporaryDirectory() as tmp:
        for name, v in cases():
            fail |= check(exe, tmp, name, "sum", v, v)
        for name, x, y in dot_cases():
            fail |= check(exe, tmp, name, "dot", x + y, [a * b for a, b in zip(x, y)])
    print("FAIL" if fail else "PASS")
    return 1 if fail else 0


if __name__ == "__main__":
    sys.exit(main())
