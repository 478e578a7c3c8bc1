// `dpmu merge`, `dpmu summarize`, `dpmu compare`: work on results files (HDF5).
#include <fmt/format.h>

#include <iostream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "commands.hpp"
#include "dpmu/runtime/results.hpp"
#include "dpmu/runtime/runner.hpp"

namespace dpmu::cli {

namespace {

nlohmann::ordered_json value_json(const runtime::ParameterValue& v) {
  if (const auto* i = std::get_if<std::int64_t>(&v)) return *i;
  if (const auto* d = std::get_if<double>(&v)) return *d;
  return std::get<std::string>(v);
}

nlohmann::ordered_json summary_json(const runtime::Summary& s) {
  return {{"mean", s.mean},   {"sd", s.sd},    {"mcse", s.mcse}, {"q025", s.q025}, {"q25", s.q250},
          {"median", s.q500}, {"q75", s.q750}, {"q975", s.q975}, {"n", s.n_ok},    {"n_failed", s.n - s.n_ok}};
}

std::string num(double x) { return std::isnan(x) ? "nan" : fmt::format("{:.6g}", x); }

void summarize(const std::string& path, const std::string& format) {
  const runtime::StudyResults r = runtime::read_results(path);
  if (!r.info.complete) {
    std::cerr << fmt::format("dpmu: note: {} is incomplete; each summary uses the replicates done so far (\"n\")\n",
                             path);
  }
  nlohmann::ordered_json out = nlohmann::ordered_json::array();
  for (std::size_t c = 0; c < r.cells.size(); ++c) {
    nlohmann::ordered_json params = nlohmann::ordered_json::object();
    for (const auto& [name, v] : r.cells[c].values()) params[name] = value_json(v);
    nlohmann::ordered_json metrics = nlohmann::ordered_json::object();
    for (std::size_t m = 0; m < r.metrics.size(); ++m) {
      const auto& ml = r.metrics[m];
      for (std::size_t k = 0; k < ml.sizes[c]; ++k) {
        const std::string name = ml.is_vector ? fmt::format("{}[{}]", ml.name, k) : ml.name;
        metrics[name] = summary_json(runtime::summarize_component(r, c, m, k));
      }
    }
    out.push_back({{"cell", c},
                   {"cell_id", fmt::format("{:016x}", r.cells[c].cell_id())},
                   {"parameters", params},
                   {"replicates_done", r.n_done(c)},
                   {"replicates_failed", r.n_failed(c)},
                   {"failed", r.cell_failed(c)},
                   {"metrics", metrics}});
  }
  if (format == "json") {
    std::cout << out.dump(1) << "\n";
    return;
  }
  std::cout << fmt::format("{:>5}  {:<40} {:<16} {:>12} {:>10} {:>10} {:>12} {:>12} {:>12} {:>8}\n", "cell",
                           "parameters", "metric", "mean", "mcse", "sd", "q25", "median", "q75", "n");
  for (const auto& cell : out) {
    std::string params;
    for (const auto& [k, v] : cell["parameters"].items()) params += (params.empty() ? "" : " ") + k + "=" + v.dump();
    for (const auto& [name, s] : cell["metrics"].items()) {
      auto g = [&](const char* key) { return s[key].is_null() ? std::string("nan") : num(s[key].get<double>()); };
      std::cout << fmt::format("{:>5}  {:<40} {:<16} {:>12} {:>10} {:>10} {:>12} {:>12} {:>12} {:>8}\n",
                               cell["cell"].get<std::size_t>(), params, name, g("mean"), g("mcse"), g("sd"), g("q25"),
                               g("median"), g("q75"), s["n"].get<std::int64_t>());
    }
  }
}

int compare(const std::string& a, const std::string& b, double z) {
  if (!(z > 0)) throw std::invalid_argument("--z must be > 0");
  const auto ra = runtime::read_results(a);
  const auto rb = runtime::read_results(b);
  for (const auto& [path, r] : {std::pair{a, &ra}, std::pair{b, &rb}}) {
    if (!r->info.complete) {
      std::cout << fmt::format(
          "note: {} is incomplete (a stopped run): its summaries use only the finished replicates\n", path);
    }
  }
  const auto diffs = runtime::compare_results(ra, rb, z);
  std::size_t by_z = 0, unjudged = 0, structural = 0;
  for (const auto& d : diffs) {
    if (d.metric.empty()) {
      std::cout << fmt::format("DIFFERENT  cell {}: {}\n", d.cell_key, d.reason);
    } else {
      std::cout << fmt::format("DIFFERENT  cell {}  metric {}: mean {} (mcse {}) vs {} (mcse {}), z = {}: {}\n",
                               d.cell_key, d.metric, num(d.mean_a), num(d.mcse_a), num(d.mean_b), num(d.mcse_b),
                               num(d.z), d.reason);
    }
    if (d.reason.rfind("cannot judge", 0) == 0) {
      ++unjudged;
    } else if (std::isfinite(d.z) || d.reason.find("zero Monte Carlo") != std::string::npos) {
      ++by_z;
    } else {
      ++structural;
    }
  }
  if (diffs.empty()) {
    std::cout << fmt::format("equal: every cell and metric of {} and {} agrees within |z| <= {}\n", a, b, z);
    return 0;
  }
  std::cout << fmt::format(
      "{} difference(s): {} with |z| > {}, {} that cannot be judged (Monte Carlo SE unknown), "
      "{} in structure (cells, metrics, sizes or NaN in one file only)\n",
      diffs.size(), by_z, z, unjudged, structural);
  return 1;
}

}  // namespace

void add_results_commands(CLI::App& app) {
  {
    auto out = std::make_shared<std::string>();
    auto shards = std::make_shared<std::vector<std::string>>();
    auto* cmd = app.add_subcommand("merge", "Merge the shard files of one study (dpmu run --shard i/N) into one file");
    cmd->add_option("out", *out, "merged results file (.h5); must not exist")->required();
    cmd->add_option("shards", *shards, "every shard file, once")->required()->check(CLI::ExistingFile);
    cmd->callback([out, shards] {
      if (std::filesystem::exists(*out))
        throw std::invalid_argument(fmt::format("merge: {} exists; choose another name", *out));
      std::vector<std::filesystem::path> paths(shards->begin(), shards->end());
      runtime::merge_results(*out, paths);
    });
  }
  {
    auto file = std::make_shared<std::string>();
    auto format = std::make_shared<std::string>("json");
    auto* cmd = app.add_subcommand("summarize", "Print every cell's parameters and metric summaries");
    cmd->add_option("file", *file, "results file (.h5)")->required()->check(CLI::ExistingFile);
    cmd->add_option("--format", *format, "json (default) or table")->check(CLI::IsMember({"json", "table"}));
    cmd->callback([file, format] { summarize(*file, *format); });
  }
  {
    auto a = std::make_shared<std::string>();
    auto b = std::make_shared<std::string>();
    auto z = std::make_shared<double>(4.0);
    auto* cmd = app.add_subcommand(
        "compare",
        "Flag cell/metric means that differ by more than z combined Monte Carlo standard errors (exit 1 if any)");
    cmd->add_option("a", *a, "first results file")->required()->check(CLI::ExistingFile);
    cmd->add_option("b", *b, "second results file")->required()->check(CLI::ExistingFile);
    cmd->add_option("--z", *z, "z-score threshold (default 4)");
    cmd->callback([a, b, z] {
      const int code = compare(*a, *b, *z);
      if (code != 0) throw CLI::RuntimeError(code);
    });
  }
}

}  // namespace dpmu::cli
