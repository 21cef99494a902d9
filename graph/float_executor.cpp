#include "graph/float_executor.h"

#include <algorithm>
#include <cstring>
#include <limits>
#include <memory>

#include "common/error.h"
#include "graph/layout.h"
#include "graph/op_traits.h"
#include "graph/ordered_gemm.h"

namespace octet {

namespace {

// Rows of im2col handled per task: bounds the scratch buffer (to 8 MB for
// wide patches) and gives OpenMP work to share (a late ResNet-18 layer has
// only 2048 rows per batch of 128).
constexpr int64_t kRowsPerTask = 2048;
// Element-wise loops this short run on the calling thread (waking the others costs more).
constexpr int64_t kMinParallelElements = int64_t(1) << 15;
int64_t conv_rows_per_task(int64_t patch) { return std::min<int64_t>(kRowsPerTask, (int64_t(1) << 21) / patch); }

}  // namespace

FloatTensor to_nhwc(const float* nchw, int64_t batch, const ActShape& s) {
  FloatTensor out({batch, s.h, s.w, s.c});
  const int64_t plane = static_cast<int64_t>(s.h) * s.w;
#pragma omp parallel for
  for (int64_t n = 0; n < batch; ++n)
    for (int c = 0; c < s.c; ++c)
      for (int64_t p = 0; p < plane; ++p) out.data[(n * plane + p) * s.c + c] = nchw[(n * s.c + c) * plane + p];
  return out;
}

void gather_patches(const Node& n, const ActShape& in, const ActShape& out, const float* x, int64_t first,
                    int64_t count, float* rows) {
  const int64_t K = patch_size(n, in);
  if (n.op != Op::Conv2d) {
    std::memcpy(rows, x + first * K, sizeof(float) * count * K);
    return;
  }
  for (int64_t r = 0; r < count; ++r) {
    const int64_t m = first + r, ox = m % out.w, oy = (m / out.w) % out.h, b = m / (int64_t(out.w) * out.h);
    // A kernel row's taps inside the image are adjacent pixels in NHWC: one copy.
    const int64_t x0 = ox * n.stride - n.padding;
    const int64_t kx_begin = std::clamp<int64_t>(-x0, 0, n.kernel), kx_end = std::clamp<int64_t>(in.w - x0, 0, n.kernel);
    float* dst = rows + r * K;
    for (int ky = 0; ky < n.kernel; ++ky, dst += int64_t(n.kernel) * in.c) {
      const int64_t iy = oy * n.stride - n.padding + ky;
      if (iy < 0 || iy >= in.h || kx_begin >= kx_end) {
        std::fill(dst, dst + int64_t(n.kernel) * in.c, 0.0f);
        continue;
      }
      std::fill(dst, dst + kx_begin * in.c, 0.0f);
      std::memcpy(dst + kx_begin * in.c, x + ((b * in.h + iy) * in.w + x0 + kx_begin) * in.c,
                  sizeof(float) * (kx_end - kx_begin) * in.c);
      std::fill(dst + kx_end * in.c, dst + int64_t(n.kernel) * in.c, 0.0f);
    }
  }
}

FloatExecutor::FloatExecutor(const FloatModel& model) : graph_(model.graph), shapes_(model.graph.shapes()) {
  ordered_gemm_default_path();  // a bad OCTET_ORDERED_GEMM is refused here, not inside a parallel loop
  last_reader_ = graph_.last_readers();
  last_reader_.back() = static_cast<int>(graph_.nodes.size());  // the output outlives every range
  layers_.resize(graph_.nodes.size());
  for (size_t i = 0; i < graph_.nodes.size(); ++i) {
    const Node& n = graph_.nodes[i];
    if (!op_traits(n.op).weighted) continue;
    layers_[i].weight = nhwc_weight(graph_, shapes_, static_cast<int>(i), model.weight(n));
    layers_[i].bias = model.bias(n).data;
  }
}

FloatTensor FloatExecutor::run(const float* input, int64_t batch, const Observer& observer) const {
  std::vector<FloatTensor> values(graph_.nodes.size());
  values[0] = to_nhwc(input, batch, shapes_[0]);
  if (observer) observer(0, values[0]);
  run_nodes(values, 1, static_cast<int>(graph_.nodes.size()), observer);
  FloatTensor logits = std::move(values.back());
  logits.shape = {batch, shapes_.back().c};
  return logits;
}

void FloatExecutor::run_nodes(std::vector<FloatTensor>& values, int first, int end, const Observer& observer) const {
  // Buffers of released values, reused for outputs of the same size (a fresh one is zero-filled on
  // this thread); only the newest few are kept, so that no more memory is held than before.
  std::vector<std::vector<float>> freed;
  constexpr size_t kFreedKept = 2;
  for (int i = first; i < end; ++i) {
    const size_t size = static_cast<size_t>(values[graph_.nodes[i].inputs.at(0)].dim(0) * shapes_[i].numel());
    const auto fits = std::find_if(freed.begin(), freed.end(), [&](const auto& b) { return b.size() == size; });
    std::vector<float> storage;
    if (fits != freed.end()) {
      storage = std::move(*fits);
      freed.erase(fits);
    }
    values[i] = run_node(i, values, std::move(storage));
    if (observer) observer(i, values[i]);
    for (int in : graph_.nodes[i].inputs)
      if (last_reader_[in] == i) {
        freed.push_back(std::move(values[in].data));
        if (freed.size() > kFreedKept) freed.erase(freed.begin());
        values[in] = FloatTensor();
      }
  }
  for (int i = first; i < end; ++i)
    if (last_reader_[i] < end) values[i] = FloatTensor();
}

FloatTensor FloatExecutor::run_node(int i, const std::vector<FloatTensor>& values, std::vector<float> storage) const {
  const Node& n = graph_.nodes[i];
  const FloatTensor& x = values[n.inputs.at(0)];
  const int64_t N = x.dim(0);
  const ActShape in = shapes_[n.inputs[0]], out = shapes_[i];
  const Shape shape = {N, out.h, out.w, out.c};
  FloatTensor y = static_cast<int64_t>(storage.size()) == shape_numel(shape) ? FloatTensor(shape, std::move(storage))
                                                                             : FloatTensor(shape);
  switch (n.op) {
    case Op::Conv2d:
    case Op::Linear: {
      // Fixed row tasks, each an OrderedGemm: the bits depend on neither the
      // thread count nor the CPU's vector width.
      const Layer& layer = layers_[i];
      const bool conv = n.op == Op::Conv2d;
      const int64_t K = layer.weight.dim(1), rows = conv ? N * out.h * out.w : N;
      const int64_t per_task = conv ? conv_rows_per_task(K) : kRowsPerTask;
      const std::vector<float> weight_t = transpose_padded(layer.weight.ptr(), out.c, K);
#pragma omp parallel for schedule(dynamic)
      for (int64_t first = 0; first < rows; first += per_task) {
        const int64_t count = std::min(per_task, rows - first);
        std::unique_ptr<float[]> patches;  // not zero-filled: gather_patches writes every value
        if (conv) {
          patches.reset(new float[static_cast<size_t>(count * K)]);
          gather_patches(n, in, out, x.ptr(), first, count, patches.get());
        }
        OrderedGemm g;
        g.rows = count, g.cols = out.c, g.depth = K;
        g.a = conv ? patches.get() : x.ptr() + first * K;
        g.a_row_stride = K, g.a_depth_stride = 1;
        g.b = weight_t.data(), g.b_depth_stride = ordered_gemm_padded(out.c);
        g.c = y.ptr() + first * out.c, g.c_row_stride = out.c;
        ordered_gemm(g);
        for (int64_t r = 0; r < count; ++r)
          for (int c = 0; c < out.c; ++c) g.c[r * out.c + c] += layer.bias[c];
      }
      break;
    }
    case Op::MaxPool2d:
    case Op::AvgPool2d: {
      const bool is_max = n.op == Op::MaxPool2d;
      const float inv = 1.0f / static_cast<float>(n.kernel * n.kernel);
#pragma omp parallel for
      for (int64_t b = 0; b < N; ++b)
        for (int oy = 0; oy < out.h; ++oy)
          for (int ox = 0; ox < out.w; ++ox)
            for (int c = 0; c < out.c; ++c) {
              float acc = is_max ? -std::numeric_limits<float>::infinity() : 0.0f;
              for (int ky = 0; ky < n.kernel; ++ky)
                for (int kx = 0; kx < n.kernel; ++kx) {
                  const float v =
                      x.data[((b * in.h + oy * n.stride + ky) * in.w + ox * n.stride + kx) * in.c + c];
                  acc = is_max ? std::max(acc, v) : acc + v;
                }
              y.data[((b * out.h + oy) * out.w + ox) * out.c + c] = is_max ? acc : acc * inv;
            }
      break;
    }
    case Op::GlobalAvgPool: {
      const int64_t plane = static_cast<int64_t>(in.h) * in.w;
      const float inv = 1.0f / static_cast<float>(plane);
      for (int64_t b = 0; b < N; ++b)
        for (int c = 0; c < in.c; ++c) {
          float acc = 0;
          for (int64_t p = 0; p < plane; ++p) acc += x.data[(b * plane + p) * in.c + c];
          y.data[b * in.c + c] = acc * inv;
        }
      break;
    }
    case Op::Add: {
      const FloatTensor& z = values[n.inputs[1]];
#pragma omp parallel for if (y.numel() >= kMinParallelElements)
      for (int64_t k = 0; k < y.numel(); ++k) y.data[k] = x.data[k] + z.data[k];
      break;
    }
    case Op::ShortcutA: {
      std::fill(y.data.begin(), y.data.end(), 0.0f);
      for (int64_t b = 0; b < N; ++b)
        for (int oy = 0; oy < out.h; ++oy)
          for (int ox = 0; ox < out.w; ++ox)
            std::memcpy(y.ptr() + ((b * out.h + oy) * out.w + ox) * out.c + n.channels,
                        x.ptr() + ((b * in.h + 2 * oy) * in.w + 2 * ox) * in.c, sizeof(float) * in.c);
      break;
    }
    case Op::ReLU:
    case Op::Flatten: y.data = x.data; break;
    case Op::Input:
    case Op::BatchNorm2d: fail(std::string("float executor: unexpected ") + op_name(n.op) + " node '" + n.name + "'");
  }
  // Element-wise: the threads' shares do not change any value.
  if (op_traits(n.op).absorbs_residual && n.inputs.size() == 2) {
    const FloatTensor& skip = values[n.inputs[1]];
#pragma omp parallel for if (y.numel() >= kMinParallelElements)
    for (int64_t k = 0; k < y.numel(); ++k) y.data[k] += skip.data[k];
  }
  if (n.relu || n.op == Op::ReLU) {
#pragma omp parallel for if (y.numel() >= kMinParallelElements)
    for (int64_t k = 0; k < y.numel(); ++k) y.data[k] = std::max(y.data[k], 0.0f);
  }
  return y;
}

}  // namespace octet
