#!/usr/bin/env python3
"""CPU test of the benchmark's scripts and command line (ctest bench_scripts, label cpu).

1. plot_results.py on the synthetic bench_fixture.csv (make_fixture.py says how it was built)
   writes its four PNGs into a temporary folder (valid PNG headers, not empty);
2. make_results_page.py finds the accuracy-matched configurations and target verdicts that the
   fixture was constructed to have, lists the failed row, and keeps a hand-written README.md
   unless --force;
3. zgemm_plot.py on the recorded ZGEMM run (bench/results/zgemm/run2_*.csv) writes its two
   PNGs, and its accuracy-matched pick there is the s the results page states;
4. with --bench PATH: ozdgemm_bench --help succeeds, a bad flag fails with status 1, and
   --dry-run plans the full preset's shapes without a GPU; run_bench.sh --preset full --dry-run
   stays inside its deadline.
"""

import argparse
import os
import re
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
BENCH_DIR = os.path.dirname(HERE)
FIXTURE = os.path.join(HERE, "bench_fixture.csv")
ENV = os.path.join(HERE, "env_fixture.txt")
failures = []


def check(cond, what):
    print(("ok   " if cond else "FAIL ") + what)
    if not cond:
        failures.append(what)


def run(cmd, **kw):
    return subprocess.run(cmd, capture_output=True, text=True, **kw)


def headline_row(page, phi, shape):
    for line in page.splitlines():
        if line.startswith(f"| {phi} | {shape} |"):
            return line
    return ""


def is_png(path):
    if not os.path.exists(path) or os.path.getsize(path) <= 10000:
        return False
    with open(path, "rb") as f:
        return f.read(8) == b"\x89PNG\r\n\x1a\n"


def check_plots(tmp):
    r = run([sys.executable, os.path.join(BENCH_DIR, "plot_results.py"), "--out-dir", tmp,
             FIXTURE])
    check(r.returncode == 0, f"plot_results.py exits 0 ({r.stderr.strip()[-300:]})")
    for suffix in ("accuracy", "accuracy_scaled", "stages", "speedup"):
        path = os.path.join(tmp, f"bench_fixture_{suffix}.png")
        check(is_png(path), f"{os.path.basename(path)} is a PNG of more than 10 kB")


def check_zgemm_plot(tmp):
    runs = os.path.join(BENCH_DIR, "results", "zgemm")
    csvs = [os.path.join(runs, name) for name in ("run2_small.csv", "run2_16k.csv")]
    r = run([sys.executable, os.path.join(BENCH_DIR, "zgemm_plot.py"), "--out-dir", tmp] + csvs)
    check(r.returncode == 0, f"zgemm_plot.py exits 0 ({r.stderr.strip()[-300:]})")
    for name in ("zgemm_speedup.png", "zgemm_accuracy.png"):
        check(is_png(os.path.join(tmp, name)), f"{name} is a PNG of more than 10 kB")
    sys.path.insert(0, BENCH_DIR)
    import zgemm_plot as zp
    rows = zp.load(csvs)
    case = [row for row in rows if row["phi"] == "0.5" and row["n"] == "4096"]
    pick = zp.matched(case, "ozdgemm", "fast")
    check(pick is not None and pick["s"] == "14",
          f"zgemm matched s at phi 0.5, n 4096, fast: 14 ({pick and pick['s']})")


def check_page(tmp):
    out = os.path.join(tmp, "README.md")
    cmd = [sys.executable, os.path.join(BENCH_DIR, "make_results_page.py"), FIXTURE, "--env", ENV,
           "--out", out]
    r = run(cmd)
    check(r.returncode == 0, f"make_results_page.py exits 0 ({r.stderr.strip()})")
    with open(out) as f:
        page = f.read()
    check("driver 999.99.99" in page and "commit: 0000000" in page,
          "page quotes the driver (from env.txt's nvidia-smi query) and the commit")
    # By construction (make_fixture.py): fast matches at s0 + 1 = 15, accurate at 14 (phi 0.5);
    # 18 and 17 at phi 4; n = 2048 meets its target (1.92x >= 1.0), n = 16384 misses 1.9x.
    row = headline_row(page, "0.5", "n=2048")
    check("1.89 (s=15)" in row and "1.92 (s=14)" in row and row.endswith("| 1.0 | yes |"),
          f"n=2048 phi 0.5: matched s=15 fast, s=14 accurate, target met: {row!r}")
    row = headline_row(page, "0.5", "n=16384")
    check("(s=15)" in row and "1.57 (s=14)" in row and row.endswith("| 1.9 | NO |"),
          f"n=16384 phi 0.5: target 1.9 missed: {row!r}")
    row = headline_row(page, "4", "n=16384")
    check("(s=18)" in row and "(s=17)" in row and row.endswith("| 1.4 | NO |"),
          f"n=16384 phi 4: the failed s=12 row is skipped, s=18/17 matched: {row!r}")
    row = headline_row(page, "0.5", "16384x16384x4096")
    check(row.endswith("| - | - |"), f"rectangular shape has no target: {row!r}")
    check(re.search(r"\| 0\.5 \| n=16384 \| ozdgemm s=14 accurate \| [^|]+ \| [^|]+ \| fused \(0\) \|",
                    page) is not None, "stage table reports the reduction as fused (0)")
    check("phi=4 n=16384 ozdgemm s=12 fast: ozdgemm::dgemm" in page, "failed row is listed")
    check("(bench_fixture_speedup.png)" in page, "page links the plots present next to it")

    r = run(cmd)
    check(r.returncode == 0, "a page it generated is regenerated without --force")
    hand = os.path.join(tmp, "hand", "README.md")
    os.makedirs(os.path.dirname(hand))
    with open(hand, "w") as f:
        f.write("# notes written by hand\n")
    r = run(cmd[:-1] + [hand])
    with open(hand) as f:
        kept = f.read() == "# notes written by hand\n"
    check(r.returncode == 1 and kept, "a hand-written README.md is kept without --force")


def check_program(bench, tmp):
    r = run([bench, "--help"])
    check(r.returncode == 0 and "--dry-run" in r.stdout, "ozdgemm_bench --help exits 0")
    r = run([bench, "--moduli", "30"])
    check(r.returncode == 1 and "bad moduli count" in r.stderr, "a bad --moduli exits 1")
    r = run([bench, "--dry-run", "--shapes", "1024,2048x2048x262144", "--moduli", "8-20",
             "--cublas-emu", "--stages"])
    check(r.returncode == 0 and "2 shapes x 29 methods" in r.stdout
          and "estimated total:" in r.stdout, f"--dry-run plans 2 shapes x 29 methods: {r.stdout}")
    # Both INT8 GEMM backends: every ozdgemm configuration twice (2 modes x 13 s x 2 + native).
    r = run([bench, "--dry-run", "--shapes", "1024", "--moduli", "8-20", "--int8-gemm",
             "cublas,lt"])
    check(r.returncode == 0 and "1 shapes x 53 methods" in r.stdout,
          f"--int8-gemm cublas,lt plans 53 methods: {r.stdout}")
    r = run([bench, "--int8-gemm", "cublas,fastest"])
    check(r.returncode == 1 and "bad INT8 GEMM backend 'fastest'" in r.stderr,
          "a bad --int8-gemm exits 1")
    env = dict(os.environ, OZDGEMM_BENCH=bench, OUT=os.path.join(tmp, "out"))
    r = run(["bash", os.path.join(BENCH_DIR, "run_bench.sh"), "--preset", "full", "--dry-run"],
            env=env)
    m = re.search(r"modelled total (\d+) s \(deadline (\d+) s\)", r.stdout)
    check(r.returncode == 0 and m is not None and int(m.group(1)) < int(m.group(2)),
          f"run_bench.sh --preset full --dry-run fits its deadline: {r.stdout[-200:]}")
    check(not os.path.exists(os.path.join(tmp, "out")), "--dry-run writes nothing to $OUT")


def check_backends():
    """Rows of both INT8 GEMM backends (methods ozdgemm and ozdgemm_lt) are ozdgemm rows; at the
    smallest matching s the faster one is the accuracy-matched pick."""
    sys.path.insert(0, BENCH_DIR)
    import bench_csv as bc

    def row(method, s, ms, err):
        return {"method": method, "mode": "fast", "moduli": str(s), "median_ms": str(ms),
                "max_rel_err": str(err), "max_scaled_err": str(err)}
    native = row("cublas_dgemm", "", 10.0, 1e-12)
    native["moduli"] = ""
    rows = [native, row("ozdgemm", 14, 8.0, 1e-11), row("ozdgemm_lt", 14, 7.0, 1e-11),
            row("ozdgemm", 15, 8.5, 5e-13), row("ozdgemm_lt", 15, 8.0, 5e-13),
            row("ozdgemm", 16, 9.0, 1e-13)]
    check(bc.is_oz(rows[1]) and bc.is_oz(rows[2]) and not bc.is_oz(native),
          "ozdgemm and ozdgemm_lt rows are ozdgemm rows, native is not")
    pick = bc.accuracy_matched(rows, "fast")
    check(pick is rows[4], f"accuracy-matched: s=15 (s=14 is less accurate), the faster "
          f"backend (ozdgemm_lt): {pick and (pick['method'], pick['moduli'])}")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bench", help="the ozdgemm_bench program")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        check_plots(tmp)
        check_zgemm_plot(tmp)
        check_page(tmp)
        check_backends()
        if args.bench:
            check_program(args.bench, tmp)
    print(f"{len(failures)} failure(s)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
