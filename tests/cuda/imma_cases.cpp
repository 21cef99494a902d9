#include "tests/cuda/imma_cases.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>
#include <sstream>

#include "runtime/cpu/kernels.h"
#include "runtime/cuda/device_layout.h"
#include "runtime/cuda/quantize_input_kernel.h"

namespace octet::cuda::igemm {

std::string conv_name(const Conv& v) {
  std::ostringstream s;
  s << "b" << v.batch << "_" << v.h << "x" << v.w << "x" << v.c << "_o" << v.out_c << "_k" << v.kernel << "s"
    << v.stride << "p" << v.padding
    << (v.fold == ImageFold::kSpaceToDepth ? "_s2d" : v.fold == ImageFold::kPatches ? "_patches" : "");
  return s.str();
}

std::vector<std::tuple<int, int>> runnable_shapes_and_tiles() {
  std::vector<std::tuple<int, int>> pairs;
  for (int conv = 0; conv < int(std::size(kConvs)); ++conv)
    for (int tile = 0; tile < kTileCount; ++tile)
      if (unsupported(problem_of(kConvs[conv]), tile).empty()) pairs.emplace_back(conv, tile);
  return pairs;
}

std::string shape_and_tile_name(const std::tuple<int, int>& shape_and_tile) {
  return conv_name(kConvs[std::get<0>(shape_and_tile)]) + "_" + tile_config(std::get<1>(shape_and_tile)).name;
}

std::vector<float> image_of(const Conv& v, const Data& d) {
  std::vector<float> nchw(d.input.size());
  for (int n = 0; n < v.batch; ++n)
    for (int c = 0; c < v.c; ++c)
      for (int px = 0; px < v.h * v.w; ++px)
        nchw[(size_t(n) * v.c + c) * v.h * v.w + px] = d.input[(size_t(n) * v.h * v.w + px) * v.c + c];
  return nchw;
}

ImageFold fold_of(const Conv& v) {
  ImageFold f;
  f.kind = v.fold, f.height = v.h, f.width = v.w, f.channels = v.c;
  if (v.fold == ImageFold::kPatches) f.kernel = v.kernel, f.padding = v.padding;
  return f;
}

Node conv_node(const Conv& v) {
  Node n;
  n.op = Op::Conv2d, n.name = conv_name(v);
  n.channels = v.out_c, n.kernel = v.kernel, n.stride = v.stride, n.padding = v.padding;
  return n;
}

Problem problem_of(const Conv& v) {
  Problem p = conv_problem(v.batch, v.h, v.w, v.c, v.out_c, v.kernel, v.stride, v.padding);
  if (v.fold == ImageFold::kNone) return p;
  // As conv_geometry (device_layout.h) has the engine run it; the output size stays the conv's.
  const ImageFold f = fold_of(v);
  const FoldedConv fc = folded_conv(f, conv_node(v));
  p.in_h = fc.in_h, p.in_w = fc.in_w, p.in_stride = f.stored_c(), p.tap_c = fc.tap_channels;
  p.kernel = fc.kernel, p.stride = fc.stride, p.padding = fc.padding;
  return p;
}

namespace {
// The bits a wide input may have for a conv summing k products (quant/quantize.cpp's rule).
int wide_input_bits(int64_t k) {
  int log2k = 0;
  while ((int64_t{1} << log2k) < k) ++log2k;
  return std::min(16, 24 - log2k);
}
}  // namespace

Data make_data(const Conv& v, const Problem& p, bool residual, bool relu, uint64_t seed, StoredInput values) {
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<int> byte(-128, 127);
  Data d;
  d.relu = relu;
  const int32_t zero_point = values == StoredInput::kUnsigned ? -128 : 0;
  const bool wide = values == StoredInput::kWide, folded = v.fold != ImageFold::kNone;
  d.input_zero_point = folded ? 0 : zero_point;
  d.zero_point = zero_point;
  d.skip_zero_point = residual ? zero_point : 0;
  d.input_bits = wide && !folded ? wide_input_bits(int64_t(v.kernel) * v.kernel * v.c) : 8;
  d.bits = wide ? 16 : 8;
  d.skip_bits = wide && residual ? 16 : 8;
  const auto stored = [](int8_t q, int32_t z) { return static_cast<int8_t>(q - z); };
  d.input.resize(size_t(v.batch) * v.h * v.w * v.c);
  for (int8_t& x : d.input) x = static_cast<int8_t>(byte(rng));
  // Padding channels hold garbage here, which the zero weights there must cancel.
  d.device_input.assign(size_t(v.batch) * p.in_h * p.in_w * p.in_stride, int8_t{0x5A});
  if (v.fold != ImageFold::kNone) {  // written by the engine's own folding, from the int8 values as floats
    const std::vector<float> nchw = image_of(v, d);
    const ImageFold f = fold_of(v);
    const SpaceToDepthInput s2d = f.space_to_depth_input(v.batch);
    const PatchInput patches = f.patch_input(v.batch);
    for (int64_t item = 0; item < int64_t(v.batch) * f.stored_h() * f.stored_w(); ++item)
      v.fold == ImageFold::kSpaceToDepth
          ? space_to_depth_input_item(nchw.data(), s2d, 1.0f, item, d.device_input.data())
          : patch_input_item(nchw.data(), patches, 1.0f, item, d.device_input.data());
  } else if (d.input_bits > 8) {  // two planes, the high bytes then the low ones
    const int64_t plane = int64_t(v.batch) * p.in_h * p.in_w * p.in_stride;
    d.device_input.resize(size_t(2 * plane), int8_t{0x5A});
    std::uniform_int_distribution<int> level(-(1 << (d.input_bits - 1)), (1 << (d.input_bits - 1)) - 1);
    d.wide_input.resize(d.input.size());
    for (size_t px = 0; px < size_t(v.batch) * v.h * v.w; ++px)
      for (int c = 0; c < v.c; ++c) {
        const int16_t x = static_cast<int16_t>(level(rng));
        d.wide_input[px * v.c + c] = x;
        d.device_input[px * p.in_stride + c] = static_cast<int8_t>(high_byte(x));
        d.device_input[plane + px * p.in_stride + c] = static_cast<int8_t>(low_byte(x));
      }
  } else {
    for (size_t px = 0; px < size_t(v.batch) * v.h * v.w; ++px)
      for (int c = 0; c < v.c; ++c)
        d.device_input[px * p.in_stride + c] = stored(d.input[px * v.c + c], d.input_zero_point);
  }
  d.weights.resize(size_t(v.out_c) * v.kernel * v.kernel * v.c);
  for (int8_t& x : d.weights) x = static_cast<int8_t>(byte(rng));
  const std::vector<int8_t> rows =
      folded ? fold_weight_rows(fold_of(v), conv_node(v), d.weights.data(), v.c) : d.weights;
  d.packed = pack_weight_rows(rows.data(), v.out_c, p.taps(), folded ? p.tap_c : v.c, p.out_c, p.tap_c,
                              p.packed_depth());
  // The accumulators' spread (inputs and weights of about 74 in absolute
  // value, a wide input's 2^(bits-1) / 128 times more), brought to about 64
  // (a wide output's 256 times more).
  const double input_spread = 74.0 * (d.input_bits > 8 ? (1 << (d.input_bits - 1)) / 128.0 : 1.0);
  const double spread = 74.0 * input_spread * std::sqrt(double(v.kernel) * v.kernel * v.c);
  const double output_level = d.bits > 8 ? 64.0 * 256 : 64.0;
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  d.bias.assign(p.out_c, 0);
  d.multiplier.assign(p.out_c, 0);
  d.shift.assign(p.out_c, 1);
  d.skip_multiplier.assign(p.out_c, 0);
  for (int o = 0; o < v.out_c; ++o) {
    d.shift[o] = 20 + static_cast<int>(unit(rng) * 10);
    d.bias[o] = static_cast<int32_t>((unit(rng) * 2 - 1) * spread);
    d.multiplier[o] = static_cast<int32_t>(std::ldexp((0.2 + 1.8 * unit(rng)) * output_level / spread, d.shift[o]));
    if (residual) d.skip_multiplier[o] = static_cast<int32_t>(std::ldexp(unit(rng), d.shift[o]));
  }
  if (residual && d.skip_bits > 8) {  // int16 values as bytes; on the device two planes
    const size_t plane = size_t(p.rows()) * p.out_c;
    d.skip.resize(size_t(p.rows()) * v.out_c * 2);
    d.device_skip.assign(2 * plane, 0);
    std::uniform_int_distribution<int> level(-32768, 32767);
    for (int m = 0; m < p.rows(); ++m)
      for (int o = 0; o < v.out_c; ++o) {
        const int16_t x = static_cast<int16_t>(level(rng));
        std::memcpy(&d.skip[(size_t(m) * v.out_c + o) * 2], &x, 2);
        d.device_skip[size_t(m) * p.out_c + o] = static_cast<int8_t>(high_byte(x));
        d.device_skip[plane + size_t(m) * p.out_c + o] = static_cast<int8_t>(low_byte(x));
      }
  } else if (residual) {
    d.skip.resize(size_t(p.rows()) * v.out_c);
    for (int8_t& x : d.skip) x = static_cast<int8_t>(byte(rng));
    d.device_skip.assign(size_t(p.rows()) * p.out_c, 0);
    for (int m = 0; m < p.rows(); ++m)
      for (int o = 0; o < v.out_c; ++o)
        d.device_skip[size_t(m) * p.out_c + o] = stored(d.skip[size_t(m) * v.out_c + o], d.skip_zero_point);
  }
  return d;
}

std::vector<int32_t> direct_accumulators(const Conv& v, const Problem& p, const Data& d) {
  std::vector<int32_t> acc(size_t(p.rows()) * v.out_c, 0);
  for (int m = 0; m < p.rows(); ++m) {
    const int ox = m % p.out_w, oy = m / p.out_w % p.out_h, n = m / (p.out_w * p.out_h);
    for (int o = 0; o < v.out_c; ++o) {
      int32_t sum = 0;
      for (int ky = 0; ky < v.kernel; ++ky)
        for (int kx = 0; kx < v.kernel; ++kx) {
          const int iy = oy * v.stride - v.padding + ky, ix = ox * v.stride - v.padding + kx;
          if (iy < 0 || iy >= v.h || ix < 0 || ix >= v.w) continue;
          for (int c = 0; c < v.c; ++c)
            sum += int32_t(d.input[((size_t(n) * v.h + iy) * v.w + ix) * v.c + c]) *
                   d.weights[((size_t(o) * v.kernel + ky) * v.kernel + kx) * v.c + c];
        }
      acc[size_t(m) * v.out_c + o] = sum;
    }
  }
  return acc;
}

RequantEpilogue epilogue_of(const Data& d, const int8_t* skip) {
  RequantEpilogue e;
  e.bias = d.bias.data(), e.multiplier = d.multiplier.data(), e.shift = d.shift.data();
  e.relu = d.relu, e.zero_point = d.zero_point, e.skip_zero_point = d.skip_zero_point;
  e.bits = d.bits, e.skip_bits = d.skip_bits;
  if (!d.skip.empty()) e.skip = skip, e.skip_multiplier = d.skip_multiplier.data();
  return e;
}

std::vector<int8_t> cpu_outputs(const Conv& v, const Problem& p, const Data& d) {
  cpu::ConvGeometry g;
  g.batch = v.batch, g.in_h = v.h, g.in_w = v.w, g.in_c = v.c;
  g.out_h = p.out_h, g.out_w = p.out_w, g.out_c = v.out_c;
  g.kernel = g.kernel_w = v.kernel, g.stride = v.stride, g.padding = v.padding;
  g.input_zero_point = d.input_zero_point;
  g.input_bits = d.input_bits;
  const cpu::PackedWeights w(d.weights.data(), v.out_c, v.kernel, v.kernel, v.c, d.input_bits);
  const RequantEpilogue e = epilogue_of(d, d.skip.data());
  std::vector<int8_t> out(size_t(p.rows()) * v.out_c * (d.bits > 8 ? 2 : 1));
  const int8_t* input = d.input_bits > 8 ? reinterpret_cast<const int8_t*>(d.wide_input.data()) : d.input.data();
  cpu::conv2d(g, input, w, e, out.data());
  return out;
}

}  // namespace octet::cuda::igemm
