#include "engine/graph_choice.hpp"

#include <cstring>

#include "choice.cuh"
#include "common/cublas_api.hpp"
#include "common/error.hpp"
#include "common/fault_injection.hpp"
#include "crt.cuh"
#include "engine/certificate.hpp"
#include "engine/gpu_choice.hpp"
#include "engine/pipeline.hpp"
#include "residues.cuh"

namespace ozdgemm::detail {
namespace {

// What a cached graph depends on (the count it reads, what its bodies read and do), as the bytes
// of a zeroed struct (engine/gpu_choice.hpp).
template <class Key>
std::string key_bytes(const Key& k) {
  return std::string(reinterpret_cast<const char*>(&k), sizeof k);
}

// Body s of block rb's SWITCH: block_gemms of s moduli on the body's stream.
gpu_choice_graphs::gemm_bodies switch_body(const device_gemm& call, const layout& L,
                                           const int8_gemm_target& g, int64_t rb) {
  return [&call, &L, g, rb](int s, cudaStream_t body) {
    int8_gemm_target in_body = g;
    in_body.stream = body;
    in_body.use = lt_use::in_graph_body;  // cuBLASLt with the call's workspace, as eager calls
    const auto [i0, rows] = block_rows(L, rb);
    block_gemms(call, L, in_body, moduli_for(s), i0, rows);
  };
}

// The IF's body: native DGEMM with the call's own arguments on the private handle (with no
// workspace in a body, gpu_choice.cpp).
gpu_choice_graphs::body_work native_body(const device_gemm& call, const int8_gemm_target& g,
                                         const gpu_plan& plan) {
  return [&call, g, ta = plan.ta, tb = plan.tb](cudaStream_t) {
    const gemm_problem& p = call.p;
    const bool dev = call.alpha.dev != nullptr;
    OZDGEMM_CUBLAS_TRY(cublas_set_pointer_mode(
        g.handle, dev ? CUBLAS_POINTER_MODE_DEVICE : CUBLAS_POINTER_MODE_HOST));
    const cublasStatus_t e = cublas_dgemm_64(
        g.handle, ta, tb, p.m, p.n, p.k, dev ? call.alpha.dev : &call.alpha.host, p.a.ptr, p.a.ld,
        p.b.ptr, p.b.ld, dev ? call.beta.dev : &call.beta.host, p.c, p.ldc);
    (void)cublas_set_pointer_mode(g.handle, CUBLAS_POINTER_MODE_HOST);
    OZDGEMM_CUBLAS_TRY(e);
  };
}

}  // namespace

gpu_plan plan_gpu_choice(const device_gemm& call, const layout& L, const int8_gemm_target& g) {
  const gemm_problem& p = call.p;
  gpu_plan plan;
  const bool batched = batched_gemms(call.batching, L.row_block, L.n_pad, L.k_pad);
  for (int64_t rb = 0; rb < L.row_blocks; ++rb) {
    const auto [i0, rows] = block_rows(L, rb);
    struct gemm_key {
      const void *chosen, *res_a, *res_b, *prod, *lt_ws, *sum_a, *prod3;
      size_t lt_ws_bytes;
      int64_t i0, rows, m_pad, n_pad, k_pad, half_k, half_n;  // halves: 0 but in Karatsuba
      // Where B's planes come from (b_from_a): a complex call's B pointers differ from the
      // layout's when they are A's, so the same workspace and shape make another graph.
      int backend, batching, batched, b_from;
    } key;
    std::memset(&key, 0, sizeof key);
    key.chosen = L.chosen;
    key.res_a = L.res_a;
    key.res_b = L.res_b;
    key.prod = L.prod;
    key.lt_ws = L.lt_ws;
    key.lt_ws_bytes = L.lt_ws_bytes;
    key.sum_a = call.karatsuba.on() ? L.sum_a : nullptr;
    key.prod3 = call.karatsuba.on() ? L.prod3 : nullptr;
    key.half_k = call.karatsuba.k;
    key.half_n = call.karatsuba.n;
    key.i0 = i0;
    key.rows = rows;
    key.m_pad = L.m_pad;
    key.n_pad = L.n_pad;
    key.k_pad = L.k_pad;
    key.backend = static_cast<int>(g.backend);
    key.batching = static_cast<int>(call.batching);
    key.batched = batched;
    key.b_from = static_cast<int>(b_from_a(call));
    plan.switch_keys.push_back(key_bytes(key));
  }
  plan.ta = p.a.k_contiguous ? CUBLAS_OP_T : CUBLAS_OP_N;
  plan.tb = p.b.k_contiguous ? CUBLAS_OP_N : CUBLAS_OP_T;
  struct native_key {
    const void *chosen, *a, *b, *c, *alpha_dev, *beta_dev;
    int64_t m, n, k, lda, ldb, ldc;
    double alpha, beta;
    int ta, tb;
  } nk;
  std::memset(&nk, 0, sizeof nk);
  nk.chosen = L.chosen;
  nk.a = p.a.ptr;
  nk.b = p.b.ptr;
  nk.c = p.c;
  nk.alpha_dev = call.alpha.dev;
  nk.beta_dev = call.beta.dev;
  nk.m = p.m;
  nk.n = p.n;
  nk.k = p.k;
  nk.lda = p.a.ld;
  nk.ldb = p.b.ld;
  nk.ldc = p.ldc;
  nk.alpha = call.alpha.host;
  nk.beta = call.beta.host;
  nk.ta = plan.ta;
  nk.tb = plan.tb;
  plan.native_key = key_bytes(nk);
  return plan;
}

bool gpu_choice_ready(const device_gemm& call, const layout& L, const int8_gemm_target& g,
                      const gpu_plan& plan) {
  gpu_choice_graphs& graphs = *call.graphs;
  int8_gemm_target planning = g;
  planning.use = lt_use::plan_only;
  for (int64_t rb = 0; rb < L.row_blocks; ++rb) {
    if (!graphs.has_count_switch(call.stream, plan.switch_keys[rb])) {
      const auto [i0, rows] = block_rows(L, rb);
      for (int s = kMinModuli; s <= kMaxModuli; ++s)
        block_gemms(call, L, planning, moduli_for(s), i0, rows);
    }
    if (!graphs.ready_count_switch(call.stream, g.handle, L.chosen, plan.switch_keys[rb],
                                   switch_body(call, L, g, rb)))
      return false;
  }
  return graphs.ready_native_if(call.stream, g.handle, L.chosen, plan.native_key,
                                native_body(call, g, plan));
}

int enqueue_gpu_chosen(const device_gemm& call, const layout& L, const int8_gemm_target& g,
                       const operand_vectors& va, const gpu_plan& plan) {
  const gemm_problem& p = call.p;
  const cudaStream_t st = call.stream;
  stage_events* ev = call.events;
  gpu_choice_graphs& graphs = *call.graphs;
  launch_choice_inputs(call, L, g);
  choose_args ca = certified_choose_args(call, L);
  ca.tally = graphs.tally_device();
  launch_choose(ca, st);
  launch_select_exponents(L.exps_all_a, p.m, L.chosen, L.exp_a, st);
  launch_select_exponents(L.exps_all_b, p.n, L.chosen, L.exp_b, st);
  const uint32_t nearest = nearest_mask_for(p.k);
  launch_chosen_residues(va, L.exp_a, L.chosen, nearest, L.res_a, st);
  if (b_from_a(call) == b_source::own)
    launch_chosen_residues(residue_vectors_b(call, L), L.exp_b, L.chosen, nearest, L.res_b, st);
  OZDGEMM_CHECK_LAUNCH();
  if (call.karatsuba.on()) karatsuba_sums(call, L, moduli_for(kMaxModuli), L.chosen);
  if (ev != nullptr) record(ev->prepared, st);
  if (ev != nullptr) ev->blocks = static_cast<int>(L.row_blocks);
  const bool block_events = ev != nullptr && L.row_blocks <= stage_events::kMaxBlocks;
  // Test-only: the INT8 GEMMs of this path are graph launches (nodes under capture), so a cuBLAS
  // fault is injected once per call here, before anything writes C.
  if (inject_fault(fault::cublas))
    throw cublas_error(CUBLAS_STATUS_EXECUTION_FAILED, "injected fault: INT8 GEMM failed");
  for (int64_t rb = 0; rb < L.row_blocks; ++rb) {
    const auto [i0, rows] = block_rows(L, rb);
    graphs.enqueue_count_switch(st, g.handle, L.chosen, plan.switch_keys[rb],
                                switch_body(call, L, g, rb));
    if (block_events) record(ev->gemm_done[rb], st);
    if (ev != nullptr && rb == L.row_blocks - 1) record(ev->multiplied, st);
    const gemm_problem pb = block_problem(p, i0, rows);
    launch_chosen_crt(pb, crt_args_for(call, L, pb, i0, rows), L.chosen, call.alpha, call.beta, st);
    OZDGEMM_CHECK_LAUNCH();
    if (block_events) record(ev->crt_done[rb], st);
  }
  graphs.enqueue_native_if(st, g.handle, L.chosen, plan.native_key, native_body(call, g, plan));
  if (ev != nullptr) record(ev->finished, st);
  return kChosenOnGpu;
}

}  // namespace ozdgemm::detail
