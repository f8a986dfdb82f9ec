#!/usr/bin/env python3
"""Plots and a short page from bench/accuracy_report's CSV.

  accuracy_plot.py accuracy.csv [--out DIR] [--commit C]

Writes DIR/README.md (a table per size: native, cuBLAS emulation, auto at both targets with
s_auto and the oracle s) and DIR/accuracy_<n>_<mode>.png (max scaled error against s for every
set, native's level as a dashed line, auto's pick as a marker). Needs matplotlib for the PNGs;
the page is written without it.
"""
import argparse
import csv
import math
import os
import sys
from collections import defaultdict


def load(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def fnum(x):
    try:
        return float(x)
    except (TypeError, ValueError):
        return math.nan


def page(rows, commit):
    out = ["# Accuracy report", "",
           f"Commit {commit}. Errors on a double-double reference at sampled entries of C: "
           "rel = max |C-R|/|R|, scaled = max |C-R|/(|A||B|). s_auto: the moduli count auto "
           "chose (0: it ran native DGEMM); oracle: the smallest fixed s whose measured errors "
           "met the target (native: <= native DGEMM's in both metrics; max: <= those at s = 20).",
           ""]
    by_size = defaultdict(list)
    for r in rows:
        by_size[(r["m"], r["n"], r["k"])].append(r)
    for size in sorted(by_size, key=lambda t: (int(t[2]), int(t[0]))):
        rs = by_size[size]
        out += [f"## {size[0]} x {size[1]} x {size[2]}", "",
                "| set | native rel | native scaled | cuBLAS emu rel | cuBLAS emu scaled | mode | "
                "target | s_auto | oracle | auto rel | auto scaled |",
                "|---|---|---|---|---|---|---|---|---|---|---|"]
        sets = []
        for r in rs:
            if r["set"] not in sets:
                sets.append(r["set"])
        for st in sets:
            srs = [r for r in rs if r["set"] == st]
            nat = next((r for r in srs if r["method"] == "cublas_dgemm"), None)
            emu = next((r for r in srs if r["method"] == "cublas_emu_dynamic"), None)
            for r in srs:
                if r["method"] not in ("ozdgemm_auto", "ozdgemm_certified"):
                    continue
                out.append("| {} | {:.2e} | {:.2e} | {} | {} | {} | {} | {} | {} | {:.2e} | {:.2e} |".format(
                    st, fnum(nat["max_rel"]) if nat else math.nan,
                    fnum(nat["max_scaled"]) if nat else math.nan,
                    f"{fnum(emu['max_rel']):.2e}" if emu else "-",
                    f"{fnum(emu['max_scaled']):.2e}" if emu else "-",
                    r["mode"],
                    r["target"] + (" (certified: s)" if r["method"] == "ozdgemm_certified" else ""),
                    r["s"], r["s_oracle"], fnum(r["max_rel"]),
                    fnum(r["max_scaled"])))
        out.append("")
    return "\n".join(out) + "\n"


def plots(rows, outdir):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("accuracy_plot: matplotlib not available; no PNGs", file=sys.stderr)
        return []
    made = []
    groups = defaultdict(list)
    for r in rows:
        groups[(r["n"], r["k"])].append(r)
    for (n, k), rs in groups.items():
        for mode in ("fast", "accurate"):
            fig, ax = plt.subplots(figsize=(8, 5))
            sets = []
            for r in rs:
                if r["set"] not in sets:
                    sets.append(r["set"])
            for st in sets:
                fx = sorted((int(r["s"]), fnum(r["max_scaled"])) for r in rs
                            if r["set"] == st and r["method"] == "ozdgemm_fixed" and r["mode"] == mode)
                if not fx:
                    continue
                line, = ax.semilogy([s for s, _ in fx], [e for _, e in fx], marker=".", label=st)
                nat = next((r for r in rs if r["set"] == st and r["method"] == "cublas_dgemm"), None)
                if nat:
                    ax.axhline(fnum(nat["max_scaled"]), color=line.get_color(), ls="--", lw=0.8)
                for r in rs:
                    if (r["set"] == st and r["method"] == "ozdgemm_auto" and r["mode"] == mode
                            and r["target"] == "native" and int(r["s"]) > 0):
                        ax.plot([int(r["s"])], [fnum(r["max_scaled"])], marker="o", ms=9,
                                mfc="none", color=line.get_color())
            ax.set_xlabel("moduli count s")
            ax.set_ylabel("max |C-R| / (|A||B|)")
            ax.set_title(f"ozdgemm {mode}, n = {n}, k = {k}: dashed = native DGEMM, o = auto (native)")
            ax.grid(True, which="both", alpha=0.3)
            ax.legend(fontsize=8)
            name = f"accuracy_{n}x{k}_{mode}.png"
            fig.tight_layout()
            fig.savefig(os.path.join(outdir, name), dpi=110)
            plt.close(fig)
            made.append(name)
    return made


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("csv")
    ap.add_argument("--out", default=".")
    ap.add_argument("--commit", default="unknown")
    a = ap.parse_args()
    rows = load(a.csv)
    os.makedirs(a.out, exist_ok=True)
    text = page(rows, a.commit)
    made = plots(rows, a.out)
    if made:
        text += "\n" + "\n".join(f"![{m}]({m})" for m in made) + "\n"
    with open(os.path.join(a.out, "README.md"), "w") as f:
        f.write(text)
    print(f"accuracy_plot: {len(rows)} rows, {len(made)} plots -> {a.out}")


if __name__ == "__main__":
    main()
