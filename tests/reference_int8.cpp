#include "tests/reference_int8.h"

#include <algorithm>

#include "runtime/requantize.h"

namespace octet {

namespace {
int8_t at(const Int8Tensor& x, int64_t n, int64_t c, int64_t y, int64_t xx) {
  return x.data[((n * x.dim(1) + c) * x.dim(2) + y) * x.dim(3) + xx];
}
}  // namespace

Int8Tensor nchw_to_nhwc(const Int8Tensor& x) {
  const int64_t N = x.dim(0), C = x.dim(1), H = x.dim(2), W = x.dim(3);
  Int8Tensor out({N, H, W, C});
  for (int64_t n = 0; n < N; ++n)
    for (int64_t c = 0; c < C; ++c)
      for (int64_t y = 0; y < H; ++y)
        for (int64_t w = 0; w < W; ++w) out.data[((n * H + y) * W + w) * C + c] = at(x, n, c, y, w);
  return out;
}

ReferenceRun reference_run(const QuantizedModel& m, const float* input, int64_t N) {
  const std::vector<ActShape> shapes = m.graph.shapes();
  ReferenceRun run;
  run.values.resize(m.graph.nodes.size());
  for (size_t i = 0; i < m.graph.nodes.size(); ++i) {
    const Node& n = m.graph.nodes[i];
    const NodeQuant& q = m.quant[i];
    const ActShape s = shapes[i];
    const bool is_output = static_cast<int>(i) == m.output();
    const int32_t lo = n.relu ? 0 : -128;
    Int8Tensor y({N, s.c, s.h, s.w});
    auto out = [&](int64_t b, int64_t c, int64_t yy, int64_t xx) -> int8_t& {
      return y.data[((b * s.c + c) * s.h + yy) * s.w + xx];
    };
    const Int8Tensor* x = n.inputs.empty() ? nullptr : &run.values[n.inputs[0]];
    const ActShape in = n.inputs.empty() ? s : shapes[n.inputs[0]];
    switch (n.op) {
      case Op::Input:
        for (int64_t k = 0; k < y.numel(); ++k) y.data[k] = quantize_input(input[k], q.scale);
        break;
      case Op::Conv2d:
      case Op::Linear: {
        if (is_output) run.logits = Int32Tensor({N, s.c});
        const bool conv = n.op == Op::Conv2d;
        const int k = conv ? n.kernel : 1;
        for (int64_t b = 0; b < N; ++b)
          for (int64_t o = 0; o < s.c; ++o)
            for (int64_t oy = 0; oy < s.h; ++oy)
              for (int64_t ox = 0; ox < s.w; ++ox) {
                int32_t acc = q.bias.data[o];
                if (conv) {
                  for (int64_t c = 0; c < in.c; ++c)
                    for (int ky = 0; ky < k; ++ky)
                      for (int kx = 0; kx < k; ++kx) {
                        const int64_t iy = oy * n.stride - n.padding + ky, ix = ox * n.stride - n.padding + kx;
                        if (iy < 0 || iy >= in.h || ix < 0 || ix >= in.w) continue;
                        acc += int32_t(q.weight.data[((o * in.c + c) * k + ky) * k + kx]) * at(*x, b, c, iy, ix);
                      }
                } else {  // the input's C x H x W values in their natural (C, H, W) order
                  const int64_t F = in.numel();
                  for (int64_t f = 0; f < F; ++f) acc += int32_t(q.weight.data[o * F + f]) * x->data[b * F + f];
                }
                if (is_output) {
                  run.logits.data[b * s.c + o] = acc;
                  continue;
                }
                const bool residual = n.inputs.size() == 2;
                const int32_t skip = residual ? at(run.values[n.inputs[1]], b, o, oy, ox) : 0;
                out(b, o, oy, ox) = static_cast<int8_t>(
                    requantize(acc, q.multiplier.data[o], skip, residual ? q.skip_multiplier.data[o] : 0, q.shift.data[o], lo));
              }
        break;
      }
      case Op::MaxPool2d:
      case Op::AvgPool2d:
        for (int64_t b = 0; b < N; ++b)
          for (int64_t c = 0; c < s.c; ++c)
            for (int64_t oy = 0; oy < s.h; ++oy)
              for (int64_t ox = 0; ox < s.w; ++ox) {
                int32_t best = -128, sum = 0;
                for (int ky = 0; ky < n.kernel; ++ky)
                  for (int kx = 0; kx < n.kernel; ++kx) {
                    const int8_t v = at(*x, b, c, oy * n.stride + ky, ox * n.stride + kx);
                    best = std::max<int32_t>(best, v);
                    sum += v;
                  }
                out(b, c, oy, ox) = static_cast<int8_t>(
                    n.op == Op::MaxPool2d ? best : requantize(sum, q.multiplier.data[0], 0, 0, q.shift.data[0], -128));
              }
        break;
      case Op::GlobalAvgPool:
        for (int64_t b = 0; b < N; ++b)
          for (int64_t c = 0; c < s.c; ++c) {
            int32_t sum = 0;
            for (int64_t yy = 0; yy < in.h; ++yy)
              for (int64_t xx = 0; xx < in.w; ++xx) sum += at(*x, b, c, yy, xx);
            out(b, c, 0, 0) = static_cast<int8_t>(requantize(sum, q.multiplier.data[0], 0, 0, q.shift.data[0], -128));
          }
        break;
      case Op::Add:
        for (int64_t k = 0; k < y.numel(); ++k)
          y.data[k] = static_cast<int8_t>(requantize(x->data[k], q.multiplier.data[0], run.values[n.inputs[1]].data[k],
                                                     q.multiplier.data[1], q.shift.data[0], lo));
        break;
      case Op::ShortcutA:
        for (int64_t b = 0; b < N; ++b)
          for (int64_t c = 0; c < s.c; ++c)
            for (int64_t oy = 0; oy < s.h; ++oy)
              for (int64_t ox = 0; ox < s.w; ++ox) {
                const int64_t src = c - n.channels;
                out(b, c, oy, ox) = (src >= 0 && src < in.c) ? at(*x, b, src, 2 * oy, 2 * ox) : int8_t{0};
              }
        break;
      case Op::ReLU:
        for (int64_t k = 0; k < y.numel(); ++k) y.data[k] = std::max<int8_t>(x->data[k], 0);
        break;
      case Op::Flatten: y.data = x->data; break;  // NCHW memory is already C, H, W order
      case Op::BatchNorm2d: break;
    }
    if (!is_output) run.values[i] = std::move(y);
  }
  return run;
}

}  // namespace octet
