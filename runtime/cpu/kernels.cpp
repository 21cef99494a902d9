#include "runtime/cpu/kernels.h"

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <string>

#include "common/error.h"
#include "runtime/cpu/conv_vnni.h"
#include "runtime/requantize.h"

namespace octet::cpu {

namespace {
// Output rows handled per task; the patch buffer of a task stays in L2.
constexpr int64_t kRowsPerTask = 64;
// Below this many values (or multiply-adds) an op runs on the calling thread:
// waking the other threads would cost more than it saves.
constexpr int64_t kMinParallelWork = int64_t{1} << 16;

// Copies the receptive field of output row m (kh x kw x C, zero outside the image).
void gather_patch(const ConvGeometry& g, const int8_t* input, int64_t m, int8_t* patch) {
  const int64_t ox = m % g.out_w, oy = (m / g.out_w) % g.out_h, b = m / (int64_t(g.out_w) * g.out_h);
  for (int ky = 0; ky < g.kernel; ++ky) {
    const int64_t iy = oy * g.stride - g.padding + ky;
    for (int kx = 0; kx < g.kernel; ++kx, patch += g.in_c) {
      const int64_t ix = ox * g.stride - g.padding + kx;
      if (iy < 0 || iy >= g.in_h || ix < 0 || ix >= g.in_w)
        std::memset(patch, 0, g.in_c);
      else
        std::memcpy(patch, input + ((b * g.in_h + iy) * g.in_w + ix) * g.in_c, g.in_c);
    }
  }
}

int32_t dot(const int8_t* a, const int8_t* b, int64_t n) {
  int32_t acc = 0;
  for (int64_t k = 0; k < n; ++k) acc += int32_t(a[k]) * int32_t(b[k]);
  return acc;
}

// Runs `body(m, patch)` for every output row, in parallel tasks with a patch buffer each.
template <typename Body>
void for_each_patch(const ConvGeometry& g, const int8_t* input, Body body) {
  const int64_t rows = g.rows(), depth = g.depth();
  const bool direct = g.kernel == 1 && g.stride == 1 && g.padding == 0;  // the input row is the patch
#pragma omp parallel if (rows * depth * g.out_c >= kMinParallelWork)
  {
    std::vector<int8_t> patch(static_cast<size_t>(depth));
#pragma omp for schedule(static)
    for (int64_t first = 0; first < rows; first += kRowsPerTask) {
      const int64_t end = std::min(rows, first + kRowsPerTask);
      for (int64_t m = first; m < end; ++m) {
        const int8_t* p = input + m * depth;
        if (!direct) {
          gather_patch(g, input, m, patch.data());
          p = patch.data();
        }
        body(m, p);
      }
    }
  }
}

void reference_conv2d(const ConvGeometry& g, const int8_t* input, const PackedWeights& w, const Epilogue& e,
                      int8_t* output) {
  const int32_t lo = e.relu ? 0 : -128;
  for_each_patch(g, input, [&](int64_t m, const int8_t* patch) {
    int8_t* out = output + m * g.out_c;
    const int8_t* skip = e.skip ? e.skip + m * g.out_c : nullptr;
    for (int o = 0; o < g.out_c; ++o) {
      const int32_t acc = dot(patch, w.rows() + o * g.depth(), g.depth()) + e.bias[o];
      out[o] = static_cast<int8_t>(requantize(acc, e.multiplier[o], skip ? skip[o] : 0,
                                              skip ? e.skip_multiplier[o] : 0, e.shift[o], lo));
    }
  });
}

void reference_conv2d_int32(const ConvGeometry& g, const int8_t* input, const PackedWeights& w, const int32_t* bias,
                            int32_t* output) {
  for_each_patch(g, input, [&](int64_t m, const int8_t* patch) {
    for (int o = 0; o < g.out_c; ++o) output[m * g.out_c + o] = dot(patch, w.rows() + o * g.depth(), g.depth()) + bias[o];
  });
}

bool cpu_has_avx512_vnni() {
#if defined(OCTET_CPU_VNNI)
  __builtin_cpu_init();
  return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
         __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512dq") &&
         __builtin_cpu_supports("avx512vnni") && __builtin_cpu_supports("bmi2");
#else
  return false;  // not an x86-64 build: conv_vnni.cpp is not compiled
#endif
}

KernelPath path_from_environment() {
  const char* name = std::getenv("OCTET_CPU_KERNELS");
  if (!name || !*name)
    return kernel_path_supported(KernelPath::Avx512Vnni) ? KernelPath::Avx512Vnni : KernelPath::Reference;
  try {
    return kernel_path_from_name(name);
  } catch (const Error& e) {
    fail(std::string("environment variable OCTET_CPU_KERNELS: ") + e.what());
  }
}

std::atomic<KernelPath>& selected_path() {
  static std::atomic<KernelPath> path(path_from_environment());
  return path;
}

// The epilogue operands of the VNNI kernels, padded to whole blocks of 16
// channels (padding lanes compute harmless values that are never stored).
struct VnniEpilogue {
  std::vector<int32_t> bias;
  std::vector<int64_t> multiplier, rounding, shift, skip_multiplier;
  vnni::EpilogueTables tables;

  VnniEpilogue(const PackedWeights& w, const int32_t* bias_in, const Epilogue* e) {
    const size_t padded = static_cast<size_t>((w.out_c() + vnni::kBlock - 1) / vnni::kBlock * vnni::kBlock);
    bias.assign(padded, 0);
    for (int o = 0; o < w.out_c(); ++o)  // unsigned activations add 128 * sum(w); take it back
      bias[o] = static_cast<int32_t>(static_cast<uint32_t>(bias_in[o]) - 128u * static_cast<uint32_t>(w.row_sums[o]));
    tables.bias = bias.data();
    if (!e) return;
    multiplier.assign(padded, 0);
    rounding.assign(padded, 1);
    shift.assign(padded, 1);
    for (int o = 0; o < w.out_c(); ++o) {
      multiplier[o] = e->multiplier[o];
      shift[o] = e->shift[o];
      rounding[o] = int64_t{1} << (e->shift[o] - 1);
    }
    tables.multiplier = multiplier.data();
    tables.rounding = rounding.data();
    tables.shift = shift.data();
    tables.relu = e->relu;
    if (e->skip) {
      skip_multiplier.assign(padded, 0);
      std::copy(e->skip_multiplier, e->skip_multiplier + w.out_c(), skip_multiplier.begin());
      tables.skip_multiplier = skip_multiplier.data();
      tables.skip = e->skip;
    }
  }
};

#if defined(OCTET_CPU_VNNI)
// The padded input image of the VNNI kernels: one buffer per calling thread,
// grown as needed and kept, so layers do not pay for fresh pages each run.
uint8_t* vnni_workspace(const ConvGeometry& g, const PackedWeights& w) {
  check(w.kernel() == g.kernel && w.in_c() == g.in_c && w.out_c() == g.out_c,
        "cpu conv2d: weights packed for kernel " + std::to_string(w.kernel()) + ", " + std::to_string(w.in_c()) +
            " -> " + std::to_string(w.out_c()) + " channels, called with kernel " + std::to_string(g.kernel) + ", " +
            std::to_string(g.in_c) + " -> " + std::to_string(g.out_c));
  thread_local std::vector<uint8_t> workspace;
  const size_t bytes = static_cast<size_t>(vnni::workspace_bytes(g));
  if (workspace.size() < bytes) {
    std::vector<uint8_t>().swap(workspace);  // no copy of the old contents
    workspace.resize(bytes);
  }
  return workspace.data();
}
#endif
}  // namespace

const char* kernel_path_name(KernelPath path) {
  return path == KernelPath::Reference ? "reference" : "avx512-vnni";
}

bool kernel_path_supported(KernelPath path) {
  static const bool vnni = cpu_has_avx512_vnni();
  return path == KernelPath::Reference || vnni;
}

KernelPath kernel_path_from_name(const std::string& name) {
  for (KernelPath path : {KernelPath::Reference, KernelPath::Avx512Vnni})
    if (name == kernel_path_name(path)) {
      check(kernel_path_supported(path), "this CPU does not support the " + name + " kernels");
      return path;
    }
  fail("'" + name + "' is not a CPU kernel path (known: reference, avx512-vnni)");
}

KernelPath kernel_path() { return selected_path().load(); }

void set_kernel_path(KernelPath path) {
  check(kernel_path_supported(path),
        std::string("this CPU does not support the ") + kernel_path_name(path) + " kernels");
  selected_path().store(path);
}

PackedWeights::PackedWeights(const int8_t* ohwi, int out_c, int kernel, int in_c)
    : out_c_(out_c), kernel_(kernel), in_c_(in_c), rows_(ohwi, ohwi + out_c * depth()) {
  const int64_t depth = this->depth();
  row_sums.assign(static_cast<size_t>(out_c), 0);
  for (int o = 0; o < out_c; ++o)
    for (int64_t k = 0; k < depth; ++k) row_sums[o] += ohwi[o * depth + k];
  if (!kernel_path_supported(KernelPath::Avx512Vnni)) return;
  const int64_t in_c4 = (in_c + 3) / 4 * 4, padded_depth = int64_t(kernel) * kernel * in_c4;
  const int64_t blocks = (out_c + vnni::kBlock - 1) / vnni::kBlock;
  blocked.assign(static_cast<size_t>(blocks * vnni::kBlock * padded_depth), 0);
  for (int o = 0; o < out_c; ++o)
    for (int64_t k = 0; k < depth; ++k) {
      const int64_t padded_k = k / in_c * in_c4 + k % in_c;  // (ky, kx) position, then the channel
      const int64_t block = o / vnni::kBlock, lane = o % vnni::kBlock;
      blocked[((block * (padded_depth / 4) + padded_k / 4) * vnni::kBlock + lane) * 4 + padded_k % 4] =
          ohwi[o * depth + k];
    }
}

void conv2d(const ConvGeometry& g, const int8_t* input, const PackedWeights& w, const Epilogue& e, int8_t* output) {
#if defined(OCTET_CPU_VNNI)
  if (kernel_path() == KernelPath::Avx512Vnni) {
    const VnniEpilogue epilogue(w, e.bias, &e);
    return vnni::conv2d(g, input, w.blocked.data(), epilogue.tables, vnni_workspace(g, w), output, nullptr);
  }
#endif
  reference_conv2d(g, input, w, e, output);
}

void conv2d_int32(const ConvGeometry& g, const int8_t* input, const PackedWeights& w, const int32_t* bias,
                  int32_t* output) {
#if defined(OCTET_CPU_VNNI)
  if (kernel_path() == KernelPath::Avx512Vnni) {
    const VnniEpilogue epilogue(w, bias, nullptr);
    return vnni::conv2d(g, input, w.blocked.data(), epilogue.tables, vnni_workspace(g, w), nullptr, output);
  }
#endif
  reference_conv2d_int32(g, input, w, bias, output);
}

void quantize_input(const float* nchw, int64_t batch, int c, int h, int w, float scale, int8_t* nhwc) {
  const int64_t plane = int64_t(h) * w;
#pragma omp parallel for if (batch * plane * c >= kMinParallelWork)
  for (int64_t n = 0; n < batch; ++n)
    for (int ch = 0; ch < c; ++ch) {  // reads each plane in order, so the loop vectorises
      const float* src = nchw + (n * c + ch) * plane;
      int8_t* dst = nhwc + n * plane * c + ch;
      for (int64_t p = 0; p < plane; ++p) dst[p * c] = octet::quantize_input(src[p], scale);
    }
}

void max_pool(const int8_t* in, int64_t batch, int h, int w, int c, int kernel, int stride, int8_t* out) {
  const int oh = (h - kernel) / stride + 1, ow = (w - kernel) / stride + 1;
#pragma omp parallel for if (batch * h * w * c >= kMinParallelWork)
  for (int64_t b = 0; b < batch; ++b)
    for (int oy = 0; oy < oh; ++oy)
      for (int ox = 0; ox < ow; ++ox) {
        int8_t* dst = out + ((b * oh + oy) * ow + ox) * c;
        std::fill(dst, dst + c, static_cast<int8_t>(-128));
        for (int ky = 0; ky < kernel; ++ky)
          for (int kx = 0; kx < kernel; ++kx) {
            const int8_t* src = in + ((b * h + oy * stride + ky) * w + ox * stride + kx) * c;
            for (int ch = 0; ch < c; ++ch) dst[ch] = std::max(dst[ch], src[ch]);
          }
      }
}

void avg_pool(const int8_t* in, int64_t batch, int h, int w, int c, int kernel, int stride, int32_t multiplier,
              int32_t shift, int8_t* out) {
  const int oh = (h - kernel) / stride + 1, ow = (w - kernel) / stride + 1;
#pragma omp parallel for if (batch * h * w * c >= kMinParallelWork)
  for (int64_t b = 0; b < batch; ++b)
    for (int oy = 0; oy < oh; ++oy)
      for (int ox = 0; ox < ow; ++ox)
        for (int ch = 0; ch < c; ++ch) {
          int32_t sum = 0;
          for (int ky = 0; ky < kernel; ++ky)
            for (int kx = 0; kx < kernel; ++kx) sum += in[((b * h + oy * stride + ky) * w + ox * stride + kx) * c + ch];
          out[((b * oh + oy) * ow + ox) * c + ch] = static_cast<int8_t>(requantize(sum, multiplier, 0, 0, shift, -128));
        }
}

void global_avg_pool(const int8_t* in, int64_t batch, int h, int w, int c, int32_t multiplier, int32_t shift,
                     int8_t* out) {
  const int64_t plane = int64_t(h) * w;
#pragma omp parallel for if (batch * plane * c >= kMinParallelWork)
  for (int64_t b = 0; b < batch; ++b) {
    std::vector<int32_t> sum(static_cast<size_t>(c), 0);
    for (int64_t p = 0; p < plane; ++p)
      for (int ch = 0; ch < c; ++ch) sum[ch] += in[(b * plane + p) * c + ch];
    for (int ch = 0; ch < c; ++ch)
      out[b * c + ch] = static_cast<int8_t>(requantize(sum[ch], multiplier, 0, 0, shift, -128));
  }
}

void add(const int8_t* a, const int8_t* b, int64_t count, int32_t multiplier_a, int32_t multiplier_b, int32_t shift,
         bool relu, int8_t* out) {
  const int32_t lo = relu ? 0 : -128;
#pragma omp parallel for if (count >= kMinParallelWork)
  for (int64_t i = 0; i < count; ++i)
    out[i] = static_cast<int8_t>(requantize(a[i], multiplier_a, b[i], multiplier_b, shift, lo));
}

void shortcut_a(const int8_t* in, int64_t batch, int h, int w, int c, int pad, int8_t* out) {
  const int oh = (h + 1) / 2, ow = (w + 1) / 2, oc = c + 2 * pad;
#pragma omp parallel for if (batch * h * w * c >= kMinParallelWork)
  for (int64_t b = 0; b < batch; ++b)
    for (int oy = 0; oy < oh; ++oy)
      for (int ox = 0; ox < ow; ++ox) {
        int8_t* dst = out + ((b * oh + oy) * ow + ox) * oc;
        std::memset(dst, 0, pad);
        std::memcpy(dst + pad, in + ((b * h + 2 * oy) * w + 2 * ox) * c, c);
        std::memset(dst + pad + c, 0, pad);
      }
}

void relu(const int8_t* in, int64_t count, int8_t* out) {
  for (int64_t i = 0; i < count; ++i) out[i] = std::max<int8_t>(in[i], 0);
}

}  // namespace octet::cpu
