#include "train/trainer.h"

#include <torch/torch.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <optional>
#include <thread>
#include <utility>

#include "common/error.h"
#include "common/file_io.h"
#include "common/progress.h"
#include "data/loader.h"
#include "models/checkpoint.h"
#include "models/registry.h"
#include "train/captured_step.h"
#include "train/gradient_reducer.h"
#include "train/graph_net.h"
#include "train/loss_scaler.h"
#include "train/optimizer.h"
#include "train/precision.h"
#include "train/process_group.h"
#include "train/run_record.h"

namespace octet {

namespace {

using Clock = std::chrono::steady_clock;
double seconds_since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

double scheduled_lr(const TrainOptions& o, int64_t step, int64_t steps_per_epoch) {
  const double total = static_cast<double>(o.epochs) * static_cast<double>(steps_per_epoch);
  const double progress = static_cast<double>(step) / total;  // 0 .. 1 over the run
  const double warmup_steps = o.warmup_epochs * static_cast<double>(steps_per_epoch);
  const double base = o.optimizer.lr;
  if (static_cast<double>(step) < warmup_steps)
    return base * (0.1 + 0.9 * static_cast<double>(step) / warmup_steps);
  if (o.schedule == "constant") return base;
  if (o.schedule == "multistep") {
    double lr = base;
    for (double m : o.milestones)
      if (progress >= m) lr *= 0.1;
    return lr;
  }
  if (o.schedule == "cosine") return 0.5 * base * (1.0 + std::cos(M_PI * progress));
  fail("unknown schedule '" + o.schedule + "' (known: constant, multistep, cosine)");
}

void synchronize(const torch::Device& device) {
  if (device.is_cuda()) torch::cuda::synchronize();
}

// A step's loss sum, correct count and sample count, on the device.
torch::Tensor step_totals(const torch::Tensor& logits, const torch::Tensor& loss, const torch::Tensor& labels) {
  const double n = static_cast<double>(labels.size(0));
  return torch::stack({loss.detach().to(torch::kDouble) * n, logits.argmax(1).eq(labels).sum().to(torch::kDouble),
                       torch::scalar_tensor(n, torch::dtype(torch::kDouble).device(labels.device()))});
}

// Waits for a data-parallel step's all-reduces (its gradients, then its totals)
// and returns the seconds that took: the communication the backward pass did
// not hide, which the step's compute time excludes.
double wait_for_all_reduces(GradientReducer& reducer, ProcessGroup::Pending& totals, const torch::Device& device) {
  synchronize(device);  // the backward pass counts as compute
  const auto start = Clock::now();
  reducer.synchronize();
  totals.wait();
  synchronize(device);
  return seconds_since(start);
}

struct Evaluation {
  double loss = 0, top1 = 0;
};

// Data-parallel ranks each score their slice of the test set and sum the results.
Evaluation evaluate(GraphNet& net, const torch::Tensor& images, const torch::Tensor& labels,
                    const ProcessGroup* group, const TrainOptions& o) {
  torch::NoGradGuard no_grad;
  AutocastScope autocast(o, images.device());
  net->eval();
  double loss = 0;
  int64_t correct = 0;
  const int64_t n = images.size(0), chunk = 1000;
  const int64_t rank = group ? group->rank() : 0, ranks = group ? group->size() : 1;
  const int64_t begin = n * rank / ranks, end = n * (rank + 1) / ranks;
  for (int64_t first = begin; first < end; first += chunk) {
    const torch::Tensor x = input_layout(images.narrow(0, first, std::min(chunk, end - first)), o.channels_last);
    const torch::Tensor y = labels.narrow(0, first, x.size(0));
    const torch::Tensor logits = net->forward(x);
    loss += torch::nn::functional::cross_entropy(
                logits, y, torch::nn::functional::CrossEntropyFuncOptions().reduction(torch::kSum))
                .item<double>();
    correct += logits.argmax(1).eq(y).sum().item<int64_t>();
  }
  net->train();
  if (group) {
    const torch::Tensor sums =
        torch::tensor({loss, static_cast<double>(correct)}, torch::kDouble).to(images.device());
    group->all_reduce_sum(sums).wait();
    const torch::Tensor host = sums.cpu();
    loss = host[0].item<double>();
    correct = static_cast<int64_t>(std::llround(host[1].item<double>()));
  }
  return {loss / static_cast<double>(n), 100.0 * static_cast<double>(correct) / static_cast<double>(n)};
}

std::string epoch_line(const EpochStats& e, int epochs, bool distributed) {
  char line[320], communication[64] = "";
  if (distributed) std::snprintf(communication, sizeof communication, "  all-reduce %6.2fs", e.communication_seconds);
  std::snprintf(line, sizeof line,
                "epoch %3d/%d  lr %.4g  loss %.4f  train top-1 %6.2f%%  data %6.2fs  compute %7.2fs%s  "
                "epoch %7.2fs  test top-1 %6.2f%%",
                e.epoch, epochs, e.lr, e.train_loss, e.train_top1, e.data_seconds, e.compute_seconds,
                communication, e.epoch_seconds, e.test_top1);
  return line;
}

// --train-samples / --test-samples: the first `limit` samples (0: all).
void keep_first(Dataset& set, int64_t limit) {
  if (limit <= 0 || limit >= set.size()) return;
  set.labels.resize(static_cast<size_t>(limit));
  set.images.resize(static_cast<size_t>(limit * set.image_numel()));
}

void validate(const TrainOptions& o) {
  check(o.epochs > 0, "--epochs must be positive");
  check(o.batch_size > 0, "--batch-size must be positive");
  check(o.optimizer.lr > 0, "--lr must be positive");
  check(o.workers >= 0, "--workers must be >= 0");
  check(o.train_limit >= 0 && o.test_limit >= 0, "--train-samples and --test-samples must be >= 0");
  check(o.threads >= 0, "--threads must be >= 0");
  check(o.device == "cpu" || o.device == "cuda", "--device must be cpu or cuda");
  check(o.optimizer.name != "nesterov" || o.optimizer.momentum > 0, "nesterov needs --momentum > 0");
  allreduce_mode(o.allreduce);
  check(o.bucket_mb > 0, "--bucket-mb must be positive");
  check(o.dist_timeout > 0, "--dist-timeout must be positive");
  scheduled_lr(o, 0, 1);  // rejects an unknown schedule before any work
}

void check_same_model(const TrainOptions& o, const Checkpoint& checkpoint, const std::string& where) {
  check(checkpoint.model == o.model && checkpoint.dataset == o.dataset && checkpoint.batch_norm == o.batch_norm,
        where + "checkpoint holds " + checkpoint.model + " on " + checkpoint.dataset +
            (checkpoint.batch_norm ? "" : " without batch norm") + ", this run trains " + o.model + " on " +
            o.dataset + (o.batch_norm ? "" : " without batch norm"));
}

// Keeps the header and the rows of epochs up to `last_epoch`, dropping the
// rows of an epoch that was interrupted before its checkpoint was written.
void truncate_step_log(const std::string& path, int last_epoch) {
  std::ifstream in(path);
  check(in.good(), "--resume: cannot read step log '" + path + "'");
  std::string kept, line;
  while (std::getline(in, line))
    if (kept.empty() || std::stoi(line) <= last_epoch) kept += line + "\n";
  write_text_output(path, kept);
}

// Every parameter and buffer: what rank 0 hands the other ranks.
std::vector<torch::Tensor> model_state(GraphNet& net) {
  std::vector<torch::Tensor> state;
  for (const auto& named : net->named_state()) state.push_back(named.second);
  return state;
}

// One training run from its set-up to its last epoch. The members are made
// in the order the run needs them: the device and process group before the
// data, the model before its weights, the weights before the optimizer.
class TrainingRun {
 public:
  TrainingRun(const TrainOptions& o, std::ostream& main_log)
      : o_(o), env_(read_distributed_environment()), main_rank_(env_.rank == 0), silent_(nullptr),
        log_(main_rank_ ? main_log : silent_), info_(dataset_info(o.dataset)), data_dir_(data_dir()),
        device_(set_up_device()),
        group_(env_.distributed() ? std::make_unique<ProcessGroup>(env_, device_, std::chrono::seconds(o.dist_timeout))
                                  : nullptr) {
    load_data();
    make_model();
    build_optimizer();
    make_loader();
    open_step_log();
    log_start();
  }

  TrainReport run() {
    const double resumed_seconds = report_.total_seconds;
    const auto run_start = Clock::now();
    int64_t global_step = 0;
    for (const EpochStats& e : report_.epochs) global_step += e.steps;
    for (int epoch = first_epoch(); epoch <= o_.epochs; ++epoch) {
      if (o_.max_steps > 0 && global_step >= o_.max_steps) break;
      EpochStats stats = train_epoch(epoch, global_step);
      evaluate_epoch(stats);
      if (!o_.checkpoint.empty() && main_rank_) {
        report_.total_seconds = resumed_seconds + seconds_since(run_start);
        save_checkpoint(checkpoint_now(), o_.checkpoint);
      }
    }
    report_.total_seconds = resumed_seconds + seconds_since(run_start);
    log_totals();
    if (!o_.json.empty() && main_rank_) write_text_output(o_.json, to_json(o_, report_) + "\n");
    return report_;
  }

 private:
  std::string data_dir() const {
    const std::string dir = o_.data_dir.empty() ? info_.default_dir : o_.data_dir;
    check(!dir.empty(), "--data DIR is required for dataset '" + o_.dataset + "'");
    return dir;
  }

  // Threads, seed, the rank's device and its precision.
  torch::Device set_up_device() {
    const int cores = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
    torch::set_num_threads(o_.threads > 0 ? o_.threads : std::max(1, cores / env_.local_world_size));
    torch::manual_seed(o_.seed);
    const torch::Device device = rank_device(o_.device, env_);
    apply_precision(o_, device);
    if (device.is_cuda()) at::globalContext().setBenchmarkCuDNN(true);
    return device;
  }

  void load_data() {
    train_set_ = load_dataset(o_.dataset, data_dir_, Split::Train);
    test_set_ = load_dataset(o_.dataset, data_dir_, Split::Test);
    keep_first(train_set_, o_.train_limit);
    keep_first(test_set_, o_.test_limit);
  }

  // The model on the device with its first weights: --init's, or --resume's
  // with the finished epochs of the run it continues.
  void make_model() {
    net_ = GraphNet(build_model(o_.model, model_options_for(o_.dataset, o_.batch_norm)));
    net_->to(device_);
    if (!o_.init.empty() && o_.resume.empty()) {  // a resumed run takes its weights from --resume
      const Checkpoint checkpoint = load_checkpoint(o_.init);
      check_same_model(o_, checkpoint, "--init " + o_.init + ": ");
      net_->import_state(checkpoint.params);
    }
    if (!o_.resume.empty()) {
      const Checkpoint checkpoint = load_checkpoint(o_.resume);
      check_same_model(o_, checkpoint, "--resume " + o_.resume + ": ");
      report_ = resumed_report(o_, checkpoint);
      check(static_cast<int>(report_.epochs.size()) < o_.epochs,
            "--resume " + o_.resume + ": all " + std::to_string(o_.epochs) + " epochs are already done");
      net_->import_state(checkpoint.params);
    }
    params_ = net_->parameters();
    if (o_.channels_last) to_channels_last(params_);
    for (const auto& p : params_) report_.parameters += p.numel();
    report_.world_size = env_.world_size;
  }

  void build_optimizer() {
    if (o_.cuda_graph) {
      check(!group_, "--cuda-graph trains in one process: data-parallel ranks wait for their all-reduces on the host");
      optimizer_ = make_graph_safe_optimizer(o_.optimizer, params_);
      captured_ = std::make_unique<CapturedStep>([this](const torch::Tensor& x, const torch::Tensor& y) {
        return local_step(x, y);
      }, device_, o_.batch_size, o_.channels_last);
      return;
    }
    optimizer_ = make_optimizer(o_.optimizer, params_);
    if (uses_loss_scaling(o_)) scaler_.emplace();
    if (group_) {
      group_->broadcast_from_rank0(model_state(net_));  // every rank starts from rank 0's weights
      reducer_ = std::make_unique<GradientReducer>(*group_, params_, allreduce_mode(o_.allreduce), o_.bucket_mb);
    }
  }

  // The training loader, and the test set on the device.
  void make_loader() {
    LoaderOptions loader_options;
    loader_options.batch_size = o_.batch_size;
    loader_options.shuffle = true;
    loader_options.drop_last = o_.drop_last;
    loader_options.augment = o_.augment && o_.dataset == "cifar10";
    loader_options.workers = o_.workers;
    loader_options.seed = o_.seed;
    loader_options.rank = env_.rank;
    loader_options.world_size = env_.world_size;
    loader_ = std::make_unique<Loader>(train_set_, info_, loader_options);
    test_pixels_ = normalized_images(test_set_, info_.mean, info_.std, 0, test_set_.size());
    test_images_ =
        torch::from_blob(test_pixels_.data(), {test_set_.size(), info_.channels, info_.height, info_.width}).to(device_);
    test_labels_ = torch::tensor(std::vector<int64_t>(test_set_.labels.begin(), test_set_.labels.end())).to(device_);
  }

  int first_epoch() const { return static_cast<int>(report_.epochs.size()) + 1; }

  void open_step_log() {
    if (o_.step_log.empty() || !main_rank_) return;
    const bool append = first_epoch() > 1 && std::ifstream(o_.step_log).good();
    if (append) truncate_step_log(o_.step_log, first_epoch() - 1);
    step_log_.open(o_.step_log, append ? std::ios::app : std::ios::trunc);
    check(step_log_.good(), "cannot open step log '" + o_.step_log + "'");
    if (!append) step_log_ << "epoch,step,loss,acc\n";
  }

  void log_start() {
    log_ << "training " << o_.model << " (" << report_.parameters << " parameters) on " << o_.dataset << " ("
         << train_set_.size() << " train / " << test_set_.size() << " test images), " << o_.optimizer.name << " lr "
         << o_.optimizer.lr << ", batch " << o_.batch_size << ", " << o_.workers << " workers, "
         << torch::get_num_threads() << " threads, " << o_.device << "\n";
    if (group_)
      log_ << "data-parallel: " << env_.world_size << " ranks, batch " << o_.batch_size << " per rank ("
           << o_.batch_size * env_.world_size << " in all), gradients all-reduced " << o_.allreduce << " in "
           << reducer_->buckets() << " bucket(s) of at most " << o_.bucket_mb << " MB\n";
    if (first_epoch() > 1) log_ << "resuming after epoch " << first_epoch() - 1 << " from " << o_.resume << "\n";
  }

  // The forward pass and the loss, under autocast for amp-* runs.
  std::pair<torch::Tensor, torch::Tensor> logits_and_loss(const torch::Tensor& x, const torch::Tensor& y) {
    AutocastScope autocast(o_, device_);
    torch::Tensor logits = net_->forward(x);
    torch::Tensor loss = torch::nn::functional::cross_entropy(logits, y);
    return {logits, loss};
  }

  // A step of one process without loss scaling, on a batch on the device:
  // what --cuda-graph captures. Returns the totals on the device.
  torch::Tensor local_step(const torch::Tensor& x, const torch::Tensor& y) {
    optimizer_->zero_grad();
    const auto [logits, loss] = logits_and_loss(x, y);
    const torch::Tensor totals = step_totals(logits, loss, y);
    loss.backward();
    optimizer_->step();
    return totals;
  }

  // One optimizer step on `batch`; returns the step's totals on the host
  // (loss sum, correct, samples) of every rank.
  torch::Tensor train_step(Batch& batch, int64_t global_step, EpochStats& stats) {
    const auto compute_start = Clock::now();
    const double lr = scheduled_lr(o_, global_step, loader_->batches_per_epoch());
    stats.lr = lr;
    const torch::Tensor images =
        torch::from_blob(batch.images.data(), {batch.size, info_.channels, info_.height, info_.width});
    const torch::Tensor labels = torch::from_blob(batch.labels.data(), {batch.size}, torch::kInt64);
    if (captured_) {
      const torch::Tensor host_totals = captured_->run([&] { optimizer_->set_lr(lr); }, images, labels);
      stats.compute_seconds += seconds_since(compute_start);
      return host_totals;
    }
    optimizer_->set_lr(lr);
    const torch::Tensor x = input_layout(images.to(device_), o_.channels_last);
    const torch::Tensor y = labels.to(device_);
    optimizer_->zero_grad();
    const auto [logits, loss] = logits_and_loss(x, y);
    // Data-parallel ranks sum the step's totals behind the backward pass, so that the log shows the global step.
    const torch::Tensor totals = step_totals(logits, loss, y);
    ProcessGroup::Pending global_totals;
    if (group_) global_totals = group_->all_reduce_sum(totals);
    (scaler_ ? scaler_->scale(loss) : loss).backward();
    const double communication = reducer_ ? wait_for_all_reduces(*reducer_, global_totals, device_) : 0;
    if (reducer_) stats.allreduce_bytes += reducer_->bytes_per_step();
    if (!scaler_ || scaler_->unscale(params_))
      optimizer_->step();
    else
      ++stats.skipped_steps;  // float16 gradients overflowed: the scale is halved instead
    const torch::Tensor host_totals = totals.cpu();  // synchronises like the lab's loss.item()
    synchronize(device_);
    stats.compute_seconds += seconds_since(compute_start) - communication;
    stats.communication_seconds += communication;
    return host_totals;
  }

  // The epoch's steps (up to --max-steps), with their step-log rows.
  EpochStats train_epoch(int epoch, int64_t& global_step) {
    EpochStats stats;
    stats.epoch = epoch;
    const auto epoch_start = Clock::now();
    loader_->start_epoch(epoch);
    net_->train();
    double loss_sum = 0;
    int64_t correct = 0, seen = 0;
    std::optional<Progress> progress;
    if (main_rank_) progress.emplace("epoch " + std::to_string(epoch), loader_->batches_per_epoch());
    Batch batch;
    for (;;) {
      const auto wait_start = Clock::now();
      const bool more = loader_->next(&batch);
      stats.data_seconds += seconds_since(wait_start);
      if (!more || (o_.max_steps > 0 && global_step >= o_.max_steps)) break;
      const torch::Tensor host_totals = train_step(batch, global_step, stats);
      const double* sums = host_totals.data_ptr<double>();
      const double batch_loss = sums[0] / sums[2];
      const int64_t batch_correct = std::llround(sums[1]), batch_size = std::llround(sums[2]);
      ++global_step;
      ++stats.steps;
      loss_sum += sums[0];
      correct += batch_correct;
      seen += batch_size;
      if (step_log_.is_open())
        step_log_ << epoch << ',' << global_step << ',' << batch_loss << ','
                  << 100.0 * static_cast<double>(batch_correct) / static_cast<double>(batch_size) << '\n';
      if (progress) progress->advance();
    }
    if (progress) progress->finish();
    stats.epoch_seconds = seconds_since(epoch_start);
    stats.train_loss = seen ? loss_sum / static_cast<double>(seen) : 0;
    stats.train_top1 = seen ? 100.0 * static_cast<double>(correct) / static_cast<double>(seen) : 0;
    return stats;
  }

  // Scores the epoch's model on the test set and adds the epoch to the report.
  void evaluate_epoch(EpochStats& stats) {
    const auto eval_start = Clock::now();
    // Batch-norm statistics stay local while training; evaluation and the
    // checkpoint use rank 0's, as every rank's weights (equal up to rounding).
    if (group_) group_->broadcast_from_rank0(model_state(net_));
    const Evaluation test = evaluate(net_, test_images_, test_labels_, group_.get(), o_);
    stats.eval_seconds = seconds_since(eval_start);
    stats.test_loss = test.loss;
    stats.test_top1 = test.top1;
    report_.epochs.push_back(stats);
    report_.total_data_seconds += stats.data_seconds;
    report_.total_compute_seconds += stats.compute_seconds;
    report_.total_communication_seconds += stats.communication_seconds;
    report_.final_test_top1 = stats.test_top1;
    log_ << epoch_line(stats, o_.epochs, group_ != nullptr) << std::endl;
    if (step_log_.is_open()) step_log_.flush();
  }

  Checkpoint checkpoint_now() {
    Checkpoint c;
    c.model = o_.model;
    c.dataset = o_.dataset;
    c.batch_norm = o_.batch_norm;
    c.graph = net_->graph();
    c.classes = info_.classes;
    c.mean = info_.mean;
    c.std = info_.std;
    c.params = net_->export_state();
    c.training_json = to_json(o_, report_);
    return c;
  }

  void log_totals() {
    char totals[240], communication[64] = "";
    if (group_)
      std::snprintf(communication, sizeof communication, ", all-reduce %.2fs", report_.total_communication_seconds);
    std::snprintf(totals, sizeof totals,
                  "total: data loading %.2fs, compute %.2fs%s, run %.2fs, final test top-1 %.2f%%",
                  report_.total_data_seconds, report_.total_compute_seconds, communication, report_.total_seconds,
                  report_.final_test_top1);
    log_ << totals << std::endl;
  }

  const TrainOptions& o_;
  const DistributedEnvironment env_;
  const bool main_rank_;
  std::ostream silent_;  // data-parallel ranks other than 0 write no files and print nothing but errors
  std::ostream& log_;
  const DatasetInfo& info_;
  const std::string data_dir_;
  const torch::Device device_;
  std::unique_ptr<ProcessGroup> group_;
  Dataset train_set_, test_set_;
  GraphNet net_{nullptr};
  TrainReport report_;
  std::vector<torch::Tensor> params_;
  std::unique_ptr<Optimizer> optimizer_;
  std::unique_ptr<CapturedStep> captured_;  // --cuda-graph
  std::optional<LossScaler> scaler_;
  std::unique_ptr<GradientReducer> reducer_;
  std::unique_ptr<Loader> loader_;
  std::vector<float> test_pixels_;
  torch::Tensor test_images_, test_labels_;
  std::ofstream step_log_;
};

}  // namespace

TrainReport train(const TrainOptions& o, std::ostream& main_log) {
  validate(o);
  return TrainingRun(o, main_log).run();
}

}  // namespace octet
