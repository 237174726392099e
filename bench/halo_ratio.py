#!/usr/bin/env python3
"""halo_ratio.py: halo / local rows of a row-block split of the Holstein-Hubbard basis (notes/multi-gpu.md).

Electron-major order: row = (up * n_down + down) * n_phonon + phonon. Up-spin hops keep the down and
phonon parts, so a rank's halo is (up configurations reachable from its own, outside its rows) x
n_down x n_phonon. This counts that ratio on the up-spin configuration graph (ring of L sites,
periodic), for the lexicographic order that the generator uses and for the best reordering that
simulated annealing finds. Prints one line per model and rank count.

    /usr/bin/python3 bench/halo_ratio.py
"""
import itertools
import random


def graph(L, N):
    cs = list(itertools.combinations(range(L), N))
    idx = {c: i for i, c in enumerate(cs)}
    adj = [set() for _ in cs]
    for i, c in enumerate(cs):
        s = set(c)
        for p in c:
            for q in ((p + 1) % L, (p - 1) % L):
                if q not in s:
                    adj[i].add(idx[tuple(sorted((s - {p}) | {q}))])
    return cs, adj


def halo_ratios(order, adj, P, w):
    """Halo / local rows per rank; every up configuration stands for w rows."""
    n = len(order)
    tot = n * w
    pos = {u: i for i, u in enumerate(order)}
    res = []
    for r in range(P):
        a, b = tot * r // P, tot * (r + 1) // P
        need = {}
        for i in range(n):
            lo, hi = max(a, i * w), min(b, (i + 1) * w)
            if lo >= hi:
                continue
            for v in adj[order[i]]:
                j = pos[v]
                need.setdefault(j, []).append((j * w + lo - i * w, j * w + hi - i * w))
        cnt = 0
        for iv in need.values():
            iv.sort()
            merged = []
            for s, e in iv:
                if merged and s <= merged[-1][1]:
                    merged[-1][1] = max(merged[-1][1], e)
                else:
                    merged.append([s, e])
            for s, e in merged:
                cnt += (e - s) - max(0, min(e, b) - max(s, a))
        res.append(cnt / (b - a))
    return res


def anneal(adj, P, iters, seed=1):
    rnd = random.Random(seed)
    n = len(adj)
    order = list(range(n))
    cur = best = max(halo_ratios(order, adj, P, P * 10))
    T = 0.5
    for _ in range(iters):
        i, j = rnd.randrange(n), rnd.randrange(n)
        order[i], order[j] = order[j], order[i]
        v = max(halo_ratios(order, adj, P, P * 10))
        if v <= cur or rnd.random() < 2.718 ** ((cur - v) / T):
            cur = v
            best = min(best, v)
        else:
            order[i], order[j] = order[j], order[i]
        T *= 0.9997
    return best


if __name__ == "__main__":
    for L, Nu in [(6, 3), (7, 4), (9, 5)]:
        cs, adj = graph(L, Nu)
        for P in (2, 4, 8):
            lex = halo_ratios(list(range(len(cs))), adj, P, 1000)
            line = f"L={L} up={Nu} ({len(cs)} configs) P={P}: lexicographic max {max(lex):.2f}"
            if len(cs) <= 40 and P <= 4:
                line += f", annealed max {anneal(adj, P, 4000):.2f}"
            print(line, flush=True)
