// How Mul's second input covers its first (graph/ops/mul.cpp), shared by the
// references and the CPU kernels.
#pragma once

#include "graph/graph.h"

namespace octet::ops {

enum class MulGate {
  Same,        // the same shape
  PerChannel,  // C x 1 x 1: one value per channel of each sample (a squeeze-and-excitation gate)
  PerPixel,    // 1 x H x W: one value per pixel (CBAM's spatial attention)
};

inline MulGate mul_gate(const ActShape& x, const ActShape& z) {
  if (z == x) return MulGate::Same;
  return z.c == x.c ? MulGate::PerChannel : MulGate::PerPixel;
}

}  // namespace octet::ops
