"""Batched matmul through PyTorch (cublasDgemmStridedBatched, cublasZgemmStridedBatched) and the
single matmul of one matrix of the batch, timed: one CSV line per shape and dtype,
`dtype,batch,n,method,batch_ms,single_ms`, batch_ms for the whole batch, single_ms for one
n^3 product. Run it with and without LD_PRELOAD=libozdgemm.so; METHOD is only the label.

    python3 bench/batched/bmm_bench.py METHOD [batch:n ...]

Data uniform in [-0.5, 0.5). Median of 5 timed calls (CUDA events) after two untimed calls.
"""
import sys

import torch


def timed(f, reps=5):
    f()
    f()
    torch.cuda.synchronize()
    ms = []
    for _ in range(reps):
        e0 = torch.cuda.Event(enable_timing=True)
        e1 = torch.cuda.Event(enable_timing=True)
        e0.record()
        f()
        e1.record()
        e1.synchronize()
        ms.append(e0.elapsed_time(e1))
    ms.sort()
    return ms[len(ms) // 2]


def main():
    method = sys.argv[1]
    shapes = sys.argv[2:] or ["64:512", "32:1024", "16:2048", "8:4096", "4:8192"]
    g = torch.Generator(device="cuda").manual_seed(1)
    for dtype in (torch.float64, torch.complex128):
        for shape in shapes:
            batch, n = (int(x) for x in shape.split(":"))
            a = torch.rand(batch, n, n, dtype=dtype, device="cuda", generator=g) - 0.5
            b = torch.rand(batch, n, n, dtype=dtype, device="cuda", generator=g) - 0.5
            batch_ms = timed(lambda: torch.bmm(a, b))
            single_ms = timed(lambda: a[0] @ b[0])
            name = "float64" if dtype == torch.float64 else "complex128"
            print(f"{name},{batch},{n},{method},{batch_ms:.3f},{single_ms:.3f}", flush=True)
            del a, b
            torch.cuda.empty_cache()


if __name__ == "__main__":
    main()
