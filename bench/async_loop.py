"""A program that queues GPU work ahead of its host work, as the default must let it.

Per iteration: one float64 matmul of n x n x n, 200 small kernels, then `host_ms` of host work
(a busy loop). With no host wait inside the matmul, the host's work overlaps the GPU's and an
iteration takes about the larger of the two; a call that waits for the GPU serialises them.
Run it once without the library and once preloaded, and compare the printed times:

    python3 bench/async_loop.py [n] [iterations] [host_ms]
    LD_PRELOAD=build/libozdgemm.so OZDGEMM_MODE=emulate python3 bench/async_loop.py
"""
import os
import sys
import time

import torch


def busy(ms):
    end = time.perf_counter() + ms / 1000.0
    while time.perf_counter() < end:
        pass


def main():
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 8192
    iterations = int(sys.argv[2]) if len(sys.argv) > 2 else 20
    host_ms = float(sys.argv[3]) if len(sys.argv) > 3 else 12.0
    g = torch.Generator(device="cuda").manual_seed(1)
    a = torch.rand(n, n, dtype=torch.float64, device="cuda", generator=g) - 0.5
    b = torch.rand(n, n, dtype=torch.float64, device="cuda", generator=g) - 0.5
    small = torch.zeros(256, dtype=torch.float32, device="cuda")
    for _ in range(3):  # warm-up: the library's first call of a shape may wait once
        c = a @ b
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    for _ in range(iterations):
        c = a @ b
        for _ in range(200):
            small.add_(1.0)
        busy(host_ms)
    torch.cuda.synchronize()
    ms = (time.perf_counter() - t0) * 1000.0 / iterations
    label = os.environ.get("LABEL", "run")
    print(f"{label}: n={n}, {ms:.2f} ms per iteration ({host_ms:g} ms host work, checksum "
          f"{float(c[0, 0]):.6e})")


if __name__ == "__main__":
    main()
