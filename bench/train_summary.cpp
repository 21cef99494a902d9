#include "bench/train_summary.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "common/error.h"

namespace octet {

namespace {

using nlohmann::json;

const std::vector<std::string> kPalette = {"#3b6ea5", "#c0504d", "#4f9a4f", "#8064a2", "#e08a1e",
                                           "#2c9fa8", "#7f7f7f", "#b5651d", "#d4477f", "#1f1f7a"};

SvgSeries series_named(const std::string& name, const std::string& color, bool dashed = false) {
  SvgSeries s;
  s.name = name;
  s.color = color;
  s.dashed = dashed;
  return s;
}

// The series called `name` in `series`, added in the next colour if missing.
SvgSeries& series_in(std::vector<SvgSeries>& series, const std::string& name) {
  for (SvgSeries& s : series)
    if (s.name == name) return s;
  series.push_back(series_named(name, kPalette[series.size() % kPalette.size()]));
  return series.back();
}

// A number of a training record; a diverged run's NaN loss is written as null.
double number_of(const json& v) { return v.is_null() ? NAN : v.get<double>(); }

double sum_over_epochs(const json& training, const char* key) {
  double total = 0;
  for (const json& e : training.at("epochs")) total += number_of(e.at(key));
  return total;
}

double mean_over_epochs(const json& training, const char* key, size_t first = 0) {
  const json& epochs = training.at("epochs");
  if (epochs.size() <= first) return NAN;
  double total = 0;
  for (size_t i = first; i < epochs.size(); ++i) total += number_of(epochs[i].at(key));
  return total / static_cast<double>(epochs.size() - first);
}

int64_t total_steps(const json& training) {
  int64_t steps = 0;
  for (const json& e : training.at("epochs")) steps += e.at("steps").get<int64_t>();
  return steps;
}

// Images trained on per second: every epoch's steps at the global batch, the
// last batch of an epoch being short.
double images_per_second(const json& training, int64_t global_batch, int64_t train_images) {
  double images = 0;
  for (const json& e : training.at("epochs"))
    images += static_cast<double>(std::min(e.at("steps").get<int64_t>() * global_batch, train_images));
  return images / sum_over_epochs(training, "epoch_seconds");
}

double last_epoch(const json& training, const char* key) { return number_of(training.at("epochs").back().at(key)); }

json number_or_null(double v) { return std::isfinite(v) ? json(v) : json(); }

std::string fixed(double v, int digits) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", digits, v);
  return buf;
}

std::string seconds(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.3g s", v);
  return buf;
}

// The row of a run: its setting columns, then `metrics` when it ran or the
// reason in "note" when it did not.
json base_row(const RunRecord& r) {
  json row = r.run.keys;
  if (!r.status.empty()) row["note"] = r.status;
  return row;
}

bool ran(const RunRecord& r) { return r.status.empty(); }

// One series per run that ran: `key` per epoch.
std::vector<SvgSeries> per_epoch_series(const std::vector<RunRecord>& records, const char* key) {
  std::vector<SvgSeries> series;
  for (const RunRecord& r : records) {
    if (!ran(r)) continue;
    SvgSeries s = series_named(r.run.label, kPalette[series.size() % kPalette.size()], series.size() >= kPalette.size());
    for (const json& e : r.training.at("epochs")) {
      s.x.push_back(e.at("epoch").get<double>());
      s.y.push_back(number_of(e.at(key)));
    }
    series.push_back(s);
  }
  return series;
}

// The training loss of each run that ran, per step where it logged them (about
// 100 window means), else per epoch. A run repeated in the plan (same_as: sgd
// at lr 0.1 is both the lab's lr and its usual one) is one line. Runs with the
// same `colour_key` value share a colour, the later ones dashed.
std::vector<SvgSeries> loss_series(const std::vector<RunRecord>& records, const std::string& colour_key) {
  std::vector<SvgSeries> series;
  std::vector<std::string> colour_values;
  for (const RunRecord& r : records) {
    if (!ran(r) || r.run.same_as >= 0) continue;
    const std::string value = colour_key.empty() ? r.run.label : r.run.keys.at(colour_key).dump();
    const auto found = std::find(colour_values.begin(), colour_values.end(), value);
    const size_t colour = static_cast<size_t>(found - colour_values.begin());
    const bool repeat = found != colour_values.end();
    if (!repeat) colour_values.push_back(value);
    SvgSeries s = series_named(r.run.label, kPalette[colour % kPalette.size()], repeat || colour >= kPalette.size());
    for (const StepLoss& p : window_means(r.step_losses, 100)) s.x.push_back(p.epochs), s.y.push_back(p.loss);
    if (r.step_losses.empty())
      for (const json& e : r.training.at("epochs")) {
        s.x.push_back(e.at("epoch").get<double>());
        s.y.push_back(number_of(e.at("train_loss")));
      }
    series.push_back(s);
  }
  return series;
}

void add_note_column_if_needed(ResultTable& t) {
  for (const json& row : t.rows)
    if (row.contains("note")) {
      t.columns.push_back("note");
      return;
    }
}

void summarize_workers(const std::vector<RunRecord>& records, ResultTable& t) {
  t.columns = {"workers", "data s/epoch", "compute s/epoch", "epoch s", "test top-1 %"};
  SvgSeries data = series_named("data loading", kPalette[0]), compute = series_named("compute", kPalette[1]),
            epoch = series_named("epoch", kPalette[2]);
  const RunRecord* best = nullptr;
  for (const RunRecord& r : records) {
    json row = base_row(r);
    if (ran(r)) {
      const json& tr = r.training;
      row["data s/epoch"] = mean_over_epochs(tr, "data_seconds");
      row["compute s/epoch"] = mean_over_epochs(tr, "compute_seconds");
      row["epoch s"] = mean_over_epochs(tr, "epoch_seconds");
      row["test top-1 %"] = tr.at("final_test_top1");
      const double w = r.run.keys.at("workers").get<double>();
      data.x.push_back(w), data.y.push_back(row["data s/epoch"]);
      compute.x.push_back(w), compute.y.push_back(row["compute s/epoch"]);
      epoch.x.push_back(w), epoch.y.push_back(row["epoch s"]);
      if (!best || mean_over_epochs(tr, "epoch_seconds") < mean_over_epochs(best->training, "epoch_seconds"))
        best = &r;
    }
    t.rows.push_back(row);
  }
  t.plot = {data, compute, epoch};
  t.plot_x_label = "loader workers";
  t.plot_y_label = "seconds per epoch";
  if (!best) return;
  const double data_s = mean_over_epochs(best->training, "data_seconds");
  const double compute_s = mean_over_epochs(best->training, "compute_seconds");
  const int workers = best->run.keys.at("workers");
  std::string why =
      data_s > compute_s
          ? "loading-bound: the step still waits " + seconds(data_s) + " per epoch for batches, more than its " +
                seconds(compute_s) + " of compute; a faster loader or more cores would help"
          : "compute-bound: waiting for batches (" + seconds(data_s) + " per epoch) is small against compute (" +
                seconds(compute_s) + "); more workers cannot help, and each one takes CPU time from the compute "
                                      "threads on a machine with few cores";
  t.notes.push_back("best: " + std::to_string(workers) + " worker" + (workers == 1 ? "" : "s") + " (" +
                    seconds(mean_over_epochs(best->training, "epoch_seconds")) + " per epoch), " + why);
  const RunRecord& first = records.front();
  if (ran(first) && &first != best)
    t.notes.push_back("0 workers: the training thread itself loads every batch: " +
                      seconds(mean_over_epochs(first.training, "data_seconds")) + " of loading per epoch against " +
                      seconds(data_s) + " with " + std::to_string(workers));
}

// optimizers and batchnorm: one row per run, loss and accuracy after the last epoch.
void summarize_accuracy(const std::vector<RunRecord>& records, ResultTable& t, const std::vector<std::string>& keys,
                        bool parameters, const std::string& colour_key) {
  t.columns = keys;
  if (parameters) t.columns.push_back("parameters");
  for (const char* c : {"s/epoch", "train loss", "train top-1 %", "test top-1 %"}) t.columns.push_back(c);
  for (const RunRecord& r : records) {
    json row = base_row(r);
    if (ran(r)) {
      const json& tr = r.training;
      if (parameters) row["parameters"] = tr.at("parameters");
      row["s/epoch"] = mean_over_epochs(tr, "epoch_seconds");
      row["train loss"] = number_or_null(last_epoch(tr, "train_loss"));
      row["train top-1 %"] = last_epoch(tr, "train_top1");
      row["test top-1 %"] = tr.at("final_test_top1");
    }
    t.rows.push_back(row);
  }
  t.plot = loss_series(records, colour_key);
  t.plot_x_label = "epoch";
  t.plot_y_label = "training loss";
}

void note_best_accuracy(const std::vector<RunRecord>& records, ResultTable& t, const std::string& group_key) {
  std::vector<std::string> groups;
  for (const RunRecord& r : records) {
    const std::string g = r.run.keys.value(group_key, std::string());
    if (std::find(groups.begin(), groups.end(), g) == groups.end()) groups.push_back(g);
  }
  for (const std::string& g : groups) {
    const RunRecord* best = nullptr;
    for (const RunRecord& r : records)
      if (ran(r) && r.run.keys.value(group_key, std::string()) == g &&
          (!best || r.training.at("final_test_top1") > best->training.at("final_test_top1")))
        best = &r;
    if (best)
      t.notes.push_back((g.empty() ? "" : g + ": ") + "best test top-1 " + best->run.label + " (" +
                        fixed(best->training.at("final_test_top1").get<double>(), 2) + "%)");
  }
}

void summarize_device(const std::vector<RunRecord>& records, ResultTable& t) {
  t.columns = {"device", "s/epoch", "data s/epoch", "compute s/epoch", "test top-1 %"};
  for (const RunRecord& r : records) {
    json row = base_row(r);
    if (ran(r)) {
      row["s/epoch"] = mean_over_epochs(r.training, "epoch_seconds");
      row["data s/epoch"] = mean_over_epochs(r.training, "data_seconds");
      row["compute s/epoch"] = mean_over_epochs(r.training, "compute_seconds");
      row["test top-1 %"] = r.training.at("final_test_top1");
    }
    t.rows.push_back(row);
  }
  if (ran(records[0]) && ran(records[1]))
    t.notes.push_back("the GPU trains " +
                      fixed(mean_over_epochs(records[0].training, "epoch_seconds") /
                                mean_over_epochs(records[1].training, "epoch_seconds"),
                            1) +
                      "x as fast as the CPU");
  t.plot = per_epoch_series(records, "epoch_seconds");
  t.plot_x_label = "epoch";
  t.plot_y_label = "seconds per epoch";
}

void summarize_precision(const std::vector<RunRecord>& records, ResultTable& t, int64_t train_images) {
  t.columns = {"lever", "first epoch s", "steady epoch s", "images/s", "test top-1 %"};
  const RunRecord* fastest = nullptr;
  const auto steady = [](const RunRecord& r) {
    const double s = mean_over_epochs(r.training, "epoch_seconds", 1);
    return std::isfinite(s) ? s : last_epoch(r.training, "epoch_seconds");
  };
  for (const RunRecord& r : records) {
    json row = base_row(r);
    if (ran(r)) {
      row["first epoch s"] = r.training.at("epochs").front().at("epoch_seconds");
      row["steady epoch s"] = number_or_null(mean_over_epochs(r.training, "epoch_seconds", 1));
      row["images/s"] = images_per_second(r.training, r.run.options.batch_size, train_images);
      row["test top-1 %"] = r.training.at("final_test_top1");
      if (!fastest || steady(r) < steady(*fastest)) fastest = &r;
    }
    t.rows.push_back(row);
  }
  if (ran(records[0]) && records[0].training.at("epochs").size() < 2)
    t.notes.push_back("steady state needs --epochs 2 or more (the first epoch carries the warm-up costs)");
  if (fastest && ran(records[0]) && fastest != &records[0])
    t.notes.push_back("fastest: " + fastest->run.label + ", " + fixed(steady(records[0]) / steady(*fastest), 2) +
                      "x fp32's steady epoch time, test top-1 " +
                      fixed(fastest->training.at("final_test_top1").get<double>(), 2) + "% against " +
                      fixed(records[0].training.at("final_test_top1").get<double>(), 2) + "%");
  t.plot = per_epoch_series(records, "epoch_seconds");
  t.plot_x_label = "epoch";
  t.plot_y_label = "seconds per epoch";
}

void summarize_batch_size(const std::vector<RunRecord>& records, ResultTable& t, int64_t train_images) {
  t.columns = {"lr rule", "batch", "lr", "warm-up epochs", "steps", "s/epoch", "images/s", "train loss", "test top-1 %"};
  t.group_column = "lr rule";
  std::vector<SvgSeries> series;
  for (const RunRecord& r : records) {
    json row = base_row(r);
    const std::string rule = r.run.keys.at("lr rule");
    SvgSeries& s = series_in(series, rule);
    if (ran(r)) {
      const json& tr = r.training;
      row["steps"] = total_steps(tr);
      row["s/epoch"] = mean_over_epochs(tr, "epoch_seconds");
      row["images/s"] = images_per_second(tr, r.run.options.batch_size, train_images);
      row["train loss"] = number_or_null(last_epoch(tr, "train_loss"));
      row["test top-1 %"] = tr.at("final_test_top1");
      s.x.push_back(std::log2(r.run.keys.at("batch").get<double>()));
      s.y.push_back(tr.at("final_test_top1").get<double>());
    }
    t.rows.push_back(row);
  }
  note_best_accuracy(records, t, "lr rule");
  t.plot = series;
  t.plot_x_label = "log2 of the batch size";
  t.plot_y_label = "test top-1 %";
}

void summarize_scaling(const std::vector<RunRecord>& records, ResultTable& t, int64_t train_images) {
  t.columns = {"scaling",        "processes",          "batch per process",     "global batch",
               "s/epoch",        "images/s",           "speed-up",              "efficiency",
               "s/step",         "compute s/step",     "communication s/step",  "MB all-reduced/step",
               "ring MB/step",   "bandwidth GB/s",     "test top-1 %"};
  t.group_column = "scaling";
  double single = NAN;  // images/s of one process
  for (const RunRecord& r : records)
    if (ran(r) && r.run.processes == 1)
      single = images_per_second(r.training, r.run.options.batch_size, train_images);
  std::vector<SvgSeries> series;
  SvgSeries ideal = series_named("ideal", "#7f7f7f", true);
  for (const RunRecord& r : records) {
    json row = base_row(r);
    const std::string mode = r.run.keys.at("scaling");
    SvgSeries& s = series_in(series, mode);
    if (ran(r)) {
      const json& tr = r.training;
      const double p = r.run.processes, steps = static_cast<double>(total_steps(tr));
      const double ips = images_per_second(tr, r.run.keys.at("global batch").get<int64_t>(), train_images);
      const double communication = sum_over_epochs(tr, "communication_seconds") / steps;
      // The ring all-reduce sends and receives 2N(P-1)/P bytes per rank and
      // step, N the fp32 gradient bytes.
      const double gradient_bytes = 4.0 * tr.at("parameters").get<double>();
      const double ring = 2 * gradient_bytes * (p - 1) / p;
      row["s/epoch"] = mean_over_epochs(tr, "epoch_seconds");
      row["images/s"] = ips;
      row["speed-up"] = number_or_null(ips / single);
      row["efficiency"] = number_or_null(ips / single / p);
      row["s/step"] = sum_over_epochs(tr, "epoch_seconds") / steps;
      row["compute s/step"] = sum_over_epochs(tr, "compute_seconds") / steps;  // the trainer's excludes the all-reduce
      row["communication s/step"] = communication;
      row["MB all-reduced/step"] = sum_over_epochs(tr, "allreduce_bytes") / steps / 1e6;
      row["ring MB/step"] = ring / 1e6;
      row["bandwidth GB/s"] = p > 1 && communication > 0 ? json(ring / communication / 1e9) : json();
      row["test top-1 %"] = tr.at("final_test_top1");
      row["world size"] = tr.at("world_size");
      s.x.push_back(p), s.y.push_back(ips / single);
      if (mode == "weak") ideal.x.push_back(p), ideal.y.push_back(p);
    }
    t.rows.push_back(row);
  }
  series.push_back(ideal);
  t.plot = series;
  t.plot_x_label = "processes";
  t.plot_y_label = "speed-up (images/s against 1 process)";
  t.notes.push_back("weak scaling keeps the batch per process (the global batch grows with the processes); strong "
                    "scaling keeps the global batch (each process gets a share)");
  t.notes.push_back("speed-up: images/s against one process; efficiency: speed-up / processes; compute s/step: the "
                    "step without its wait for the all-reduce; bandwidth: the ring all-reduce volume 2N(P-1)/P (N: "
                    "fp32 gradient bytes) over the communication time");
}

}  // namespace

ResultTable summarize_scenario(const BenchTrainOptions& o, const std::vector<RunRecord>& records, int64_t train_images) {
  check(!records.empty(), "no runs to summarize");
  ResultTable t;
  t.scenario = o.scenario;
  const TrainOptions& b = o.base;
  const std::string setup = b.model + " on " + b.dataset;
  const std::string& s = o.scenario;
  if (s == "workers") {
    t.title = "Data-loader workers, " + setup;
    summarize_workers(records, t);
  } else if (s == "optimizers") {
    t.title = "Optimizers, " + setup;
    t.group_column = "lr setting";
    summarize_accuracy(records, t, {"lr setting", "optimizer", "lr"}, false, "optimizer");
    note_best_accuracy(records, t, "lr setting");
  } else if (s == "batchnorm") {
    t.title = "Batch norm, " + setup;
    summarize_accuracy(records, t, {"batch norm"}, true, "");
    if (ran(records[0]) && ran(records[1]) && records[0].training.at("parameters") == records[1].training.at("parameters"))
      t.notes.push_back(b.model + " has no batch norm: both runs train the same network (take a ResNet)");
  } else if (s == "device") {
    t.title = "CPU against GPU, " + setup;
    summarize_device(records, t);
  } else if (s == "precision") {
    t.title = "Precision and speed levers, " + setup + " on " + b.device;
    summarize_precision(records, t, train_images);
  } else if (s == "batch-size") {
    t.title = "Batch size, " + setup;
    summarize_batch_size(records, t, train_images);
  } else if (s == "scaling") {
    t.title = "Data-parallel scaling, " + setup;
    summarize_scaling(records, t, train_images);
  } else {
    fail("unknown scenario '" + s + "'");
  }
  for (const RunRecord& r : records)
    if (ran(r) && r.run.same_as < 0 && !std::isfinite(last_epoch(r.training, "train_loss")))
      t.notes.push_back(r.run.label + ": the training diverged (loss NaN)");
  add_note_column_if_needed(t);
  json runs = json::array();
  for (const RunRecord& r : records)
    runs.push_back({{"label", r.run.label}, {"status", r.status.empty() ? "ran" : r.status}, {"training", r.training}});
  t.details["runs"] = runs;
  t.details["train_images_per_epoch"] = train_images;
  return t;
}

std::string step_times_csv(const ResultTable& scaling) {
  std::string csv = "p,w,seconds\n";
  for (const json& row : scaling.rows)
    if (row.value("scaling", std::string()) == "strong" && row.value("s/step", json()).is_number()) {
      const std::string p = row.at("processes").dump();
      csv += p + "," + p + "," + row.at("s/step").dump() + "\n";
    }
  return csv;
}

}  // namespace octet
