#include "quant/quantize.h"

#include <algorithm>
#include <cmath>
#include <exception>
#include <iterator>
#include <limits>
#include <map>
#include <memory>
#include <numeric>
#include <optional>

#include "common/error.h"
#include "common/progress.h"
#include "graph/op.h"
#include "qmodel/checkpoint_identity.h"
#include "quant/fixed_point.h"
#include "runtime/cpu/engine.h"

namespace octet {

namespace {

float scale_for(double amax) { return amax > 0 ? static_cast<float>(127.0 / amax) : 1.0f; }

// The quantized graph before any scale is known: which float node each
// quantized node comes from, and whose statistics give its scale.
struct Plan {
  Graph graph;
  std::vector<int> stats_node;   // float node whose output this node's int8 output stands for
  std::vector<bool> own_scale;   // a quantization point
};

Plan plan_graph(const Graph& fg) {
  const auto consumers = fg.consumers();
  const size_t N = fg.nodes.size();
  std::vector<int> fused_conv(N, -1), skip_of(N, -1);
  std::vector<bool> is_fused(N, false);
  for (size_t a = 0; a < N; ++a) {
    const Node& add = fg.nodes[a];
    if (add.op != Op::Add) continue;
    for (int k = 0; k < 2; ++k) {
      const int c = add.inputs[k];
      const Node& conv = fg.nodes[c];
      if (op_traits(conv.op).absorbs_residual && conv.inputs.size() == 1 && !conv.relu && consumers[c].size() == 1 &&
          !is_fused[c]) {
        fused_conv[a] = c;
        skip_of[a] = add.inputs[1 - k];
        is_fused[c] = true;
        break;
      }
    }
  }
  Plan plan;
  std::vector<int> new_index(N, -1);
  for (size_t f = 0; f < N; ++f) {
    if (is_fused[f]) continue;
    Node n = fg.nodes[f];
    if (fused_conv[f] >= 0) {  // emit the conv at the add's place, so its skip input already exists
      const Node& add = fg.nodes[f];
      n = fg.nodes[fused_conv[f]];
      n.inputs = {n.inputs[0], skip_of[f]};
      n.relu = add.relu;
    }
    for (int& in : n.inputs) in = new_index[in];
    plan.graph.nodes.push_back(n);
    new_index[f] = static_cast<int>(plan.graph.nodes.size()) - 1;
    if (fused_conv[f] >= 0) new_index[fused_conv[f]] = new_index[f];
    plan.stats_node.push_back(static_cast<int>(f));
    plan.own_scale.push_back(op_traits(n.op).owns_scale && f + 1 != N);
  }
  plan.graph.validate();
  return plan;
}

// Int8 weights and scales of every conv and linear, by layer name.
std::map<std::string, QuantizedWeights> quantize_all_weights(const FloatModel& folded, const FloatPassRecord& record,
                                                             const QuantizeOptions& o) {
  std::map<std::string, QuantizedWeights> weights;
  std::map<std::string, FloatTensor> scales;
  for (const Node& n : folded.graph.nodes) {
    if (!op_traits(n.op).weighted) continue;
    weights[n.name] = quantize_weights(folded.weight(n), o.per_channel, o.scheme == "lab", n.name);
    scales[n.name] = weights[n.name].scales;
  }
  if (record.gptq())
    for (auto& [name, levels] : record.gptq()->round(folded, scales)) weights[name].values = levels;
  return weights;
}

// The quantized model's graph and description, its parameters still empty.
QuantizedModel model_header(const Checkpoint& checkpoint, const Plan& plan, const QuantizeOptions& o,
                            const Calibration& cal) {
  QuantizedModel qm;
  qm.graph = plan.graph;
  qm.model = checkpoint.model;
  qm.source = checkpoint_identity(checkpoint);
  qm.dataset = checkpoint.dataset;
  qm.classes = checkpoint.classes;
  qm.mean = checkpoint.mean;
  qm.std = checkpoint.std;
  qm.method = amax_method_name(o.method);
  qm.granularity = o.per_channel ? "per-channel" : "per-tensor";
  qm.scheme = o.scheme;
  qm.weight_rounding = o.scheme == "lab" ? "nearest" : o.weight_rounding;
  qm.calibration_samples = cal.samples;

  return qm;
}

// Fills the quantization parameters of `qm` (whose graph is the plan's) from
// the amax of every quantization point, by float node: scales, int8 weights,
// int32 biases and the fixed-point multipliers of every requantization.
void fill_quant(const Plan& plan, const FloatModel& folded, const std::map<std::string, QuantizedWeights>& weights,
                const std::vector<double>& amax, const std::vector<std::string>& methods, QuantizedModel* qm) {
  const size_t N = plan.graph.nodes.size();
  qm->quant.assign(N, NodeQuant());
  const std::vector<ActShape> shapes = qm->graph.shapes();
  for (size_t i = 0; i < N; ++i) {
    const Node& n = qm->graph.nodes[i];
    NodeQuant& q = qm->quant[i];
    const std::string where = "layer '" + n.name + "'";
    if (plan.own_scale[i]) {
      const int f = plan.stats_node[i];
      q.amax = static_cast<float>(amax[f]);
      q.scale = scale_for(amax[f]);
      q.method = amax[f] > 0 ? methods[f] : "zero tensor (scale 1)";
    } else if (i + 1 < N) {
      q.scale = qm->quant[n.inputs[0]].scale;
      q.amax = qm->quant[n.inputs[0]].amax;
      q.method = "inherited";
    }
    const float s_in = n.inputs.empty() ? 0.0f : qm->quant[n.inputs[0]].scale;
    if (op_traits(n.op).weighted) {
      const QuantizedWeights& w = weights.at(n.name);
      q.weight = w.values;
      q.weight_scale = w.scales;
      const FloatTensor& bias = folded.bias(n);
      const int64_t O = n.channels;
      q.bias = Int32Tensor({O});
      for (int64_t c = 0; c < O; ++c) {
        const double b = std::round(double(bias.data[c]) * s_in * w.scales.data[c]);
        check(std::abs(b) < 2147483647.0, where + ": bias " + std::to_string(bias.data[c]) +
                                              " overflows int32 at scale s_in * s_w (the input scale is too fine)");
        q.bias.data[c] = static_cast<int32_t>(b);
      }
      if (i + 1 == N) {
        q.logit_scale = FloatTensor({O});
        for (int64_t c = 0; c < O; ++c) q.logit_scale.data[c] = 1.0f / (s_in * w.scales.data[c]);
      } else {
        q.multiplier = Int32Tensor({O});
        q.shift = Int32Tensor({O});
        if (n.inputs.size() == 2) q.skip_multiplier = Int32Tensor({O});
        for (int64_t c = 0; c < O; ++c) {
          std::vector<double> reals = {double(q.scale) / (double(s_in) * w.scales.data[c])};
          if (n.inputs.size() == 2) reals.push_back(double(q.scale) / qm->quant[n.inputs[1]].scale);
          const FixedPoint fp = to_fixed_point(reals, where + " channel " + std::to_string(c));
          q.multiplier.data[c] = fp.multipliers[0];
          q.shift.data[c] = fp.shift;
          if (n.inputs.size() == 2) q.skip_multiplier.data[c] = fp.multipliers[1];
        }
      }
    } else if (op_traits(n.op).input_multipliers > 0) {
      // One multiplier per input it rescales: output scale / (input scale x window).
      std::vector<double> reals;
      const double window = op_window(n, shapes);
      for (int in : n.inputs) reals.push_back(double(q.scale) / (double(qm->quant[in].scale) * window));
      const FixedPoint fp = to_fixed_point(reals, where);
      q.multiplier = Int32Tensor({static_cast<int64_t>(reals.size())}, fp.multipliers);
      q.shift = Int32Tensor({1}, std::vector<int32_t>{fp.shift});
    }
  }
}

// KL(softmax(target) || softmax(logits)) of each of `rows` images. Unlike a
// plain logit MSE it weighs images near a decision boundary most, which is
// what decides whether int8 and float predict the same class.
void softmax_kl(const float* target, const float* logits, int64_t rows, int64_t classes, double* kl) {
  for (int64_t r = 0; r < rows; ++r) {
    const float* t = target + r * classes;
    const float* l = logits + r * classes;
    const double tmax = *std::max_element(t, t + classes), lmax = *std::max_element(l, l + classes);
    double tsum = 0, lsum = 0;
    for (int64_t k = 0; k < classes; ++k) {
      tsum += std::exp(t[k] - tmax);
      lsum += std::exp(l[k] - lmax);
    }
    kl[r] = 0;
    for (int64_t k = 0; k < classes; ++k) {
      const double log_p = t[k] - tmax - std::log(tsum), log_q = l[k] - lmax - std::log(lsum);
      kl[r] += std::exp(log_p) * (log_p - log_q);
    }
  }
}

// Images one engine run scores: the unit of work shared between threads.
constexpr int64_t kAutoChunk = 32;
// `auto` scores every candidate on this many images and only the best
// kFinalists on the rest: candidates clearly behind after these stay behind,
// and scoring them further was most of the search's time.
constexpr int64_t kShortlistImages = 256;
constexpr size_t kFinalists = 3;
// The methods `auto` tries. Not 3-sigma: on post-ReLU activations mean + 3
// std clips far too much, and on the zoo models it never made the shortlist.
const AmaxMethod kAutoCandidates[] = {AmaxMethod::Max, AmaxMethod::Percentile, AmaxMethod::Entropy, AmaxMethod::Mse};
// The amax of points `auto` has not decided yet: mse, the method it picks
// most often on the zoo models.
constexpr AmaxMethod kProvisional = AmaxMethod::Mse;

// `auto`, scored on the int8 runtime: walking the quantization points in
// graph order, each candidate amax is built into the int8 model it makes
// (earlier points as decided, later ones at a provisional amax) and the one
// whose logits are closest (softmax KL) to float's on calibration images wins.
// Scoring the integer model itself counts the later points' rounding too, and
// runs at int8 speed. The int8 outputs up to the point being decided are
// computed once; each candidate runs only the rest of the network.
void choose_auto(const Plan& plan, const FloatModel& folded, const std::map<std::string, QuantizedWeights>& weights,
                 const Calibration& cal, const FloatTensor& target, const QuantizeOptions& o,
                 const std::vector<int>& points, const QuantizedModel& header, std::vector<double>* amax,
                 std::vector<std::string>* methods) {
  const int64_t samples = target.dim(0), classes = target.dim(1);
  const int64_t per_image = static_cast<int64_t>(cal.images.size()) / cal.samples;
  // Every candidate amax of every point, side by side (entropy and mse search the histograms).
  constexpr size_t kMethods = std::size(kAutoCandidates);
  std::vector<double> candidate_amax(points.size() * kMethods);
  std::exception_ptr amax_error;
#pragma omp parallel for schedule(dynamic)
  for (size_t t = 0; t < candidate_amax.size(); ++t) {
    try {
      candidate_amax[t] = compute_amax(cal.stats[points[t / kMethods]], kAutoCandidates[t % kMethods], o.percentile);
    } catch (...) {
#pragma omp critical(octet_auto_error)
      amax_error = std::current_exception();
    }
  }
  if (amax_error) std::rethrow_exception(amax_error);
  const size_t provisional = std::find(std::begin(kAutoCandidates), std::end(kAutoCandidates), kProvisional) -
                             std::begin(kAutoCandidates);
  for (size_t k = 0; k < points.size(); ++k) {
    (*amax)[points[k]] = candidate_amax[k * kMethods + provisional];
    (*methods)[points[k]] = amax_method_name(kProvisional);
  }
  const auto model_with = [&](const std::vector<double>& trial) {
    QuantizedModel m = header;
    fill_quant(plan, folded, weights, trial, *methods, &m);
    return m;
  };
  const CpuEngine packed(model_with(*amax));
  const int nodes = static_cast<int>(plan.graph.nodes.size());
  const std::vector<ActShape> shapes = plan.graph.shapes();
  const std::vector<int> last_reader = plan.graph.last_readers();
  std::vector<int> plan_node(folded.graph.nodes.size(), -1);
  for (int i = 0; i < nodes; ++i)
    if (plan.own_scale[i]) plan_node[plan.stats_node[i]] = i;
  // int8 outputs of the decided nodes [0, computed) that a later node reads, for all images.
  std::vector<std::vector<int8_t>> state(nodes);
  int computed = 0;
  const auto given_at = [&](int64_t first_image) {
    return [&, first_image](int node) { return state[node].data() + first_image * shapes[node].numel(); };
  };
  // Per image, the KL of the model as decided so far (undecided points
  // provisional); empty while unknown.
  std::vector<double> current_kl;
  Progress progress("auto: choosing amax per tensor", static_cast<int64_t>(points.size()));
  for (size_t k = 0; k < points.size(); ++k) {
    const int p = points[k], q = plan_node[p];
    if (q > computed) {  // advance the kept outputs to node q with the choices made so far
      const CpuEngine decided(model_with(*amax), packed);
      std::vector<bool> kept(static_cast<size_t>(nodes), false);
      for (int i = computed; i < q; ++i)
        if (last_reader[i] >= q) {
          kept[i] = true;
          state[i].reserve(static_cast<size_t>(samples * shapes[i].numel()));
        }
      // The chunks run in order, so each kept output is appended (not zeroed, then overwritten).
      for (int64_t first = 0; first < samples; first += kAutoChunk) {
        const int64_t rows = std::min(kAutoChunk, samples - first);
        decided.run_nodes(cal.images.data() + first * per_image, rows, computed, q, given_at(first),
                          [&](int node, const int8_t* values, int64_t count) {
                            if (kept[node]) state[node].insert(state[node].end(), values, values + count);
                          });
      }
      for (int i = computed; i < q; ++i)
        check(!kept[i] || state[i].size() == static_cast<size_t>(samples * shapes[i].numel()),
              "auto: the int8 output of node '" + plan.graph.nodes[i].name + "' was not seen for every image");
      for (int i = 0; i < q; ++i)
        if (last_reader[i] < q) std::vector<int8_t>().swap(state[i]);
      computed = q;
    }
    std::vector<std::pair<double, AmaxMethod>> candidates;
    for (size_t m = 0; m < kMethods; ++m) {
      const double a = candidate_amax[k * kMethods + m];
      const bool seen = std::any_of(candidates.begin(), candidates.end(),
                                    [&](const auto& c) { return std::abs(c.first - a) <= 1e-4 * std::max(a, 1e-12); });
      if (!seen) candidates.emplace_back(a, kAutoCandidates[m]);
    }
    // Each candidate's int8 model; one whose bias overflows int32 (an amax
    // so small the input scale is too fine) is not a candidate.
    // The candidate that leaves the model as it is (the provisional amax)
    // already has its score when the previous point's winner was scored.
    std::vector<std::unique_ptr<CpuEngine>> engines;
    std::vector<int> alive;
    int unchanged = -1;
    for (size_t c = 0; c < candidates.size(); ++c) {
      std::vector<double> trial = *amax;
      trial[p] = candidates[c].first;
      if (trial == *amax && !current_kl.empty()) {
        engines.push_back(nullptr);
        alive.push_back(static_cast<int>(c));
        unchanged = static_cast<int>(c);
        continue;
      }
      try {
        engines.push_back(std::make_unique<CpuEngine>(model_with(trial), packed));
        alive.push_back(static_cast<int>(c));
      } catch (const Error&) {
        engines.push_back(nullptr);
      }
    }
    // Every candidate is scored on the first kShortlistImages images, the
    // best kFinalists of them on the rest. Chunks of all candidates in a
    // stage run side by side, one per thread (the layers inside on one thread
    // each); int8 results do not depend on threads, so neither does the choice.
    std::vector<std::vector<double>> kl(candidates.size(), std::vector<double>(samples));  // per image
    if (unchanged >= 0) kl[unchanged] = current_kl;
    // KL sums over the images scored so far. KL >= 0, so a candidate whose
    // sum passes `bound`, the lowest total of a candidate scored on every
    // image, cannot win: it is not scored further (which does not change the
    // winner, only how soon the others stop).
    std::vector<double> partial(candidates.size(), 0.0);
    double bound = std::numeric_limits<double>::infinity();
    // The slack covers the rounding of sums added in whatever order threads
    // finish: a near tie is left to rank(), whose order is fixed.
    const auto cannot_win = [&](int c) {
      double sum, limit;
#pragma omp critical(octet_auto_partial)
      {
        sum = partial[c];
        limit = bound;
      }
      return sum > limit * (1 + 1e-9);
    };
    // Scores the candidates in `which` on images [begin, end), one after the
    // other (so the first completes first). In the last stage (`last`: the
    // earlier images already in `partial`), a candidate scored on every image
    // bounds the others with its total.
    const auto score = [&](std::vector<int> which, int64_t begin, int64_t end, bool last) {
      which.erase(std::remove(which.begin(), which.end(), unchanged), which.end());
      const int64_t chunks = (end - begin + kAutoChunk - 1) / kAutoChunk;
      std::vector<int64_t> chunks_done(candidates.size(), 0);
      const int64_t tasks = static_cast<int64_t>(which.size()) * chunks;
      std::exception_ptr error;
#pragma omp parallel for schedule(dynamic, 1)
      for (int64_t t = 0; t < tasks; ++t) {
        try {
          const int c = which[t / chunks];
          if (cannot_win(c)) continue;
          const int64_t first = begin + (t % chunks) * kAutoChunk, rows = std::min(kAutoChunk, end - first);
          const FloatTensor logits = engines[c]->dequantize_logits(
              engines[c]->run_nodes(cal.images.data() + first * per_image, rows, q, nodes, given_at(first)));
          softmax_kl(target.ptr() + first * classes, logits.ptr(), rows, classes, kl[c].data() + first);
          const double sum = std::accumulate(kl[c].begin() + first, kl[c].begin() + first + rows, 0.0);
#pragma omp critical(octet_auto_partial)
          {
            partial[c] += sum;
            if (++chunks_done[c] == chunks && last) bound = std::min(bound, partial[c]);
          }
        } catch (...) {
#pragma omp critical(octet_auto_error)
          error = std::current_exception();
        }
      }
      if (error) std::rethrow_exception(error);
    };
    // The candidates in `which` by their KL sum over the first `end` images, the first candidate on a tie.
    const auto rank = [&](std::vector<int> which, int64_t end) {
      std::vector<double> sums(candidates.size());
      for (int c : which) sums[c] = std::accumulate(kl[c].begin(), kl[c].begin() + end, 0.0);
      std::stable_sort(which.begin(), which.end(), [&](int x, int y) { return sums[x] < sums[y]; });
      return which;
    };
    const bool compared = alive.size() > 1;
    if (compared) {
      const int64_t shortlist_end = std::min(samples, kShortlistImages);
      score(alive, 0, shortlist_end, false);
      alive = rank(alive, shortlist_end);
      if (alive.size() > kFinalists) alive.resize(kFinalists);
      const std::vector<int> finalists_by_rank = alive;
      std::sort(alive.begin(), alive.end());
      for (int c : alive) partial[c] = std::accumulate(kl[c].begin(), kl[c].begin() + shortlist_end, 0.0);
      if (std::find(alive.begin(), alive.end(), unchanged) != alive.end())
        bound = std::accumulate(current_kl.begin(), current_kl.end(), 0.0);
      score(finalists_by_rank, shortlist_end, samples, true);
      alive.erase(std::remove_if(alive.begin(), alive.end(), cannot_win), alive.end());
      alive = rank(alive, samples);
    }
    if (compared)  // the winner was scored on every image
      current_kl = kl[alive[0]];
    else if (!alive.empty() && candidates[alive[0]].first != (*amax)[p])
      current_kl.clear();
    if (!alive.empty()) {
      (*amax)[p] = candidates[alive[0]].first;
      (*methods)[p] = amax_method_name(candidates[alive[0]].second);
    }
    progress.advance();
  }
}

}  // namespace

FloatPassRecord float_pass_record(const FloatExecutor& executor, const QuantizeOptions& o, int64_t calibration_samples) {
  const bool gptq = o.weight_rounding == "gptq" && o.scheme != "lab";
  return FloatPassRecord(executor, gptq ? std::min(o.gptq_samples, calibration_samples) : 0,
                         o.method == AmaxMethod::Auto ? std::min(o.auto_samples, calibration_samples) : 0);
}

QuantizedWeights quantize_weights(const FloatTensor& w, bool per_channel, bool lab_scheme, const std::string& layer) {
  const int64_t O = w.dim(0), per = w.numel() / O;
  for (float v : w.data)
    if (!std::isfinite(v)) fail("layer '" + layer + "': weights contain NaN or infinite values");
  QuantizedWeights q;
  q.values = Int8Tensor(w.shape);
  q.scales = FloatTensor({O});
  auto range_scale = [&](int64_t first, int64_t count) {
    const auto [lo, hi] = std::minmax_element(w.data.begin() + first, w.data.begin() + first + count);
    const double amax = lab_scheme ? double(*hi) - double(*lo) : std::max(std::abs(double(*lo)), std::abs(double(*hi)));
    return scale_for(amax);
  };
  const float tensor_scale = per_channel ? 0.0f : range_scale(0, w.numel());
  for (int64_t o = 0; o < O; ++o) {
    const float s = per_channel ? range_scale(o * per, per) : tensor_scale;
    q.scales.data[o] = s;
    for (int64_t k = o * per; k < (o + 1) * per; ++k)
      q.values.data[k] = static_cast<int8_t>(std::clamp(std::round(w.data[k] * s), -128.0f, 127.0f));
  }
  return q;
}

QuantizedModel quantize(const Checkpoint& checkpoint, const FloatModel& folded, const Calibration& cal,
                        const QuantizeOptions& o, PhaseClock* clock, const FloatPassRecord* record) {
  PhaseClock own_clock;
  if (!clock) clock = &own_clock;
  check(o.scheme == "octet" || o.scheme == "lab", "unknown scheme '" + o.scheme + "' (known: octet, lab)");
  check(o.weight_rounding == "gptq" || o.weight_rounding == "nearest",
        "unknown weight rounding '" + o.weight_rounding + "' (known: gptq, nearest)");
  check(cal.samples > 0 && cal.stats.size() == folded.graph.nodes.size(),
        "calibration does not match the model (was it recorded on another graph?)");
  const Plan plan = plan_graph(folded.graph);
  const size_t N = plan.graph.nodes.size();

  // amax of every quantization point, by float node.
  std::vector<double> amax(folded.graph.nodes.size(), 0.0);
  std::vector<std::string> methods(folded.graph.nodes.size());
  std::vector<int> points;
  for (size_t i = 0; i < N; ++i)
    if (plan.own_scale[i]) points.push_back(plan.stats_node[i]);
  clock->start("weight rounding");
  std::optional<FloatPassRecord> own_record;
  if (!record) {
    const FloatExecutor executor(folded);
    own_record.emplace(float_pass_record(executor, o, cal.samples));
    own_record->run(executor, cal.images);
    record = &*own_record;
  }
  const std::map<std::string, QuantizedWeights> weights = quantize_all_weights(folded, *record, o);
  QuantizedModel qm = model_header(checkpoint, plan, o, cal);
  clock->start("amax search");
  if (o.method == AmaxMethod::Auto) {
    choose_auto(plan, folded, weights, cal, record->logits(), o, points, qm, &amax, &methods);
  } else {
    for (int p : points) {
      amax[p] = compute_amax(cal.stats[p], o.method, o.percentile);
      methods[p] = amax_method_name(o.method);
    }
  }

  clock->start("assembly");
  fill_quant(plan, folded, weights, amax, methods, &qm);
  qm.validate();
  return qm;
}

}  // namespace octet
