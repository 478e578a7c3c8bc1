// `dpmu run`: a study config → parallel replicates → HDF5.
#include <fmt/format.h>

#include <atomic>
#include <cmath>
#include <csignal>
#include <iostream>
#include <limits>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>
#include <thread>

#include "commands.hpp"
#include "dpmu/api/release_report.hpp"
#include "dpmu/runtime/config.hpp"
#include "dpmu/runtime/runner.hpp"
#include "dpmu/runtime/streams.hpp"

#ifndef DPMU_VERSION
#define DPMU_VERSION "unknown"
#endif
#ifndef DPMU_GIT_SHA
#define DPMU_GIT_SHA "unknown"
#endif

namespace dpmu::cli {

namespace {

std::atomic<bool> g_stop{false};
extern "C" void on_stop_signal(int) { g_stop.store(true); }

struct RunArgs {
  std::string config;
  std::string out;
  int threads = 0;
  std::optional<std::int64_t> replicates;
  std::string shard = "0/1";
  bool resume = false;
  bool dry_run = false;
  bool quiet = false;
  std::optional<double> max_time;
};

/// Load a config; ConfigError becomes one message with every problem on its own line.
runtime::StudySpec load(const std::string& path, const runtime::StudyOverrides& overrides) {
  try {
    return runtime::load_study(path, overrides);
  } catch (const runtime::ConfigError& e) {
    std::string msg =
        fmt::format("{} problem{} in the config:", e.messages().size(), e.messages().size() == 1 ? "" : "s");
    for (const auto& m : e.messages()) msg += "\n  " + m;
    throw std::invalid_argument(msg);
  }
}

void dry_run(const runtime::StudySpec& s, const runtime::Shard& shard) {
  const auto blocks = s.blocks_per_cell();
  std::size_t width_total = 0;
  for (const auto& m : s.cell_metrics) {
    for (const auto& spec : *m) width_total += spec.size;
  }
  std::cout << fmt::format(
      "study: {}\nexperiment: {}\nmaster_seed: {}\nreplicates: {} per cell (block_size {}, {} blocks per cell)\n",
      s.source, s.experiment_name, s.master_seed, s.replicates, s.block_size, blocks);
  for (const auto& f : s.data_files) {
    std::cout << fmt::format("data file: {} ({}), sha256 {}\n", f.path, f.resolved, f.sha256);
  }
  std::set<std::string> data_keys;
  for (const auto& cell : s.cells) data_keys.insert(cell.data_key());
  std::cout << fmt::format("cells: {} ({} data sets per replicate, in {} data groups)\n", s.cells.size(),
                           s.experiment->has_data_step() ? data_keys.size() : s.cells.size(), s.data_groups.size());
  for (std::size_t c = 0; c < s.cells.size(); ++c) {
    std::cout << fmt::format("  {:>5}  {:016x}  {}\n", c, s.cells[c].cell_id(), s.cells[c].key());
  }
  // Counted, never listed (load_study bounds them; a dry run builds nothing in proportion to them).
  const auto tasks = static_cast<std::uint64_t>(s.data_groups.size()) * static_cast<std::uint64_t>(blocks);
  const std::uint64_t shard_tasks = runtime::ShardPlan::tasks_in_shard(tasks, shard);
  const double mb = static_cast<double>(width_total) * static_cast<double>(s.replicates) * 8.0 / 1e6;
  std::cout << fmt::format(
      "work: {} replicates in {} tasks; this shard ({}/{}): {} tasks; {} metric values per replicate on average; "
      "about {:.1f} MB of results\n",
      static_cast<std::int64_t>(s.cells.size()) * s.replicates, tasks, shard.index, shard.count, shard_tasks,
      static_cast<double>(width_total) / static_cast<double>(s.cells.size()), mb);
}

int run(const RunArgs& a) {
  runtime::StudyOverrides overrides;
  overrides.replicates = a.replicates;
  const runtime::Shard shard = runtime::parse_shard(a.shard);
  if (a.threads < 0) throw std::invalid_argument("--threads must be >= 0 (0: all cores)");
  if (const unsigned cores = std::thread::hardware_concurrency();
      cores > 0 && static_cast<unsigned>(a.threads) > cores) {
    std::cerr << fmt::format(
        "dpmu: note: --threads {} exceeds the {} hardware threads; the extra threads only "
        "share the same cores (results do not depend on the thread count)\n",
        a.threads, cores);
  }
  if (a.max_time) runtime::check_max_time(*a.max_time);
  set_activity("reading and checking the config " + a.config + " and its data files");
  const runtime::StudySpec study = load(a.config, overrides);
  if (a.dry_run) {
    runtime::check_results_fit_in_memory(study);  // what the run itself refuses, the dry run refuses
    dry_run(study, shard);
    return 0;
  }
  if (a.out.empty()) throw std::invalid_argument("--out FILE.h5 is required (except with --dry-run)");
  runtime::RunOptions opt;
  opt.out = a.out;
  opt.threads = a.threads;
  opt.shard = shard;
  opt.resume = a.resume;
  opt.quiet = a.quiet;
  opt.max_time_seconds = a.max_time;
  opt.stop_flag = &g_stop;
  opt.dpmu_version = DPMU_VERSION;
  opt.git_sha = DPMU_GIT_SHA;
  // SIGINT (Ctrl-C), SIGTERM (SLURM before a time limit) and SIGHUP (the terminal closed) stop cleanly.
  std::signal(SIGINT, on_stop_signal);
  std::signal(SIGTERM, on_stop_signal);
  std::signal(SIGHUP, on_stop_signal);
  set_activity("running the study " + a.config + " (the checkpoint " + runtime::journal_path(a.out).string() +
               " keeps every finished block: continue with --resume)");
  const runtime::RunReport rep = runtime::run_study(study, opt);
  std::signal(SIGINT, SIG_DFL);
  std::signal(SIGTERM, SIG_DFL);
  std::signal(SIGHUP, SIG_DFL);
  if (!a.quiet && !rep.removed_temporary_files.empty()) {
    std::string list;
    for (const auto& f : rep.removed_temporary_files) list += (list.empty() ? "" : ", ") + f;
    std::cerr << fmt::format("dpmu: removed {} temporary file(s) left by killed runs: {}\n",
                             rep.removed_temporary_files.size(), list);
  }
  if (!a.quiet) {
    if (rep.already_complete) {
      std::cerr << fmt::format("dpmu: {} is already complete ({} tasks); left as it is\n", a.out, rep.tasks_total);
    } else {
      std::cerr << fmt::format(
          "dpmu: {} tasks of {} ({} from the checkpoint), {} replicates in {:.2f} s (CPU {:.2f} s, of which {:.2f} s "
          "in the cells' set-up); wrote {}{}\n",
          rep.tasks_run + rep.tasks_resumed, rep.tasks_total, rep.tasks_resumed, rep.replicates_run, rep.loop_seconds,
          rep.loop_cpu_seconds, rep.prepare_cpu_seconds, a.out, rep.complete ? "" : " (incomplete)");
    }
  }
  if (!rep.complete) {
    // The hint repeats every option that defines the study (the checkpoint refuses other settings).
    std::string same;
    if (a.replicates) same += fmt::format(" --replicates {}", *a.replicates);
    if (shard.count > 1) same += " --shard " + a.shard;
    std::cerr << fmt::format(
        "dpmu: stopped before the end ({}); {} of {} tasks done. Continue with: dpmu run {} --out {}{} --resume\n",
        rep.stopped ? "--max-time or signal" : "interrupted", rep.tasks_run + rep.tasks_resumed, rep.tasks_total,
        a.config, a.out, same);
    return 3;
  }
  if (!rep.failed_cells.empty()) {
    std::cerr << fmt::format("dpmu: {} cell(s) have more failed replicates than max_failure_fraction = {}:\n",
                             rep.failed_cells.size(), study.max_failure_fraction);
    for (auto c : rep.failed_cells) std::cerr << "  cell " << c << ": " << study.cells[c].key() << "\n";
    std::cerr << "dpmu: see /errors in " << a.out << "\n";
    return 1;
  }
  return 0;
}

/// Find a cell by index ("3") or by cell_id in hex ("15da92038ceed026").
std::size_t find_cell(const runtime::StudySpec& s, const std::string& which) {
  for (std::size_t c = 0; c < s.cells.size(); ++c) {
    if (fmt::format("{:016x}", s.cells[c].cell_id()) == which) return c;
  }
  std::size_t pos = 0;
  std::size_t c = 0;
  try {
    c = std::stoul(which, &pos);
  } catch (const std::exception&) {
    pos = 0;
  }
  if (pos != which.size() || which.empty() || c >= s.cells.size()) {
    throw std::invalid_argument(
        fmt::format("--cell: '{}' is neither a cell index in [0, {}) nor a cell_id (dpmu run --dry-run lists them)",
                    which, s.cells.size()));
  }
  return c;
}

void replay(const std::string& config, const std::string& which, std::int64_t replicate) {
  set_activity("replaying a replicate of " + config);
  const runtime::StudySpec s = load(config, {});
  const std::size_t c = find_cell(s, which);
  if (replicate < 0 || replicate >= s.replicates) {
    throw std::invalid_argument(fmt::format("--replicate: {} is not in [0, {})", replicate, s.replicates));
  }
  const auto& cell = s.cells[c];
  // Exactly what dpmu run does for this cell and replicate (its data set is generated from the
  // data stream of its data key, whichever other cells share it).
  runtime::CellReplicate one;
  one.cell = &cell;
  std::shared_ptr<const void> prepared;
  try {
    auto calibration = runtime::calibration_stream(s.master_seed, cell);
    runtime::SharedCalibration shared;  // shared values are pure functions of their keys: the same alone
    prepared = s.experiment->prepare_erased(cell, calibration, shared);
    one.prepared = prepared.get();
  } catch (const std::exception& e) {
    one.prepare_error = e.what();
  }
  std::size_t width = 0;
  for (const auto& m : *s.cell_metrics[c]) width += m.size;
  std::vector<double> out(width, std::numeric_limits<double>::quiet_NaN());
  one.metrics = *s.cell_metrics[c];
  one.out = out;
  runtime::run_one_replicate(*s.experiment, cell.data_cell(), s.master_seed, static_cast<std::uint64_t>(replicate),
                             std::span<runtime::CellReplicate>(&one, 1));
  if (!one.failure_stage.empty()) {
    throw std::runtime_error(
        fmt::format("replicate {} of cell {} failed ({}): {}", replicate, c, one.failure_stage, one.failure_message));
  }
  nlohmann::ordered_json metrics = nlohmann::ordered_json::object();
  std::size_t off = 0;
  for (const auto& m : *s.cell_metrics[c]) {
    if (m.is_vector || m.size != 1) {
      metrics[m.name] = std::vector<double>(out.begin() + static_cast<std::ptrdiff_t>(off),
                                            out.begin() + static_cast<std::ptrdiff_t>(off + m.size));
    } else {
      metrics[m.name] = out[off];
    }
    off += m.size;
  }
  nlohmann::ordered_json j = {{"cell", c},
                              {"cell_id", fmt::format("{:016x}", cell.cell_id())},
                              {"key", cell.key()},
                              {"replicate", replicate},
                              {"metrics", metrics}};
  std::cout << api::json_text(j, 1) << "\n";
}

}  // namespace

void add_run_command(CLI::App& app) {
  auto args = std::make_shared<RunArgs>();
  auto* cmd = app.add_subcommand("run", "Run a study config (YAML) and write its results (HDF5); see docs/configs.md");
  cmd->add_option("config", args->config, "study config (YAML)")->required()->check(CLI::ExistingFile);
  cmd->add_option("--out", args->out, "results file (.h5); its checkpoint is FILE.journal while running");
  cmd->add_option("--threads", args->threads, "number of threads (0: all cores)");
  cmd->add_option("--replicates", args->replicates, "override the config's replicates (quick runs)")
      ->check(CLI::Range(std::int64_t{1}, std::int64_t{1000000000}));
  cmd->add_option("--shard", args->shard, "run shard i of N (i/N, 0 <= i < N); merge with dpmu merge");
  cmd->add_flag("--resume", args->resume, "continue an interrupted or stopped run from its checkpoint");
  cmd->add_flag("--dry-run", args->dry_run, "validate, print the expanded cells and the amount of work, and exit");
  cmd->add_flag("--quiet", args->quiet, "no progress on stderr");
  cmd->add_option("--max-time", args->max_time,
                  "stop cleanly after SECONDS, at most 1e9 (write finished blocks; exit code 3)");
  cmd->callback([args] {
    const int code = run(*args);
    if (code != 0) throw CLI::RuntimeError(code);
  });
  {
    auto config = std::make_shared<std::string>();
    auto cell = std::make_shared<std::string>();
    auto replicate = std::make_shared<std::int64_t>(0);
    auto* cmd = app.add_subcommand("replay",
                                   "Recompute one replicate of one cell and print its metrics (JSON); "
                                   "exceptions are reported, not caught");
    cmd->add_option("config", *config, "study config (YAML)")->required()->check(CLI::ExistingFile);
    cmd->add_option("--cell", *cell, "cell index or cell_id (hex), as listed by dpmu run --dry-run")->required();
    cmd->add_option("--replicate", *replicate, "replicate index (from 0)")->required();
    cmd->callback([config, cell, replicate] { replay(*config, *cell, *replicate); });
  }
}

}  // namespace dpmu::cli
