// Mul: the element-wise product of two values, the second of the same shape,
// one value per channel (C x 1 x 1, broadcast over the plane: a
// squeeze-and-excitation gate) or one per pixel (1 x H x W, broadcast over
// the channels: CBAM's spatial attention). In int8 the product of the two
// int8 values is requantized to the output's own scale by one multiplier,
// s_out / (s_a s_b).
#include "common/error.h"
#include "graph/ops/float_reference.h"
#include "graph/ops/int8_reference.h"
#include "graph/ops/mul.h"

namespace octet::ops {

namespace {
ActShape shape(const Node&, const std::vector<ActShape>& in) {
  const ActShape per_channel = {in[0].c, 1, 1}, per_pixel = {1, in[0].h, in[0].w};
  check(in[1] == in[0] || in[1] == per_channel || in[1] == per_pixel,
        "multiplies " + to_string(in[0]) + " by " + to_string(in[1]) +
            " (the second must match or be C x 1 x 1 or 1 x H x W)");
  return in[0];
}

void run_float(const FloatOpArgs& a) {
  const FloatTensor &x = *a.inputs[0], &z = *a.inputs[1];
  const int64_t channels = a.out.c, plane = int64_t{a.out.h} * a.out.w, per_sample = plane * channels;
  const MulGate gate = mul_gate(a.in[0], a.in[1]);
  FloatTensor& y = a.y;
#pragma omp parallel for if (y.numel() >= kMinParallelElements)
  for (int64_t k = 0; k < y.numel(); ++k)
    y.data[k] = x.data[k] * z.data[gate == MulGate::PerChannel ? k / per_sample * channels + k % channels
                                    : gate == MulGate::PerPixel ? k / channels
                                                                : k];
}

void run_int8_reference(const Int8ReferenceArgs& a) {
  const ActTensor &x = *a.inputs[0], &z = *a.inputs[1];
  const int64_t C = x.dim(1), H = x.dim(2), W = x.dim(3);
  const MulGate gate = mul_gate({static_cast<int>(C), static_cast<int>(H), static_cast<int>(W)},
                                {static_cast<int>(z.dim(1)), static_cast<int>(z.dim(2)), static_cast<int>(z.dim(3))});
  a.y = ActTensor(x.shape);
  for (int64_t b = 0; b < a.batch; ++b)
    for (int64_t c = 0; c < C; ++c)
      for (int64_t y = 0; y < H; ++y)
        for (int64_t w = 0; w < W; ++w) {
          const int32_t z_value = gate == MulGate::PerChannel ? centered(a, 1, b, c, 0, 0)
                                  : gate == MulGate::PerPixel ? centered(a, 1, b, 0, y, w)
                                                              : centered(a, 1, b, c, y, w);
          const int32_t product = centered(a, 0, b, c, y, w) * z_value;
          at(a.y, b, c, y, w) = static_cast<int16_t>(
              requantize(product, a.q.multiplier.data[0], 0, 0, a.q.shift.data[0], -128, a.q.zero_point));
        }
}
}  // namespace

//                        name   in train  weight image  relu   resid  scale  mult  moves  multiplies
extern const OpDef mul = {{Op::Mul, "mul", 2, false, false, false, false, false, true, 1, false, true},
                          shape, nullptr, nullptr, nullptr, run_float, run_int8_reference};

}  // namespace octet::ops
