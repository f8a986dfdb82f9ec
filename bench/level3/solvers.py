"""cuSOLVER's Cholesky (potrf) and LU solve (getrf + getrs) through CuPy, float64, timed and
checked: one CSV line per solver and size, `solver,n,method,median_ms,residual`.

    python3 bench/level3/solvers.py METHOD N...

Run by run_level3.sh with and without LD_PRELOAD=libozdgemm.so; METHOD is only the label.
potrf factors A = M M^T + n I (M uniform in [-0.5, 0.5)), residual ||L L^T - A||_F / ||A||_F;
the solve takes a diagonally dominant A and residual ||A x - b||_2 / (||A||_F ||x||_2).
Median of 3 timed calls after one untimed call (the library learns each block shape's count).
"""
import sys
import time

import cupy as cp


def timed(f, reps=3):
    f()
    cp.cuda.Device().synchronize()
    ms = []
    out = None
    for _ in range(reps):
        t0 = time.perf_counter()
        out = f()
        cp.cuda.Device().synchronize()
        ms.append((time.perf_counter() - t0) * 1e3)
    ms.sort()
    return ms[len(ms) // 2], out


def main():
    method = sys.argv[1]
    for n in (int(x) for x in sys.argv[2:]):
        rng = cp.random.default_rng(1)
        m = rng.random((n, n), dtype=cp.float64) - 0.5
        a = m @ m.T + n * cp.eye(n, dtype=cp.float64)
        del m
        ms, l = timed(lambda: cp.linalg.cholesky(a))
        res = float(cp.linalg.norm(l @ l.T - a) / cp.linalg.norm(a))
        print(f"potrf,{n},{method},{ms:.2f},{res:.3e}", flush=True)
        del l
        a = rng.random((n, n), dtype=cp.float64) - 0.5 + n * 0.01 * cp.eye(n, dtype=cp.float64)
        b = rng.random((n, 1), dtype=cp.float64) - 0.5
        ms, x = timed(lambda: cp.linalg.solve(a, b))
        res = float(cp.linalg.norm(a @ x - b) / (cp.linalg.norm(a) * cp.linalg.norm(x)))
        print(f"getrf,{n},{method},{ms:.2f},{res:.3e}", flush=True)
        del a, b, x
        cp.get_default_memory_pool().free_all_blocks()


if __name__ == "__main__":
    main()
