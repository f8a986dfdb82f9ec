#!/usr/bin/env python3
"""Plots CSVs written by zgemm_bench (--csv) into PNGs.

    /usr/bin/python3 bench/zgemm_plot.py [--out-dir DIR] small.csv [16k.csv ...]

Rows of all the CSVs are pooled (one bench run split by size). It writes, into DIR (default
the first CSV's folder):
    zgemm_speedup.png   time of native cublasZgemm / time, against n, one panel per phi:
                        cublasZgemm3m, cuBLAS's emulation, the certified default, and the
                        accuracy-matched fixed s (the smallest s whose rel and scaled errors
                        are no worse than native's) of each form and scaling; red crosses:
                        the issue's targets
    zgemm_accuracy.png  rel = max |C-R|/|R| against s, one panel per phi, at the n with the
                        most moduli counts (the largest of those), fast and accurate scaling;
                        dotted: native cublasZgemm's and cublasZgemm3m's errors

Empty cells are skipped. Needs matplotlib (Debian: python3-matplotlib).
"""

import argparse
import csv
import math
import os
import sys

try:
    import matplotlib
except ImportError:
    sys.exit("zgemm_plot: needs matplotlib (Debian: apt install python3-matplotlib)")

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402  (after the backend is chosen)

TARGETS = {4096: 1.6, 8192: 2.0, 16384: 2.4}  # the issue's, at matched s
ERR_FLOOR = 1e-18  # an exact result is drawn here on the log axis


def num(row, key):
    try:
        return float(row.get(key) or "nan")
    except ValueError:
        return math.nan


def load(paths):
    rows = []
    for path in paths:
        with open(path, newline="") as f:
            rows.extend(csv.DictReader(f))
    return rows


def matched(case, method, mode):
    """The row of the smallest fixed s no worse than native in both metrics, or None."""
    native = next((r for r in case if r["method"] == "zgemm"), None)
    if native is None:
        return None
    fixed = [r for r in case if r["method"] == method and r["mode"] == mode]
    for r in sorted(fixed, key=lambda r: num(r, "s")):
        if num(r, "rel") <= num(native, "rel") and num(r, "scaled") <= num(native, "scaled"):
            return r
    return None


def speedup_plot(rows, out):
    phis = sorted({num(r, "phi") for r in rows})
    fig, axes = plt.subplots(1, len(phis), figsize=(5.5 * len(phis), 4.2), squeeze=False)
    lines = [("cublasZgemm3m", lambda c: next((r for r in c if r["method"] == "zgemm3m"), None),
              "tab:grey", "--"),
             ("cuBLAS emulation", lambda c: next((r for r in c if r["method"] == "cublas_emu"),
                                                 None), "tab:purple", ":"),
             ("certified (default)",
              lambda c: next((r for r in c if r["method"] == "ozdgemm certified"), None),
              "tab:orange", "-"),
             ("matched s, Karatsuba, fast", lambda c: matched(c, "ozdgemm", "fast"),
              "tab:blue", "-"),
             ("matched s, four-product, fast", lambda c: matched(c, "ozdgemm four", "fast"),
              "tab:cyan", "-"),
             ("matched s, accurate", lambda c: matched(c, "ozdgemm", "accurate"),
              "tab:green", "-")]
    for ax, phi in zip(axes[0], phis):
        sizes = sorted({int(num(r, "n")) for r in rows if num(r, "phi") == phi})
        cases = {n: [r for r in rows if num(r, "phi") == phi and int(num(r, "n")) == n]
                 for n in sizes}
        for label, pick, colour, style in lines:
            xs, ys = [], []
            for n in sizes:
                r = pick(cases[n])
                if r is not None and math.isfinite(num(r, "speedup")):
                    xs.append(n)
                    ys.append(num(r, "speedup"))
            if xs:
                width = 2.5 if label.startswith("matched s, K") else 1.5
                ax.plot(xs, ys, style, marker="o", color=colour, lw=width, label=label)
        tx = [n for n in sizes if n in TARGETS]
        ax.plot(tx, [TARGETS[n] for n in tx], "x", color="red", ms=9, mew=2, label="target")
        ax.axhline(1.0, color="black", lw=0.8)
        ax.set_xscale("log", base=2)
        ax.set_xticks(sizes, [str(n) for n in sizes])
        ax.set_xlabel("n (square, op N)")
        ax.set_ylabel("speed-up over native cublasZgemm")
        ax.set_title(f"phi = {phi:g}")
        ax.grid(alpha=0.3)
    axes[0][0].legend(fontsize=7, loc="upper left")
    fig.tight_layout()
    fig.savefig(out, dpi=110)
    plt.close(fig)


def accuracy_plot(rows, out):
    counts = {}
    for r in rows:
        if r["method"] == "ozdgemm":
            counts.setdefault(int(num(r, "n")), set()).add(num(r, "s"))
    largest = max(counts, key=lambda n: (len(counts[n]), n))
    phis = sorted({num(r, "phi") for r in rows})
    fig, axes = plt.subplots(1, len(phis), figsize=(5.5 * len(phis), 4.2), squeeze=False)
    for ax, phi in zip(axes[0], phis):
        case = [r for r in rows if num(r, "phi") == phi and int(num(r, "n")) == largest]
        for method, mode, colour, marker in [("ozdgemm", "fast", "tab:blue", "o"),
                                             ("ozdgemm", "accurate", "tab:green", "^")]:
            pts = sorted((num(r, "s"), max(num(r, "rel"), ERR_FLOOR)) for r in case
                         if r["method"] == method and r["mode"] == mode)
            if pts:
                ax.plot(*zip(*pts), marker=marker, color=colour, label=f"fixed s, {mode}")
        for method, colour, label in [("zgemm", "black", "native cublasZgemm"),
                                      ("zgemm3m", "tab:grey", "cublasZgemm3m")]:
            r = next((r for r in case if r["method"] == method), None)
            if r is not None:
                ax.axhline(max(num(r, "rel"), ERR_FLOOR), color=colour, ls=":", label=label)
        ax.set_yscale("log")
        ax.set_xticks(sorted(counts[largest]))
        ax.set_xlabel("moduli count s")
        ax.set_ylabel("max |C-R| / |R| (sampled)")
        ax.set_title(f"phi = {phi:g}, n = {largest}")
        ax.grid(alpha=0.3)
    axes[0][0].legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(out, dpi=110)
    plt.close(fig)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out-dir")
    ap.add_argument("csv", nargs="+")
    args = ap.parse_args()
    rows = [r for r in load(args.csv) if r.get("method")]
    if not rows:
        sys.exit("zgemm_plot: no rows")
    out_dir = args.out_dir or os.path.dirname(os.path.abspath(args.csv[0]))
    os.makedirs(out_dir, exist_ok=True)
    speedup_plot(rows, os.path.join(out_dir, "zgemm_speedup.png"))
    accuracy_plot(rows, os.path.join(out_dir, "zgemm_accuracy.png"))
    print(f"zgemm_plot: wrote zgemm_speedup.png and zgemm_accuracy.png to {out_dir}")


if __name__ == "__main__":
    main()
