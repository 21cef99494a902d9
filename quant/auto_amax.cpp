#include "quant/auto_amax.h"

#include <algorithm>
#include <cmath>
#include <exception>
#include <iterator>
#include <limits>
#include <memory>
#include <numeric>

#include "calibrate/amax.h"
#include "common/error.h"
#include "common/progress.h"
#include "runtime/cpu/cpu_engine.h"

namespace octet {

namespace {

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
constexpr size_t kMethods = std::size(kAutoCandidates);
// The amax of points `auto` has not decided yet: mse, the method it picks
// most often on the zoo models.
constexpr AmaxMethod kProvisional = AmaxMethod::Mse;

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

// Every candidate amax of every point, side by side: point k's method m at
// k * kMethods + m (entropy and mse search the histograms).
std::vector<double> candidate_amaxes(const Calibration& cal, const std::vector<int>& float_nodes, double percentile) {
  std::vector<double> candidate_amax(float_nodes.size() * kMethods);
  std::exception_ptr amax_error;
#pragma omp parallel for schedule(dynamic)
  for (size_t t = 0; t < candidate_amax.size(); ++t) {
    try {
      candidate_amax[t] = compute_amax(cal.stats[float_nodes[t / kMethods]], kAutoCandidates[t % kMethods], percentile);
    } catch (...) {
#pragma omp critical(octet_auto_error)
      amax_error = std::current_exception();
    }
  }
  if (amax_error) std::rethrow_exception(amax_error);
  return candidate_amax;
}

// Point k's candidates: its amax by each method, a near-equal one only once.
std::vector<std::pair<double, AmaxMethod>> distinct_candidates(const std::vector<double>& candidate_amax, size_t k) {
  std::vector<std::pair<double, AmaxMethod>> candidates;
  for (size_t m = 0; m < kMethods; ++m) {
    const double a = candidate_amax[k * kMethods + m];
    const bool seen = std::any_of(candidates.begin(), candidates.end(),
                                  [&](const auto& c) { return std::abs(c.first - a) <= 1e-4 * std::max(a, 1e-12); });
    if (!seen) candidates.emplace_back(a, kAutoCandidates[m]);
  }
  return candidates;
}

// The int8 outputs of the decided nodes [0, computed) that a later node
// reads, for all calibration images.
class DecidedOutputs {
 public:
  // `samples`: the first images of the calibration set that are scored.
  DecidedOutputs(const Graph& graph, const Calibration& cal, int64_t samples)
      : graph_(graph), cal_(cal), samples_(samples), shapes_(graph.shapes()), last_reader_(graph.last_readers()),
        state_(graph.nodes.size()) {}

  int computed() const { return computed_; }

  // Runs `decided` (the model with the choices made so far) from the last
  // computed node up to node `q`, keeping the outputs that node q or a later
  // one reads and dropping those no longer read.
  void advance_to(int q, const CpuEngine& decided) {
    const int nodes = static_cast<int>(graph_.nodes.size());
    const int64_t samples = samples_, per_image = floats_per_image();
    std::vector<bool> kept(static_cast<size_t>(nodes), false);
    for (int i = computed_; i < q; ++i)
      if (last_reader_[i] >= q) {
        kept[i] = true;
        state_[i].reserve(static_cast<size_t>(samples * shapes_[i].numel()));
      }
    // The chunks run in order, so each kept output is appended (not zeroed, then overwritten).
    for (int64_t first = 0; first < samples; first += kAutoChunk) {
      const int64_t rows = std::min(kAutoChunk, samples - first);
      decided.run_nodes(cal_.images.data() + first * per_image, rows, computed_, q, given_at(first),
                        [&](int node, const int8_t* values, int64_t count) {
                          if (kept[node]) state_[node].insert(state_[node].end(), values, values + count);
                        });
    }
    for (int i = computed_; i < q; ++i)
      check(!kept[i] || state_[i].size() == static_cast<size_t>(samples * shapes_[i].numel()),
            "auto: the int8 output of node '" + graph_.nodes[i].name + "' was not seen for every image");
    for (int i = 0; i < q; ++i)
      if (last_reader_[i] < q) std::vector<int8_t>().swap(state_[i]);
    computed_ = q;
  }

  // The kept outputs of the images from `first_image` on, for run_nodes.
  CpuEngine::Given given_at(int64_t first_image) const {
    return [this, first_image](int node) { return state_[node].data() + first_image * shapes_[node].numel(); };
  }

  int64_t floats_per_image() const { return static_cast<int64_t>(cal_.images.size()) / cal_.samples; }

 private:
  const Graph& graph_;
  const Calibration& cal_;
  const int64_t samples_;
  const std::vector<ActShape> shapes_;
  const std::vector<int> last_reader_;
  std::vector<std::vector<int8_t>> state_;
  int computed_ = 0;
};

// One point's candidates, each an engine (null for one whose bias overflows
// int32: an amax so small the input scale is too fine; and for the one that
// leaves the model as it is, already scored as the previous point's winner).
struct CandidateEngines {
  std::vector<std::unique_ptr<CpuEngine>> engines;
  std::vector<int> alive;  // the candidates still in the race
  int unchanged = -1;      // the candidate already scored (current_kl), or -1
};

CandidateEngines candidate_engines(const std::vector<std::pair<double, AmaxMethod>>& candidates, int point,
                                   const std::vector<double>& amax, const std::vector<std::string>& methods,
                                   bool scored, const Int8ModelBuilder& build, const CpuEngine& packed) {
  CandidateEngines e;
  for (size_t c = 0; c < candidates.size(); ++c) {
    std::vector<double> trial = amax;
    trial[point] = candidates[c].first;
    if (trial == amax && scored) {
      e.engines.push_back(nullptr);
      e.alive.push_back(static_cast<int>(c));
      e.unchanged = static_cast<int>(c);
      continue;
    }
    try {
      e.engines.push_back(std::make_unique<CpuEngine>(build(trial, methods), packed));
      e.alive.push_back(static_cast<int>(c));
    } catch (const Error&) {
      e.engines.push_back(nullptr);
    }
  }
  return e;
}

// The race between one point's candidates: every candidate is scored on the
// first kShortlistImages images, the best kFinalists of them on the rest.
// Chunks of all candidates in a stage run side by side, one per thread (the
// layers inside on one thread each); int8 results do not depend on threads,
// so neither does the choice.
class CandidateRace {
 public:
  CandidateRace(const CandidateEngines& candidates, const DecidedOutputs& outputs, const Calibration& cal,
                const FloatTensor& target, int first_node, int nodes, const std::vector<double>& current_kl)
      : candidates_(candidates), outputs_(outputs), cal_(cal), target_(target), first_node_(first_node),
        nodes_(nodes), samples_(target.dim(0)), current_kl_(current_kl),
        kl_(candidates.engines.size(), std::vector<double>(samples_)),
        partial_(candidates.engines.size(), 0.0) {
    if (candidates.unchanged >= 0) kl_[candidates.unchanged] = current_kl;
  }

  // The candidates still alive, best first (the first candidate on a tie).
  std::vector<int> run() {
    std::vector<int> alive = candidates_.alive;
    const int64_t shortlist_end = std::min(samples_, kShortlistImages);
    score(alive, 0, shortlist_end, false);
    alive = rank(alive, shortlist_end);
    if (alive.size() > kFinalists) alive.resize(kFinalists);
    const std::vector<int> finalists_by_rank = alive;
    std::sort(alive.begin(), alive.end());
    for (int c : alive) partial_[c] = std::accumulate(kl_[c].begin(), kl_[c].begin() + shortlist_end, 0.0);
    if (std::find(alive.begin(), alive.end(), candidates_.unchanged) != alive.end())
      bound_ = std::accumulate(current_kl_.begin(), current_kl_.end(), 0.0);
    score(finalists_by_rank, shortlist_end, samples_, true);
    alive.erase(std::remove_if(alive.begin(), alive.end(), [this](int c) { return cannot_win(c); }), alive.end());
    return rank(alive, samples_);
  }

  // Per image, the KL of candidate `c` (complete for the winner of run()).
  const std::vector<double>& kl(int c) const { return kl_[c]; }

 private:
  // KL >= 0, so a candidate whose sum passes `bound_`, the lowest total of a
  // candidate scored on every image, cannot win: it is not scored further
  // (which does not change the winner, only how soon the others stop). The
  // slack covers the rounding of sums added in whatever order threads
  // finish: a near tie is left to rank(), whose order is fixed.
  bool cannot_win(int c) {
    double sum, limit;
#pragma omp critical(octet_auto_partial)
    {
      sum = partial_[c];
      limit = bound_;
    }
    return sum > limit * (1 + 1e-9);
  }

  // Scores the candidates in `which` on images [begin, end), one after the
  // other (so the first completes first). In the last stage (`last`: the
  // earlier images already in `partial_`), a candidate scored on every image
  // bounds the others with its total.
  void score(std::vector<int> which, int64_t begin, int64_t end, bool last) {
    which.erase(std::remove(which.begin(), which.end(), candidates_.unchanged), which.end());
    const int64_t chunks = (end - begin + kAutoChunk - 1) / kAutoChunk;
    const int64_t per_image = outputs_.floats_per_image(), classes = target_.dim(1);
    std::vector<int64_t> chunks_done(candidates_.engines.size(), 0);
    const int64_t tasks = static_cast<int64_t>(which.size()) * chunks;
    std::exception_ptr error;
#pragma omp parallel for schedule(dynamic, 1)
    for (int64_t t = 0; t < tasks; ++t) {
      try {
        const int c = which[t / chunks];
        if (cannot_win(c)) continue;
        const int64_t first = begin + (t % chunks) * kAutoChunk, rows = std::min(kAutoChunk, end - first);
        const CpuEngine& engine = *candidates_.engines[c];
        const FloatTensor logits = engine.dequantize_logits(engine.run_nodes(
            cal_.images.data() + first * per_image, rows, first_node_, nodes_, outputs_.given_at(first)));
        softmax_kl(target_.ptr() + first * classes, logits.ptr(), rows, classes, kl_[c].data() + first);
        const double sum = std::accumulate(kl_[c].begin() + first, kl_[c].begin() + first + rows, 0.0);
#pragma omp critical(octet_auto_partial)
        {
          partial_[c] += sum;
          if (++chunks_done[c] == chunks && last) bound_ = std::min(bound_, partial_[c]);
        }
      } catch (...) {
#pragma omp critical(octet_auto_error)
        error = std::current_exception();
      }
    }
    if (error) std::rethrow_exception(error);
  }

  // The candidates in `which` by their KL sum over the first `end` images, the first candidate on a tie.
  std::vector<int> rank(std::vector<int> which, int64_t end) const {
    std::vector<double> sums(candidates_.engines.size());
    for (int c : which) sums[c] = std::accumulate(kl_[c].begin(), kl_[c].begin() + end, 0.0);
    std::stable_sort(which.begin(), which.end(), [&](int x, int y) { return sums[x] < sums[y]; });
    return which;
  }

  const CandidateEngines& candidates_;
  const DecidedOutputs& outputs_;
  const Calibration& cal_;
  const FloatTensor& target_;
  const int first_node_, nodes_;
  const int64_t samples_;
  const std::vector<double>& current_kl_;
  std::vector<std::vector<double>> kl_;  // per candidate, per image
  std::vector<double> partial_;          // per candidate, the KL sum over the images scored so far
  double bound_ = std::numeric_limits<double>::infinity();
};

}  // namespace

void choose_auto_amax(const AutoSearchPoints& points, const Int8ModelBuilder& build, const Calibration& cal,
                      const FloatTensor& target, double percentile, std::vector<double>* amax,
                      std::vector<std::string>* methods) {
  const std::vector<double> candidate_amax = candidate_amaxes(cal, points.float_nodes, percentile);
  const size_t provisional = std::find(std::begin(kAutoCandidates), std::end(kAutoCandidates), kProvisional) -
                             std::begin(kAutoCandidates);
  for (size_t k = 0; k < points.float_nodes.size(); ++k) {
    (*amax)[points.float_nodes[k]] = candidate_amax[k * kMethods + provisional];
    (*methods)[points.float_nodes[k]] = amax_method_name(kProvisional);
  }
  const CpuEngine packed(build(*amax, *methods));
  const int nodes = static_cast<int>(points.graph->nodes.size());
  DecidedOutputs outputs(*points.graph, cal, target.dim(0));
  // Per image, the KL of the model as decided so far (undecided points
  // provisional); empty while unknown.
  std::vector<double> current_kl;
  Progress progress("auto: choosing amax per tensor", static_cast<int64_t>(points.float_nodes.size()));
  for (size_t k = 0; k < points.float_nodes.size(); ++k) {
    // Candidates run from node q on, or from before the float segment whose value q or a later node reads.
    const int p = points.float_nodes[k], q = packed.resume_point(points.quantized_nodes[k]);
    if (q > outputs.computed()) outputs.advance_to(q, CpuEngine(build(*amax, *methods), packed));
    const std::vector<std::pair<double, AmaxMethod>> candidates = distinct_candidates(candidate_amax, k);
    const CandidateEngines engines =
        candidate_engines(candidates, p, *amax, *methods, !current_kl.empty(), build, packed);
    std::vector<int> alive = engines.alive;
    if (alive.size() > 1) {  // the winner is scored on every image
      CandidateRace race(engines, outputs, cal, target, q, nodes, current_kl);
      alive = race.run();
      current_kl = race.kl(alive[0]);
    } else if (!alive.empty() && candidates[alive[0]].first != (*amax)[p]) {
      current_kl.clear();
    }
    if (!alive.empty()) {
      (*amax)[p] = candidates[alive[0]].first;
      (*methods)[p] = amax_method_name(candidates[alive[0]].second);
    }
    progress.advance();
  }
}

}  // namespace octet
