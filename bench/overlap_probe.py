#!/usr/bin/env python3
"""Does a memory-bound kernel overlap with a cuBLASLt INT8 GEMM on another stream?

Question behind it (issue 4): the CRT and the residue writer are memory- or issue-bound and
take 15-40% of an emulated call; if they ran concurrently with the INT8 GEMMs of another block
of C, part of that time would be hidden. That only pays if the GPU actually runs the two side
by side: cuBLASLt's Hopper INT8 kernels use most of an SM's shared memory and registers, so a
second kernel may only get SMs between GEMM waves.

Measures, with CUDA events, the median of --reps runs of: G = n_gemm back-to-back INT8 GEMMs
(torch._int_mm, cuBLASLt, INT32 out) on stream 1; M = n_mem memory-bound passes (an INT32
plane read, reduced mod 251 and written as INT8: CRT-like traffic) on stream 2; both at once
(stream 2 normal or high priority). Prints hidden = (G + M - both) / min(G, M): 0 is no
overlap, 1 is full. Needs PyTorch with CUDA; the GPU machine has it.
"""
import argparse
import statistics

import torch


def timed(fn, reps):
    times = []
    for _ in range(reps):
        start = torch.cuda.Event(enable_timing=True)
        stop = torch.cuda.Event(enable_timing=True)
        torch.cuda.synchronize()
        start.record()
        fn()
        stop.record()
        torch.cuda.synchronize()
        times.append(start.elapsed_time(stop))
    return statistics.median(times)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--m", type=int, default=4096, help="GEMM rows (a block of C)")
    ap.add_argument("--n", type=int, default=16384)
    ap.add_argument("--k", type=int, default=16384)
    ap.add_argument("--n-gemm", type=int, default=4)
    ap.add_argument("--mem-elems", type=int, default=4096 * 16384 * 4,
                    help="INT32 elements per memory pass")
    ap.add_argument("--n-mem", type=int, default=1)
    ap.add_argument("--reps", type=int, default=7)
    args = ap.parse_args()

    dev = torch.device("cuda")
    print(f"GPU {torch.cuda.get_device_name(dev)}, torch {torch.__version__}, "
          f"CUDA {torch.version.cuda}")
    g = torch.Generator(device=dev).manual_seed(1)
    a = torch.randint(-128, 128, (args.m, args.k), dtype=torch.int8, device=dev, generator=g)
    b = torch.randint(-128, 128, (args.n, args.k), dtype=torch.int8, device=dev,
                      generator=g).t()
    prod = torch.randint(-2**30, 2**30, (args.mem_elems,), dtype=torch.int32, device=dev,
                         generator=g)
    res = torch.empty(args.mem_elems, dtype=torch.int8, device=dev)

    s1 = torch.cuda.Stream()
    s2 = torch.cuda.Stream()
    s2_hi = torch.cuda.Stream(priority=-1)

    def gemms(stream):
        with torch.cuda.stream(stream):
            for _ in range(args.n_gemm):
                torch._int_mm(a, b)

    def mems(stream):
        with torch.cuda.stream(stream):
            for _ in range(args.n_mem):
                torch.remainder(prod, 251, out=prod)  # read + write INT32, integer ALU work
                res.copy_(prod)                        # read INT32, write INT8

    def sync_into_current(*streams):
        cur = torch.cuda.current_stream()
        for s in streams:
            cur.wait_stream(s)

    def run_g():
        s1.wait_stream(torch.cuda.current_stream())
        gemms(s1)
        sync_into_current(s1)

    def run_m():
        s2.wait_stream(torch.cuda.current_stream())
        mems(s2)
        sync_into_current(s2)

    def run_both(side):
        s1.wait_stream(torch.cuda.current_stream())
        side.wait_stream(torch.cuda.current_stream())
        gemms(s1)
        mems(side)
        sync_into_current(s1, side)

    for fn in (run_g, run_m, lambda: run_both(s2)):  # warm-up
        fn()
    torch.cuda.synchronize()

    tg = timed(run_g, args.reps)
    tm = timed(run_m, args.reps)
    tb = timed(lambda: run_both(s2), args.reps)
    th = timed(lambda: run_both(s2_hi), args.reps)
    gops = 2.0 * args.m * args.n * args.k * args.n_gemm / (tg * 1e-3) / 1e12
    print(f"shape {args.m}x{args.n}x{args.k} x{args.n_gemm} gemms ({gops:.0f} TOPS alone), "
          f"mem pass {args.mem_elems * 4 / 1e9:.2f} GB INT32 x{args.n_mem}")
    print(f"gemms alone {tg:.3f} ms, memory passes alone {tm:.3f} ms, sum {tg + tm:.3f} ms")
    for name, t in (("concurrent", tb), ("concurrent, side stream high priority", th)):
        hidden = (tg + tm - t) / min(tg, tm)
        print(f"{name}: {t:.3f} ms, hidden fraction of the shorter = {hidden:.2f}")


if __name__ == "__main__":
    main()
