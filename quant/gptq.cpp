#include "quant/gptq.h"

#include <Eigen/Dense>
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <exception>
#include <immintrin.h>

#include "common/error.h"
#include "common/progress.h"
#include "graph/layout.h"
#include "graph/op_traits.h"
#include "graph/ordered_gemm.h"
#include "graph/patches.h"
#include "quant/depthwise_gram.h"

namespace octet {

namespace {
using RowMatrixF = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

// A layer's H is estimated from at most this many input rows (patches), spread evenly.
constexpr int64_t kMaxRows = 32768;
// Rows gathered at a time: about 1 MB of patches, so that the Gram's passes
// over them hit the cache (a ResNet-18 layer's 2,048 rows of 4,608 values did
// not), and no fewer than 256, below which the parallel regions cost more.
int64_t rows_per_chunk(int64_t padded) {
  return std::clamp<int64_t>((int64_t{1} << 20) / (padded * int64_t{sizeof(float)}), 256, 2048);
}
// Weight rows GPTQ rounds together, the columns of a step, and the columns
// after it that one pass of apply_step_errors updates.
constexpr int64_t kRowsPerBlock = 64;
constexpr int64_t kColumnsPerStep = 64;
constexpr int64_t kPanelColumns = 32;
// Dampening added to H's diagonal, relative to its mean (GPTQ's default).
constexpr double kDamp = 0.01;

// H's lower triangle += X^T X's, X [rows][K] with rows `stride` apart: the
// Gram matrix is symmetric, so half of it is computed, in fixed blocks of
// kGramColumns columns. Each value is one OrderedGemm chain over the rows, so
// H does not depend on the thread count or the CPU's vector width.
constexpr int64_t kGramColumns = 64;

// The columns [j, j + kGramColumns) of H, from row j down (contiguous in Eigen's column-major H).
void add_lower_gram_block(const float* X, int64_t rows, int64_t stride, Eigen::MatrixXf& H, int64_t j) {
  const int64_t K = H.cols();
  OrderedGemm g;
  g.rows = std::min(kGramColumns, K - j), g.cols = K - j, g.depth = rows;
  g.a = X + j, g.a_row_stride = 1, g.a_depth_stride = stride;
  g.b = X + j, g.b_depth_stride = stride;
  g.c = H.data() + j * K + j, g.c_row_stride = K;
  g.accumulate = true;
  ordered_gemm(g);
}

// Every block, shared between the threads of the enclosing parallel region
// (each of them calls this; it ends in a barrier).
void add_lower_gram_shared(const float* X, int64_t rows, int64_t stride, Eigen::MatrixXf& H) {
#pragma omp for schedule(dynamic)
  for (int64_t j = 0; j < H.cols(); j += kGramColumns) add_lower_gram_block(X, rows, stride, H, j);
}

// row[c] = fma(-errors[k], panel[k][c], row[c]) for k = 0 .. steps-1 in
// order, c < width: one weight row's updates from a step's errors, a full
// panel's 32 values kept in 8 AVX2 registers across the step.
void apply_step_errors(const double* errors, int64_t steps, const double* panel, int64_t width, double* row) {
  static_assert(kPanelColumns == 32);
  if (width == kPanelColumns) {
    __m256d acc[8];
    for (int v = 0; v < 8; ++v) acc[v] = _mm256_loadu_pd(row + 4 * v);
    for (int64_t k = 0; k < steps; ++k) {
      const __m256d e = _mm256_set1_pd(-errors[k]);
      const double* p = panel + k * kPanelColumns;
      for (int v = 0; v < 8; ++v) acc[v] = _mm256_fmadd_pd(e, _mm256_loadu_pd(p + 4 * v), acc[v]);
    }
    for (int v = 0; v < 8; ++v) _mm256_storeu_pd(row + 4 * v, acc[v]);
    return;
  }
  for (int64_t k = 0; k < steps; ++k)
    for (int64_t c = 0; c < width; ++c) row[c] = std::fma(-errors[k], panel[k * kPanelColumns + c], row[c]);
}

// Inverts the lower-triangular matrix held in A's lower triangle, in place
// (LAPACK's blocked trtri: K^3/3 flops, a third of solving L X = I, and no
// second K x K buffer). With L = [L11 0; L21 L22], L^-1's lower-left block is
// -L22^-1 L21 L11^-1, so block columns are done from the last one back.
void invert_lower_in_place(Eigen::MatrixXd& A) {
  constexpr Eigen::Index kBlock = 128;
  const Eigen::Index K = A.rows();
  for (Eigen::Index j = (K - 1) / kBlock * kBlock; j >= 0; j -= kBlock) {
    const Eigen::Index width = std::min(kBlock, K - j), below = K - j - width;
    auto diagonal = A.block(j, j, width, width);
    if (below > 0) {
      auto left = A.block(j + width, j, below, width);
      const Eigen::MatrixXd product =
          A.block(j + width, j + width, below, below).triangularView<Eigen::Lower>() * left;
      left = -product;
      diagonal.triangularView<Eigen::Lower>().solveInPlace<Eigen::OnTheRight>(left);
    }
    Eigen::MatrixXd inverse = Eigen::MatrixXd::Identity(width, width);
    diagonal.triangularView<Eigen::Lower>().solveInPlace(inverse);
    diagonal.triangularView<Eigen::Lower>() = inverse;
  }
}

// Turns H (damped, symmetric) into the upper Cholesky factor U of H^-1
// (H^-1 = U^T U), in place, laid out so that H.data() is U row-major; false
// when H is not positive definite in floating point (degenerate or
// overflowing inputs; Eigen's LLT lets NaN through, hence the finiteness
// tests). With J the order reversal and J H J = M M^T, U = J M^-1 J: one
// Cholesky factorisation and one triangular inverse, without forming H^-1.
bool inverse_cholesky_in_place(Eigen::MatrixXd& H) {
  if (!H.allFinite()) return false;
  H.reverseInPlace();
  const Eigen::LLT<Eigen::Ref<Eigen::MatrixXd>> llt(H);
  if (llt.info() != Eigen::Success) return false;
  invert_lower_in_place(H);
  H.triangularView<Eigen::StrictlyUpper>().setZero();
  // Column-major J M^-T J is U^T, whose memory is U row-major.
  H.transposeInPlace();
  H.reverseInPlace();
  return H.allFinite() && (H.diagonal().array() > 0).all();
}
}  // namespace

Int8Tensor gptq_round_layer(RowMatrixD& W, const std::vector<float>& scale, Eigen::MatrixXd H,
                            const std::string& layer) {
  const int64_t K = W.cols();
  const double damp = kDamp * std::max(H.diagonal().mean(), 1e-12);
  for (int64_t k = 0; k < K; ++k) {
    if (H(k, k) == 0) H(k, k) = 1;  // an input that is always zero: its weights do not matter
    H(k, k) += damp;
  }
  const bool compensate = inverse_cholesky_in_place(H);
  if (!compensate)
    std::fprintf(stderr,
                 "warning: gptq: layer '%s': the statistics of its inputs cannot be factorised (even damped); "
                 "its weights are rounded to nearest\n",
                 layer.c_str());
  // Without a factor no error is compensated: each weight rounds to nearest.
  return gptq_round_with_factor(W, scale, H.data(), compensate);
}

Int8Tensor gptq_round_with_factor(RowMatrixD& W, const std::vector<float>& scale, const double* U, bool compensate) {
  const int64_t O = W.rows(), K = W.cols();
  Int8Tensor q({O, K});
  // Rows in blocks that share U while it is in cache, columns in steps: a
  // step's errors reach the columns inside it at once, and the columns after
  // it together, from a copy of U's panel (its rows are K apart, often a
  // multiple of 4 KB). Every weight still sees the same updates in the same
  // order as row by row, each one fused multiply-add.
#pragma omp parallel for schedule(dynamic)
  for (int64_t first = 0; first < O; first += kRowsPerBlock) {
    const int64_t end = std::min(O, first + kRowsPerBlock);
    std::vector<double> errors(static_cast<size_t>(kRowsPerBlock * kColumnsPerStep));  // [row][column of the step]
    std::vector<double> panel(static_cast<size_t>(kColumnsPerStep * kPanelColumns));
    for (int64_t k0 = 0; k0 < K; k0 += kColumnsPerStep) {
      const int64_t k1 = std::min(K, k0 + kColumnsPerStep);
      for (int64_t k = k0; k < k1; ++k) {
        const double* u = U + k * K;
        for (int64_t o = first; o < end; ++o) {
          const double s = scale[o], w = W(o, k);
          const double level = std::clamp(std::round(w * s), -128.0, 127.0);
          q.data[o * K + k] = static_cast<int8_t>(level);
          if (!compensate) continue;
          const double err = (w - level / s) / u[k];
          errors[(o - first) * kColumnsPerStep + (k - k0)] = err;
          double* row = W.data() + o * K;
          for (int64_t j = k + 1; j < k1; ++j) row[j] = std::fma(-err, u[j], row[j]);
        }
      }
      if (!compensate) continue;
      for (int64_t j0 = k1; j0 < K; j0 += kPanelColumns) {
        const int64_t width = std::min(kPanelColumns, K - j0);
        for (int64_t k = k0; k < k1; ++k) std::copy_n(U + k * K + j0, width, panel.data() + (k - k0) * kPanelColumns);
        for (int64_t o = first; o < end; ++o)
          apply_step_errors(errors.data() + (o - first) * kColumnsPerStep, k1 - k0, panel.data(), width,
                            W.data() + o * K + j0);
      }
    }
  }
  return q;
}

GptqStatistics::GptqStatistics(const FloatExecutor& executor, int64_t count)
    : graph_(executor.graph()), shapes_(executor.shapes()), count_(count), hessians_(graph_.nodes.size()) {}

void GptqStatistics::add(int producer, const FloatTensor& act, int64_t first) {
  const int64_t n = std::min(act.dim(0), count_ - first);
  if (n <= 0) return;
  for (size_t i = static_cast<size_t>(producer) + 1; i < graph_.nodes.size(); ++i) {
    const Node& node = graph_.nodes[i];
    if (!op_traits(node.op).weighted || node.inputs[0] != producer) continue;
    const ActShape in = shapes_[producer], out = shapes_[i];
    const int64_t K = patch_size(node, in), rows = patch_rows(node, out, n);
    const int64_t total_rows = patch_rows(node, out, count_);
    const int64_t stride = std::max<int64_t>(1, total_rows / kMaxRows);
    std::vector<Eigen::MatrixXf>& group_hessians = hessians_[i];
    if (group_hessians.empty()) group_hessians.assign(node.groups, Eigen::MatrixXf::Zero(K, K));
    // Every stride-th row of the whole calibration set, counted from its first image.
    const int64_t offset = patch_rows(node, out, first), first_row = (stride - offset % stride) % stride;
    const int64_t picked = first_row < rows ? (rows - 1 - first_row) / stride + 1 : 0;
    if (one_channel_per_group(node, in)) {
      add_depthwise_gram(node, in, out, act.ptr(), first_row, stride, picked, group_hessians);
      continue;
    }
    // Rows padded for OrderedGemm, whose B rows are read in whole vectors.
    const int64_t padded = ordered_gemm_padded(K);
    const int64_t chunk_rows = rows_per_chunk(padded);
    const size_t chunk_size = static_cast<size_t>(std::min(chunk_rows, picked) * padded);
    const auto gather = [&](int group, int64_t done, int64_t count, float* chunk) {
      for (int64_t k = 0; k < count; ++k)
        gather_patches(node, in, out, act.ptr(), first_row + (done + k) * stride, 1, chunk + k * padded, group);
    };
    if (node.groups > 1) {
      // Groups side by side: a group's rows are short (a depthwise conv's are its taps), and one
      // parallel region per group and chunk cost more than the work in it. Each group's H is the
      // same chain of sums either way.
#pragma omp parallel
      {
        std::vector<float> chunk(chunk_size, 0.0f);
#pragma omp for schedule(dynamic)
        for (int group = 0; group < node.groups; ++group)
          for (int64_t done = 0; done < picked; done += chunk_rows) {
            const int64_t count = std::min(chunk_rows, picked - done);
            gather(group, done, count, chunk.data());
            for (int64_t j = 0; j < K; j += kGramColumns)
              add_lower_gram_block(chunk.data(), count, padded, group_hessians[group], j);
          }
      }
      continue;
    }
    // One parallel region for all chunks: with OMP_WAIT_POLICY=passive each
    // region wakes the other threads, two regions per chunk cost ResNet-20 0.05 s.
    std::vector<float> chunk(chunk_size, 0.0f);
#pragma omp parallel
    for (int64_t done = 0; done < picked; done += chunk_rows) {
      const int64_t count = std::min(chunk_rows, picked - done);
#pragma omp for
      for (int64_t k = 0; k < count; ++k) gather(0, done + k, 1, chunk.data() + k * padded);
      add_lower_gram_shared(chunk.data(), count, padded, group_hessians[0]);
    }
  }
}

std::map<std::string, Int8Tensor> GptqStatistics::round(const FloatModel& folded,
                                                        const std::map<std::string, FloatTensor>& scales) const {
  // Layers side by side, the largest first: a layer's factorisation runs on
  // one thread, and the few largest layers are most of the time.
  std::vector<int> layers;
  for (size_t i = 0; i < graph_.nodes.size(); ++i)
    if (op_traits(graph_.nodes[i].op).weighted) layers.push_back(static_cast<int>(i));
  const auto work = [&](int i) {  // groups x K^3: the factorisations
    const int64_t K = hessians_[i].empty() ? 0 : hessians_[i][0].rows();
    return static_cast<int64_t>(hessians_[i].size()) * K * K * K;
  };
  std::stable_sort(layers.begin(), layers.end(), [&](int a, int b) { return work(a) > work(b); });
  std::vector<Int8Tensor> levels(graph_.nodes.size());
  Progress rounding("gptq: rounding", static_cast<int64_t>(layers.size()));
  std::exception_ptr error;
#pragma omp parallel for schedule(dynamic, 1)
  for (size_t l = 0; l < layers.size(); ++l) {
    try {
      const int i = layers[l];
      const Node& node = graph_.nodes[i];
      const FloatTensor nhwc = nhwc_weight(graph_, shapes_, i, folded.weight(node));
      check(static_cast<int>(hessians_[i].size()) == node.groups,
            "gptq: layer '" + node.name + "': no input statistics were recorded");
      const int64_t O = nhwc.dim(0), K = nhwc.dim(1), per_group = O / node.groups;
      const std::vector<float>& scale = scales.at(node.name).data;
      levels[i] = Int8Tensor({O, K});
      // A group's output channels read only its input channels: each group is a layer of its own.
      for (int group = 0; group < node.groups; ++group) {
        const int64_t first = group * per_group;
        RowMatrixD W = Eigen::Map<const RowMatrixF>(nhwc.ptr() + first * K, per_group, K).cast<double>();
        Eigen::MatrixXd H = hessians_[i][group].cast<double>();
        for (Eigen::Index c = 1; c < H.cols(); ++c)  // add() kept the lower triangle
          for (Eigen::Index r = 0; r < c; ++r) H(r, c) = H(c, r);
        const std::string name = node.groups == 1 ? node.name : node.name + " group " + std::to_string(group);
        const Int8Tensor q = gptq_round_layer(W, std::vector<float>(scale.begin() + first, scale.begin() + first + per_group),
                                              std::move(H), name);
        std::copy(q.data.begin(), q.data.end(), levels[i].data.begin() + first * K);
      }
    } catch (...) {
#pragma omp critical(octet_gptq_error)
      error = std::current_exception();
    }
#pragma omp critical(octet_gptq_progress)
    rounding.advance();
  }
  if (error) std::rethrow_exception(error);
  std::map<std::string, Int8Tensor> out;
  for (int i : layers) {
    const Node& node = graph_.nodes[i];
    out[node.name] = torch_weight(graph_, shapes_, i, levels[i], folded.weight(node).shape);
  }
  return out;
}

}  // namespace octet
