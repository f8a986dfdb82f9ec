// Deterministic pseudo-random device data for the probes: word i of a fill is a function of
// (i, seed) only, so runs are repeatable without a host-side generator or a copy.
#pragma once

#include <cstddef>
#include <cstdint>

namespace ozdgemm::bench {

// p[i] = hash(i, seed) & mask for i < words (a grid-stride loop: any grid fills it all).
static __global__ void fill_hash(uint32_t* p, size_t words, uint32_t seed, uint32_t mask) {
  for (size_t i = blockIdx.x * size_t{blockDim.x} + threadIdx.x; i < words;
       i += size_t{gridDim.x} * blockDim.x) {
    uint32_t h = static_cast<uint32_t>(i) * 2654435761u ^ seed;
    h ^= h >> 15;
    h *= 2246822519u;
    h ^= h >> 13;
    p[i] = h & mask;
  }
}

}  // namespace ozdgemm::bench
