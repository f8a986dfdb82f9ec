"""The host time an intercepted call adds where the library runs the native routine.

For each size: `calls` float64 (or complex128) matmuls enqueued back to back behind one large
matmul (so the small ones queue rather than run as they come), timed on the host clock: the host
time per call, which the library's decision adds to. Run it once without the library and once
preloaded (no settings: sizes the model keeps native), and compare:

    python3 bench/call_overhead.py METHOD [n ...]
    LD_PRELOAD=build/libozdgemm.so python3 bench/call_overhead.py default 64 2048

Prints `dtype,n,method,host_us_per_call` lines (the median of 5 batches of calls).
"""
import sys
import time

import torch


def per_call_us(f, busy, calls=200, batches=5):
    out = []
    for _ in range(batches):
        torch.cuda.synchronize()
        busy()  # keeps the GPU busy while the calls are enqueued
        t0 = time.perf_counter()
        for _ in range(calls):
            f()
        out.append((time.perf_counter() - t0) / calls * 1e6)
    torch.cuda.synchronize()
    out.sort()
    return out[len(out) // 2]


def main():
    method = sys.argv[1]
    sizes = [int(x) for x in sys.argv[2:]] or [64, 2048]
    big = torch.rand(8192, 8192, dtype=torch.float64, device="cuda")
    busy = lambda: big @ big  # noqa: E731  about 20 ms of FP64 work on an H100 or H200
    for dtype in (torch.float64, torch.complex128):
        for n in sizes:
            a = torch.rand(n, n, dtype=dtype, device="cuda")
            b = torch.rand(n, n, dtype=dtype, device="cuda")
            c = torch.empty(n, n, dtype=dtype, device="cuda")
            f = lambda: torch.matmul(a, b, out=c)  # noqa: E731
            f()
            # Fewer large calls: 20 at 2048 fit in the busy matmul's time; larger ones may
            # outlast it, which leaves the host's enqueue time as it is (the queue is not full).
            calls = 200 if n <= 1024 else 20
            us = per_call_us(f, busy, calls)
            name = "float64" if dtype == torch.float64 else "complex128"
            print(f"{name},{n},{method},{us:.1f}", flush=True)


if __name__ == "__main__":
    main()
