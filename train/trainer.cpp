#include "train/trainer.h"

#include <torch/torch.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <optional>
#include <thread>

#include "common/error.h"
#include "common/file_io.h"
#include "common/progress.h"
#include "data/loader.h"
#include "models/checkpoint.h"
#include "models/registry.h"
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

}  // namespace

TrainReport train(const TrainOptions& o, std::ostream& main_log) {
  validate(o);
  // Data-parallel ranks other than 0 write no files and print nothing but errors.
  const DistributedEnvironment env = read_distributed_environment();
  const bool main_rank = env.rank == 0;
  std::ostream silent(nullptr);
  std::ostream& log = main_rank ? main_log : silent;
  const DatasetInfo& info = dataset_info(o.dataset);
  std::string dir = o.data_dir.empty() ? info.default_dir : o.data_dir;
  check(!dir.empty(), "--data DIR is required for dataset '" + o.dataset + "'");
  const int cores = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  torch::set_num_threads(o.threads > 0 ? o.threads : std::max(1, cores / env.local_world_size));
  torch::manual_seed(o.seed);

  const torch::Device device = rank_device(o.device, env);
  apply_precision(o, device);
  if (device.is_cuda()) at::globalContext().setBenchmarkCuDNN(true);
  std::unique_ptr<ProcessGroup> group;
  if (env.distributed()) group = std::make_unique<ProcessGroup>(env, device, std::chrono::seconds(o.dist_timeout));

  Dataset train_set = load_dataset(o.dataset, dir, Split::Train);
  Dataset test_set = load_dataset(o.dataset, dir, Split::Test);
  keep_first(train_set, o.train_limit);
  keep_first(test_set, o.test_limit);

  GraphNet net(build_model(o.model, model_options_for(o.dataset, o.batch_norm)));
  net->to(device);

  TrainReport report;
  if (!o.init.empty() && o.resume.empty()) {  // a resumed run takes its weights from --resume
    const Checkpoint checkpoint = load_checkpoint(o.init);
    check_same_model(o, checkpoint, "--init " + o.init + ": ");
    net->import_state(checkpoint.params);
  }
  if (!o.resume.empty()) {
    const Checkpoint checkpoint = load_checkpoint(o.resume);
    check_same_model(o, checkpoint, "--resume " + o.resume + ": ");
    report = resumed_report(o, checkpoint);
    check(static_cast<int>(report.epochs.size()) < o.epochs,
          "--resume " + o.resume + ": all " + std::to_string(o.epochs) + " epochs are already done");
    net->import_state(checkpoint.params);
  }
  const std::vector<torch::Tensor> params = net->parameters();
  if (o.channels_last) to_channels_last(params);
  for (const auto& p : params) report.parameters += p.numel();
  report.world_size = env.world_size;
  const int first_epoch = static_cast<int>(report.epochs.size()) + 1;
  auto optimizer = make_optimizer(o.optimizer, params);
  std::optional<LossScaler> scaler;
  if (uses_loss_scaling(o)) scaler.emplace();
  std::unique_ptr<GradientReducer> reducer;
  if (group) {
    group->broadcast_from_rank0(model_state(net));  // every rank starts from rank 0's weights
    reducer = std::make_unique<GradientReducer>(*group, params, allreduce_mode(o.allreduce), o.bucket_mb);
  }

  LoaderOptions loader_options;
  loader_options.batch_size = o.batch_size;
  loader_options.shuffle = true;
  loader_options.drop_last = o.drop_last;
  loader_options.augment = o.augment && o.dataset == "cifar10";
  loader_options.workers = o.workers;
  loader_options.seed = o.seed;
  loader_options.rank = env.rank;
  loader_options.world_size = env.world_size;
  Loader loader(train_set, info, loader_options);

  std::vector<float> test_pixels = normalized_images(test_set, info.mean, info.std, 0, test_set.size());
  const torch::Tensor test_images =
      torch::from_blob(test_pixels.data(), {test_set.size(), info.channels, info.height, info.width}).to(device);
  const torch::Tensor test_labels =
      torch::tensor(std::vector<int64_t>(test_set.labels.begin(), test_set.labels.end())).to(device);

  std::ofstream step_log;
  if (!o.step_log.empty() && main_rank) {
    const bool append = first_epoch > 1 && std::ifstream(o.step_log).good();
    if (append) truncate_step_log(o.step_log, first_epoch - 1);
    step_log.open(o.step_log, append ? std::ios::app : std::ios::trunc);
    check(step_log.good(), "cannot open step log '" + o.step_log + "'");
    if (!append) step_log << "epoch,step,loss,acc\n";
  }

  log << "training " << o.model << " (" << report.parameters << " parameters) on " << o.dataset << " ("
      << train_set.size() << " train / " << test_set.size() << " test images), " << o.optimizer.name << " lr "
      << o.optimizer.lr << ", batch " << o.batch_size << ", " << o.workers << " workers, "
      << torch::get_num_threads() << " threads, " << o.device << "\n";
  if (group)
    log << "data-parallel: " << env.world_size << " ranks, batch " << o.batch_size << " per rank ("
        << o.batch_size * env.world_size << " in all), gradients all-reduced " << o.allreduce << " in "
        << reducer->buckets() << " bucket(s) of at most " << o.bucket_mb << " MB\n";
  if (first_epoch > 1) log << "resuming after epoch " << first_epoch - 1 << " from " << o.resume << "\n";

  const double resumed_seconds = report.total_seconds;
  const auto run_start = Clock::now();
  const int64_t steps_per_epoch = loader.batches_per_epoch();
  int64_t global_step = 0;
  for (const EpochStats& e : report.epochs) global_step += e.steps;
  for (int epoch = first_epoch; epoch <= o.epochs; ++epoch) {
    if (o.max_steps > 0 && global_step >= o.max_steps) break;
    EpochStats stats;
    stats.epoch = epoch;
    const auto epoch_start = Clock::now();
    loader.start_epoch(epoch);
    net->train();
    double loss_sum = 0;
    int64_t correct = 0, seen = 0;
    std::optional<Progress> progress;
    if (main_rank) progress.emplace("epoch " + std::to_string(epoch), steps_per_epoch);
    Batch batch;
    for (;;) {
      const auto wait_start = Clock::now();
      const bool more = loader.next(&batch);
      stats.data_seconds += seconds_since(wait_start);
      if (!more || (o.max_steps > 0 && global_step >= o.max_steps)) break;

      const auto compute_start = Clock::now();
      const double lr = scheduled_lr(o, global_step, steps_per_epoch);
      optimizer->set_lr(lr);
      stats.lr = lr;
      const torch::Tensor x = input_layout(
          torch::from_blob(batch.images.data(), {batch.size, info.channels, info.height, info.width}).to(device),
          o.channels_last);
      const torch::Tensor y = torch::from_blob(batch.labels.data(), {batch.size}, torch::kInt64).to(device);
      optimizer->zero_grad();
      torch::Tensor logits, loss;
      {
        AutocastScope autocast(o, device);
        logits = net->forward(x);
        loss = torch::nn::functional::cross_entropy(logits, y);
      }
      // Data-parallel ranks sum the step's totals behind the backward pass, so that the log shows the global step.
      const torch::Tensor totals = step_totals(logits, loss, y);
      ProcessGroup::Pending global_totals;
      if (group) global_totals = group->all_reduce_sum(totals);
      (scaler ? scaler->scale(loss) : loss).backward();
      const double communication = reducer ? wait_for_all_reduces(*reducer, global_totals, device) : 0;
      if (reducer) stats.allreduce_bytes += reducer->bytes_per_step();
      if (!scaler || scaler->unscale(params))
        optimizer->step();
      else
        ++stats.skipped_steps;  // float16 gradients overflowed: the scale is halved instead
      const torch::Tensor host_totals = totals.cpu();  // synchronises like the lab's loss.item()
      synchronize(device);
      stats.compute_seconds += seconds_since(compute_start) - communication;
      stats.communication_seconds += communication;

      const double* sums = host_totals.data_ptr<double>();
      const double batch_loss = sums[0] / sums[2];
      const int64_t batch_correct = std::llround(sums[1]), batch_size = std::llround(sums[2]);
      ++global_step;
      ++stats.steps;
      loss_sum += sums[0];
      correct += batch_correct;
      seen += batch_size;
      if (step_log.is_open())
        step_log << epoch << ',' << global_step << ',' << batch_loss << ','
                 << 100.0 * static_cast<double>(batch_correct) / static_cast<double>(batch_size) << '\n';
      if (progress) progress->advance();
    }
    if (progress) progress->finish();
    stats.epoch_seconds = seconds_since(epoch_start);
    stats.train_loss = seen ? loss_sum / static_cast<double>(seen) : 0;
    stats.train_top1 = seen ? 100.0 * static_cast<double>(correct) / static_cast<double>(seen) : 0;
    const auto eval_start = Clock::now();
    // Batch-norm statistics stay local while training; evaluation and the
    // checkpoint use rank 0's, as every rank's weights (equal up to rounding).
    if (group) group->broadcast_from_rank0(model_state(net));
    const Evaluation test = evaluate(net, test_images, test_labels, group.get(), o);
    stats.eval_seconds = seconds_since(eval_start);
    stats.test_loss = test.loss;
    stats.test_top1 = test.top1;
    report.epochs.push_back(stats);
    report.total_data_seconds += stats.data_seconds;
    report.total_compute_seconds += stats.compute_seconds;
    report.total_communication_seconds += stats.communication_seconds;
    report.final_test_top1 = stats.test_top1;
    log << epoch_line(stats, o.epochs, group != nullptr) << std::endl;
    if (step_log.is_open()) step_log.flush();

    if (!o.checkpoint.empty() && main_rank) {
      Checkpoint c;
      c.model = o.model;
      c.dataset = o.dataset;
      c.batch_norm = o.batch_norm;
      c.graph = net->graph();
      c.classes = info.classes;
      c.mean = info.mean;
      c.std = info.std;
      c.params = net->export_state();
      report.total_seconds = resumed_seconds + seconds_since(run_start);
      c.training_json = to_json(o, report);
      save_checkpoint(c, o.checkpoint);
    }
  }
  report.total_seconds = resumed_seconds + seconds_since(run_start);
  char totals[240], communication[64] = "";
  if (group) std::snprintf(communication, sizeof communication, ", all-reduce %.2fs", report.total_communication_seconds);
  std::snprintf(totals, sizeof totals,
                "total: data loading %.2fs, compute %.2fs%s, run %.2fs, final test top-1 %.2f%%",
                report.total_data_seconds, report.total_compute_seconds, communication, report.total_seconds,
                report.final_test_top1);
  log << totals << std::endl;
  if (!o.json.empty() && main_rank) write_text_output(o.json, to_json(o, report) + "\n");
  return report;
}

}  // namespace octet
