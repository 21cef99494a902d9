#include "quant/auto_amax.h"

#include <algorithm>
#include <cmath>
#include <exception>
#include <iterator>
#include <memory>
#include <numeric>

#include "calibrate/amax.h"
#include "common/error.h"
#include "common/progress.h"
#include "quant/scored_images.h"
#include "runtime/cpu/cpu_engine.h"

namespace octet {

namespace {

// Every challenger is scored on this many of the most sensitive images and
// only the best kFinalists on the rest: those clearly behind after these stay
// behind, and scoring them further was most of the search's time.
constexpr int64_t kShortlistImages = 256;
constexpr size_t kFinalists = 2;
// A finalist that trails the incumbent after the shortlist by more than this
// share of the incumbent's KL on the images after it is out too: to win, it
// would have to score that much below the model as it stands on the images
// that hold the least KL, having scored worse on those that hold the most. On
// the four zoo models no winner trailed by that much (some that trailed by
// less won: with 0, ResNet-20 and MobileNetV2 chose differently); it saves a
// tenth of ResNet-20's challenger runs, 7% of MobileNetV2's.
constexpr double kTrailingShare = 0.1;
// The methods `auto` tries. Not 3-sigma: on post-ReLU activations mean + 3
// std clips far too much (on the zoo models it never came near the others).
constexpr AmaxMethod kAutoCandidates[] = {AmaxMethod::Max, AmaxMethod::Percentile, AmaxMethod::Entropy, AmaxMethod::Mse};
constexpr size_t kMethods = std::size(kAutoCandidates);
// The amax of points `auto` has not decided yet: mse, the method it picks
// most often on the zoo models.
constexpr AmaxMethod kProvisional = AmaxMethod::Mse;
constexpr size_t kProvisionalIndex = 3;
static_assert(kAutoCandidates[kProvisionalIndex] == kProvisional, "the provisional method is a candidate");
// The window around the provisional (mse) amax outside which a candidate is
// not scored: a step more than 1.4x as coarse, or a clip at less than 0.6x.
// mse's amax minimises the tensor's own rounding-plus-clipping error, and on
// the zoo models no candidate that far from it won: leaving them out changes
// no byte of the four zoo models' files (with 1,024 or 512 calibration
// images; 1.3 instead of 1.4 changed MobileNetV2's at 512), while scoring
// them was over a fifth of ResNet-20's search (max's amax is 1.2-2.0x mse's
// there, percentile's down to 0.54x).
constexpr double kCoarsestAmax = 1.4, kFinestAmax = 0.6;

// Removes from `finalists` those that trail the incumbent too far after the
// shortlist (trails_too_far): `shortlist_sum(c)` is finalist c's KL over the
// first `shortlist_end` images, `incumbent_kl` the incumbent's per image.
template <typename ShortlistSum>
void drop_trailing(std::vector<size_t>* finalists, ShortlistSum shortlist_sum, const std::vector<double>& incumbent_kl,
                   int64_t shortlist_end) {
  const double shortlist = std::accumulate(incumbent_kl.begin(), incumbent_kl.begin() + shortlist_end, 0.0);
  const double rest = std::accumulate(incumbent_kl.begin() + shortlist_end, incumbent_kl.end(), 0.0);
  finalists->erase(std::remove_if(finalists->begin(), finalists->end(),
                                  [&](size_t c) { return trails_too_far(shortlist_sum(c), shortlist, rest); }),
                   finalists->end());
}

// Every candidate amax of every point, side by side: point k's method m at
// k * kMethods + m (entropy and mse search the histograms).
std::vector<double> candidate_amaxes(const Calibration& cal, const AutoSearchPoints& points, double percentile) {
  const std::vector<int>& float_nodes = points.float_nodes;
  std::vector<double> candidate_amax(float_nodes.size() * kMethods);
  std::exception_ptr amax_error;
#pragma omp parallel for schedule(dynamic)
  for (size_t t = 0; t < candidate_amax.size(); ++t) {
    try {
      candidate_amax[t] = compute_amax(cal.stats[float_nodes[t / kMethods]], kAutoCandidates[t % kMethods], percentile,
                                       points.levels[t / kMethods]);
    } catch (...) {
#pragma omp critical(octet_auto_error)
      amax_error = std::current_exception();
    }
  }
  if (amax_error) std::rethrow_exception(amax_error);
  return candidate_amax;
}

// Every point's candidate amaxes (candidate_amaxes), with `amax` and
// `methods` set to the provisional one at every point.
std::vector<double> provisional_amaxes(const AutoSearchPoints& points, const Calibration& cal, double percentile,
                                       std::vector<double>* amax, std::vector<std::string>* methods) {
  std::vector<double> candidate_amax = candidate_amaxes(cal, points, percentile);
  for (size_t k = 0; k < points.float_nodes.size(); ++k) {
    (*amax)[points.float_nodes[k]] = candidate_amax[k * kMethods + kProvisionalIndex];
    (*methods)[points.float_nodes[k]] = amax_method_name(kProvisional);
  }
  return candidate_amax;
}

// Point k's candidates (scored_candidates).
std::vector<AmaxCandidate> point_candidates(const std::vector<double>& candidate_amax, size_t k) {
  std::vector<AmaxCandidate> by_method;
  for (size_t m = 0; m < kMethods; ++m) by_method.push_back({candidate_amax[k * kMethods + m], kAutoCandidates[m]});
  return scored_candidates(by_method);
}

// The int8 outputs of the decided nodes [0, computed) that a later node
// reads, for all scored images.
class DecidedOutputs {
 public:
  DecidedOutputs(const Graph& graph, const ScoredImages& images)
      : graph_(graph), images_(images), shapes_(graph.shapes()), last_reader_(graph.last_readers()),
        state_(graph.nodes.size()) {}

  int computed() const { return computed_; }

  // Runs `decided` (the model with the choices made so far) from the last
  // computed node up to node `q`, keeping the outputs that node q or a later
  // one reads and dropping those no longer read. Chunks run side by side, one
  // per thread (the layers inside on one thread each): one parallel region,
  // where each layer's own would wake the threads per chunk and layer.
  void advance_to(int q, const CpuEngine& decided) {
    const QuantizedModel& model = decided.model();
    const int nodes = static_cast<int>(graph_.nodes.size());
    const int64_t samples = images_.count();
    std::vector<bool> kept(static_cast<size_t>(nodes), false);
    for (int i = computed_; i < q; ++i)
      if (last_reader_[i] >= q) {
        kept[i] = true;
        state_[i].resize(static_cast<size_t>(samples * shapes_[i].numel() * model.value_bytes(i)));
      }
    const int64_t chunk_images = auto_chunk(samples), chunks = (samples + chunk_images - 1) / chunk_images;
    std::vector<int64_t> seen(static_cast<size_t>(nodes), 0);  // values written per kept node
    std::exception_ptr error;
#pragma omp parallel for schedule(dynamic, 1)
    for (int64_t chunk = 0; chunk < chunks; ++chunk) {
      try {
        const int64_t first = chunk * chunk_images, rows = std::min(chunk_images, samples - first);
        std::vector<float> buffer;
        decided.run_nodes(images_.input(computed_, first, rows, &buffer), rows, computed_, q, given_at(first),
                          [&](int node, const int8_t* values, int64_t count) {
                            if (!kept[node]) return;
                            const int64_t bytes = model.value_bytes(node);  // per value
                            std::copy(values, values + count * bytes,
                                      state_[node].begin() + first * shapes_[node].numel() * bytes);
#pragma omp atomic
                            seen[node] += count;
                          });
      } catch (...) {
#pragma omp critical(octet_auto_error)
        error = std::current_exception();
      }
    }
    if (error) std::rethrow_exception(error);
    for (int i = computed_; i < q; ++i)
      check(!kept[i] || seen[i] == samples * shapes_[i].numel(),
            "auto: the int8 output of node '" + graph_.nodes[i].name + "' was not seen for every image");
    for (int i = 0; i < q; ++i)
      if (last_reader_[i] < q) std::vector<int8_t>().swap(state_[i]);
    computed_ = q;
  }

  // The kept outputs of the images from `first_image` on, for run_nodes.
  CpuEngine::Given given_at(int64_t first_image) const {
    return [this, first_image](int node) {  // the kept bytes are per image (an int16 wide value is two)
      return state_[node].data() + first_image * (state_[node].size() / images_.count());
    };
  }

 private:
  const Graph& graph_;
  const ScoredImages& images_;
  const std::vector<ActShape> shapes_;
  const std::vector<int> last_reader_;
  std::vector<std::vector<int8_t>> state_;
  int computed_ = 0;
};

// The race between one point's challengers and the model as it stands (the
// incumbent, whose per-image KL is known): every challenger is scored on the
// first kShortlistImages images, the best kFinalists of them (unless they
// trail the incumbent too far: trails_too_far) on the rest, and the lowest
// total wins. KL >= 0, so a challenger whose partial sum passes the
// lowest complete total (the incumbent's, or a finalist's that beat it)
// cannot win and stops, which changes nothing but how soon. Challengers
// advance chunk by chunk side by side, one chunk per thread (the layers inside
// on one thread each), most sensitive images first, so most stop after a few
// chunks. Int8 results do not depend on threads, so neither does the winner.
class CandidateRace {
 public:
  CandidateRace(std::vector<std::unique_ptr<CpuEngine>> challengers, const DecidedOutputs& outputs,
                const ScoredImages& images, int first_node, int nodes, const std::vector<double>& incumbent_kl)
      : challengers_(std::move(challengers)), outputs_(outputs), images_(images), first_node_(first_node),
        nodes_(nodes), incumbent_kl_(incumbent_kl),
        kl_(challengers_.size(), std::vector<double>(static_cast<size_t>(images.count()))),
        partial_(challengers_.size(), 0.0), scored_to_(challengers_.size(), 0),
        bound_(std::accumulate(incumbent_kl.begin(), incumbent_kl.end(), 0.0)) {}

  // The winner: -1 for the incumbent, else the index of a challenger (the
  // earliest on a tie, the incumbent before all).
  int run() {
    const int64_t samples = images_.count(), shortlist_end = std::min(samples, kShortlistImages);
    std::vector<size_t> racing;
    for (size_t c = 0; c < challengers_.size(); ++c)
      if (challengers_[c]) racing.push_back(c);
    score(racing, 0, shortlist_end);
    // The finalists: challengers still in, by their sums in image order (a near tie ranks the same in every run).
    racing.erase(std::remove_if(racing.begin(), racing.end(), [&](size_t c) { return scored_to_[c] < shortlist_end; }),
                 racing.end());
    std::vector<double> shortlist_sum(challengers_.size());
    for (size_t c : racing) shortlist_sum[c] = std::accumulate(kl_[c].begin(), kl_[c].begin() + shortlist_end, 0.0);
    std::stable_sort(racing.begin(), racing.end(), [&](size_t x, size_t y) { return shortlist_sum[x] < shortlist_sum[y]; });
    if (racing.size() > kFinalists) racing.resize(kFinalists);
    drop_trailing(&racing, [&](size_t c) { return shortlist_sum[c]; }, incumbent_kl_, shortlist_end);
    score(racing, shortlist_end, samples);
    int winner = -1;
    double best = std::accumulate(incumbent_kl_.begin(), incumbent_kl_.end(), 0.0);
    for (size_t c = 0; c < challengers_.size(); ++c) {
      if (scored_to_[c] < samples) continue;
      const double total = std::accumulate(kl_[c].begin(), kl_[c].end(), 0.0);
      if (total < best) best = total, winner = static_cast<int>(c);
    }
    return winner;
  }

  // Per image, the KL of challenger `c` (complete for the winner of run()).
  const std::vector<double>& kl(int c) const { return kl_[c]; }

 private:
  // Scores the challengers in `which` on images [begin, end), chunk by chunk
  // (every challenger's first chunk, then every one's second, ...); a
  // challenger that cannot win stops, short of `end`.
  void score(const std::vector<size_t>& which, int64_t begin, int64_t end) {
    const int64_t racers = static_cast<int64_t>(which.size());
    const int64_t chunks = (end - begin + kAutoChunk - 1) / kAutoChunk;
    std::vector<int64_t> chunks_done(challengers_.size(), 0);
    std::exception_ptr error;
#pragma omp parallel for schedule(dynamic, 1)
    for (int64_t t = 0; t < racers * chunks; ++t) {
      try {
        const size_t c = which[t % racers];
        if (cannot_win(c)) continue;
        const int64_t first = begin + (t / racers) * kAutoChunk, rows = std::min(kAutoChunk, end - first);
        const FloatTensor logits =
            run_chunk(*challengers_[c], images_, first, rows, first_node_, nodes_, outputs_.given_at(first));
        images_.score(logits.ptr(), first, rows, kl_[c].data() + first);
        const double sum = std::accumulate(kl_[c].begin() + first, kl_[c].begin() + first + rows, 0.0);
#pragma omp critical(octet_auto_partial)
        {
          partial_[c] += sum;
          if (++chunks_done[c] == chunks) {
            scored_to_[c] = end;
            if (end == images_.count()) bound_ = std::min(bound_, partial_[c]);
          }
        }
      } catch (...) {
#pragma omp critical(octet_auto_error)
        error = std::current_exception();
      }
    }
    if (error) std::rethrow_exception(error);
  }

  // The slack covers the rounding of sums added in whatever order threads
  // finish: a near tie is left to run()'s sums in image order.
  bool cannot_win(size_t c) {
    double sum, limit;
#pragma omp critical(octet_auto_partial)
    {
      sum = partial_[c];
      limit = bound_;
    }
    return sum > limit * (1 + 1e-9);
  }

  const std::vector<std::unique_ptr<CpuEngine>> challengers_;  // null: not built (its bias overflows int32)
  const DecidedOutputs& outputs_;
  const ScoredImages& images_;
  const int first_node_, nodes_;
  const std::vector<double>& incumbent_kl_;
  std::vector<std::vector<double>> kl_;  // per challenger, per image
  std::vector<double> partial_;          // per challenger, the KL sum over the images scored so far
  std::vector<int64_t> scored_to_;       // per challenger, the end of the images scored without a stop
  double bound_;
};

// The challengers of point `point` (all candidates but the first, the
// incumbent), each an engine; null for one whose bias overflows int32 (an
// amax so small the input scale is too fine).
std::vector<std::unique_ptr<CpuEngine>> challenger_engines(const std::vector<AmaxCandidate>& candidates,
                                                           int point, const std::vector<double>& amax,
                                                           const std::vector<std::string>& methods,
                                                           const Int8ModelBuilder& build, const CpuEngine& packed) {
  std::vector<std::unique_ptr<CpuEngine>> engines;
  for (size_t c = 1; c < candidates.size(); ++c) {
    std::vector<double> trial = amax;
    trial[point] = candidates[c].amax;
    try {
      engines.push_back(std::make_unique<CpuEngine>(build(trial, methods), packed));
    } catch (const Error&) {
      engines.push_back(nullptr);
    }
  }
  return engines;
}

}  // namespace

std::vector<AmaxCandidate> scored_candidates(const std::vector<AmaxCandidate>& by_method) {
  const auto provisional = std::find_if(by_method.begin(), by_method.end(),
                                        [](const AmaxCandidate& c) { return c.method == kProvisional; });
  check(provisional != by_method.end(), "auto: no mse amax among the candidates");
  const double incumbent = provisional->amax;
  std::vector<AmaxCandidate> candidates{*provisional};
  for (const AmaxCandidate& c : by_method) {
    const bool seen = std::any_of(candidates.begin(), candidates.end(), [&](const AmaxCandidate& s) {
      return std::abs(s.amax - c.amax) <= 1e-4 * std::max(c.amax, 1e-12);
    });
    const bool in_window = c.amax <= kCoarsestAmax * incumbent && c.amax >= kFinestAmax * incumbent;
    if (!seen && in_window) candidates.push_back(c);
  }
  return candidates;
}

bool trails_too_far(double challenger_shortlist, double incumbent_shortlist, double incumbent_rest) {
  return challenger_shortlist - incumbent_shortlist > kTrailingShare * incumbent_rest;
}

void choose_auto_amax(const AutoSearchPoints& points, const Int8ModelBuilder& build, const Calibration& cal,
                      const FloatTensor& target, double percentile, std::vector<double>* amax,
                      std::vector<std::string>* methods) {
  const std::vector<double> candidate_amax = provisional_amaxes(points, cal, percentile, amax, methods);
  const CpuEngine packed(build(*amax, *methods));
  const int nodes = static_cast<int>(points.graph->nodes.size());
  const ScoredImages images(cal, target, output_sizes(*points.graph));
  DecidedOutputs outputs(*points.graph, images);
  // Per image, the KL of the model as decided so far (undecided points provisional).
  std::vector<double> current_kl = score_whole_model(packed, images);
  Progress progress("auto: choosing amax per tensor", static_cast<int64_t>(points.float_nodes.size()));
  for (size_t k = 0; k < points.float_nodes.size(); ++k) {
    // Candidates run from node q on, or from before the float segment whose value q or a later node reads.
    const int p = points.float_nodes[k], q = packed.resume_point(points.quantized_nodes[k]);
    const std::vector<AmaxCandidate> candidates = point_candidates(candidate_amax, k);
    if (candidates.size() > 1) {
      if (q > outputs.computed()) outputs.advance_to(q, CpuEngine(build(*amax, *methods), packed));
      CandidateRace race(challenger_engines(candidates, p, *amax, *methods, build, packed), outputs, images, q, nodes,
                         current_kl);
      const int winner = race.run();
      if (winner >= 0) {
        (*amax)[p] = candidates[winner + 1].amax;
        (*methods)[p] = amax_method_name(candidates[winner + 1].method);
        current_kl = race.kl(winner);
      }
    }
    progress.advance();
  }
}

void choose_auto_amax_exhaustive(const AutoSearchPoints& points, const Int8ModelBuilder& build,
                                 const Calibration& cal, const FloatTensor& target, double percentile,
                                 std::vector<double>* amax, std::vector<std::string>* methods) {
  const std::vector<double> candidate_amax = provisional_amaxes(points, cal, percentile, amax, methods);
  const ScoredImages images(cal, target, output_sizes(*points.graph));
  const int64_t shortlist_end = std::min(images.count(), kShortlistImages);
  for (size_t k = 0; k < points.float_nodes.size(); ++k) {
    const int p = points.float_nodes[k];
    const std::vector<AmaxCandidate> candidates = point_candidates(candidate_amax, k);
    // Per candidate (the incumbent first), the KL of the whole model on every image; empty if it cannot be built.
    std::vector<std::vector<double>> kl(candidates.size());
    for (size_t c = 0; c < candidates.size(); ++c) {
      std::vector<double> trial = *amax;
      trial[p] = candidates[c].amax;
      try {
        kl[c] = score_whole_model(CpuEngine(build(trial, *methods)), images);
      } catch (const Error&) {
        if (c == 0) throw;
      }
    }
    const auto sum = [&](size_t c, int64_t end) { return std::accumulate(kl[c].begin(), kl[c].begin() + end, 0.0); };
    std::vector<size_t> finalists;
    for (size_t c = 1; c < candidates.size(); ++c)
      if (!kl[c].empty()) finalists.push_back(c);
    std::stable_sort(finalists.begin(), finalists.end(),
                     [&](size_t x, size_t y) { return sum(x, shortlist_end) < sum(y, shortlist_end); });
    if (finalists.size() > kFinalists) finalists.resize(kFinalists);
    drop_trailing(&finalists, [&](size_t c) { return sum(c, shortlist_end); }, kl[0], shortlist_end);
    std::sort(finalists.begin(), finalists.end());
    size_t winner = 0;
    for (size_t c : finalists)
      if (sum(c, images.count()) < sum(winner, images.count())) winner = c;
    (*amax)[p] = candidates[winner].amax;
    (*methods)[p] = amax_method_name(candidates[winner].method);
  }
}

}  // namespace octet
