// `dpmu merge`, `dpmu summarize`, `dpmu compare`: work on results files (HDF5).
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "commands.hpp"
#include "dpmu/api/release_report.hpp"
#include "dpmu/runtime/results.hpp"
#include "dpmu/runtime/runner.hpp"
#include "dpmu/runtime/tidy.hpp"

namespace dpmu::cli {

namespace {

nlohmann::ordered_json value_json(const runtime::ParameterValue& v) {
  return std::visit([](const auto& x) { return nlohmann::ordered_json(x); }, v);
}

/// The summary with the names of /summary/<metric>/... in the results file (docs/results-schema.md).
nlohmann::ordered_json summary_json(const runtime::Summary& s) {
  return {{"mean", s.mean}, {"sd", s.sd},     {"mcse", s.mcse}, {"q025", s.q025}, {"q250", s.q250},
          {"q500", s.q500}, {"q750", s.q750}, {"q975", s.q975}, {"n_ok", s.n_ok}, {"n_nan", s.n - s.n_ok}};
}

std::string num(double x) { return std::isnan(x) ? "nan" : fmt::format("{:.6g}", x); }

/// A message as one printable line: control characters become \xNN (a CSV's stray bytes or a
/// newline in an exception message must not garble the table).
std::string printable(const std::string& text) {
  std::string out;
  for (unsigned char ch : text) {
    if (ch < 0x20 || ch == 0x7f) {
      out += fmt::format("\\x{:02x}", static_cast<unsigned>(ch));
    } else {
      out += static_cast<char>(ch);
    }
  }
  return out;
}

runtime::StudyResults read(const std::string& path) {
  set_activity("reading the results file " + path);
  return runtime::read_results(path);
}

void summarize(const std::string& path, const std::string& format) {
  const runtime::StudyResults r = read(path);
  set_activity("summarizing " + path);
  if (!r.info.complete) {
    std::cerr << fmt::format("dpmu: note: {} is incomplete; each summary uses the replicates done so far (\"n_ok\")\n",
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
        if (ml.is_vector) metrics[name]["component_label"] = ml.component_label(c, k);
      }
    }
    out.push_back({{"cell", c},
                   {"cell_key", runtime::hex_key(r.cells[c].cell_id())},
                   {"parameters", params},
                   {"n_done", r.n_done(c)},
                   {"n_failed", r.n_failed(c)},
                   {"failed", r.cell_failed(c)},
                   {"metrics", metrics}});
  }
  if (format == "json") {
    std::cout << api::json_text(out, 1) << "\n";
    return;
  }
  // Parameters with one value in every cell are printed once above the table; each cell's varying
  // parameters once, on its first row (a study with 25 fixed parameters made ~800-character lines).
  std::map<std::string, std::string> first;
  std::set<std::string> varying;
  for (const auto& cell : out) {
    for (const auto& [k, v] : cell["parameters"].items()) {
      const auto [it, added] = first.emplace(k, api::json_text(v));
      if (!added && it->second != api::json_text(v)) varying.insert(k);
    }
  }
  for (const auto& cell : out) {
    for (const auto& [k, v] : cell["parameters"].items()) {
      (void)v;
      bool everywhere = true;
      for (const auto& other : out) everywhere = everywhere && other["parameters"].contains(k);
      if (!everywhere) varying.insert(k);
    }
  }
  std::string fixed;
  for (const auto& [k, v] : first) {
    if (!varying.count(k)) fixed += (fixed.empty() ? "" : " ") + k + "=" + v;
  }
  if (!fixed.empty()) std::cout << "fixed in every cell: " << fixed << "\n";
  std::cout << fmt::format("{:>5}  {:<30} {:<16} {:>12} {:>10} {:>10} {:>12} {:>12} {:>12} {:>8}\n", "cell",
                           "parameters", "metric", "mean", "mcse", "sd", "q250", "q500", "q750", "n_ok");
  for (const auto& cell : out) {
    std::string params;
    for (const auto& [k, v] : cell["parameters"].items()) {
      if (varying.count(k)) params += (params.empty() ? "" : " ") + k + "=" + api::json_text(v);
    }
    bool first_row = true;
    std::size_t hidden = 0;
    for (const auto& [name, s] : cell["metrics"].items()) {
      // A metric that is NaN in every replicate of this cell (e.g. an analysis the cell does not
      // run) is left out of the table and counted; the JSON format keeps it.
      if (s["n_ok"].get<std::int64_t>() == 0 && cell["n_done"].get<std::int64_t>() > 0) {
        ++hidden;
        continue;
      }
      // a vector component by the experiment's label (e.g. quantiles[p=0.25]) where it gave one
      std::string shown = name;
      if (s.contains("component_label")) {
        shown = name.substr(0, name.find('[')) + "[" + s["component_label"].get<std::string>() + "]";
      }
      auto g = [&](const char* key) { return s[key].is_null() ? std::string("nan") : num(s[key].get<double>()); };
      std::cout << fmt::format("{:>5}  {:<30} {:<16} {:>12} {:>10} {:>10} {:>12} {:>12} {:>12} {:>8}\n",
                               first_row ? std::to_string(cell["cell"].get<std::size_t>()) : std::string(),
                               first_row ? params : std::string(), shown, g("mean"), g("mcse"), g("sd"), g("q250"),
                               g("q500"), g("q750"), s["n_ok"].get<std::int64_t>());
      first_row = false;
    }
    if (hidden > 0) {
      std::cout << fmt::format(
          "{:>5}  ({} metric value(s) NaN in every replicate of this cell not shown; "
          "--format json lists them)\n",
          first_row ? std::to_string(cell["cell"].get<std::size_t>()) : std::string(), hidden);
    }
  }
}

int compare(const std::string& a, const std::string& b, double z, bool allow_incomplete) {
  if (!(z > 0)) throw std::invalid_argument("--z must be > 0");
  const auto ra = read(a);
  const auto rb = read(b);
  set_activity("comparing " + a + " and " + b);
  if (const std::string why = runtime::comparison_obstacle(ra, a, rb, b, allow_incomplete); !why.empty()) {
    throw std::invalid_argument("compare: cannot compare " + a + " and " + b + ": " + why);
  }
  if (const std::string why =
          runtime::data_files_difference(ra.info.data_files, rb.info.data_files, "in " + a, "in " + b);
      !why.empty()) {
    std::cout << "note: the files were computed from different data: " << why << "\n";
  }
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

void errors(const std::string& path, const std::string& format, std::size_t limit) {
  const runtime::StudyResults r = read(path);
  set_activity("listing the errors of " + path);
  std::map<std::string, std::size_t> by_message;  // "stage: message" -> replicates
  for (const auto& e : r.errors) ++by_message[e.stage + ": " + e.message];
  std::int64_t done = 0;
  for (std::size_t c = 0; c < r.cells.size(); ++c) done += r.n_done(c);
  if (format == "json") {
    nlohmann::ordered_json list = nlohmann::ordered_json::array();
    for (const auto& e : r.errors) {
      list.push_back({{"cell", e.cell},
                      {"cell_key", runtime::hex_key(r.cells[e.cell].cell_id())},
                      {"key", r.cells[e.cell].key()},
                      {"replicate", e.replicate},
                      {"stage", e.stage},
                      {"message", e.message}});
    }
    nlohmann::ordered_json cells = nlohmann::ordered_json::array();
    for (std::size_t c = 0; c < r.cells.size(); ++c) {
      if (r.n_failed(c) == 0) continue;
      cells.push_back({{"cell", c},
                       {"key", r.cells[c].key()},
                       {"n_done", r.n_done(c)},
                       {"n_failed", r.n_failed(c)},
                       {"failed", r.cell_failed(c)}});
    }
    nlohmann::ordered_json j = {
        {"file", path},   {"complete", r.info.complete}, {"replicates_done", done}, {"errors", r.errors.size()},
        {"cells", cells}, {"error_list", list}};
    std::cout << api::json_text(j, 1) << "\n";
    return;
  }
  std::cout << fmt::format(
      "{}: {} failed replicate record(s) in {} of {} cells ({} replicates done{})\n", path, r.errors.size(),
      std::count_if(
          r.cells.begin(), r.cells.end(),
          [&](const runtime::Cell& cell) { return r.n_failed(static_cast<std::size_t>(&cell - r.cells.data())) > 0; }),
      r.cells.size(), done, r.info.complete ? "" : "; the file is incomplete");
  if (r.errors.empty()) return;
  std::cout << "\nper cell:\n";
  for (std::size_t c = 0; c < r.cells.size(); ++c) {
    if (r.n_failed(c) == 0) continue;
    std::cout << fmt::format("  cell {:>4}  {} of {} replicates failed{}  {}\n", c, r.n_failed(c), r.n_done(c),
                             r.cell_failed(c) ? " (above max_failure_fraction: failed cell)" : "",
                             printable(r.cells[c].key()));
  }
  std::cout << "\nper message:\n";
  for (const auto& [message, n] : by_message) std::cout << fmt::format("  {:>8} x  {}\n", n, printable(message));
  std::cout << fmt::format("\n{:>5}  {:>9}  {:<9}  {}\n", "cell", "replicate", "stage", "message");
  std::size_t shown = 0;
  for (const auto& e : r.errors) {
    if (limit > 0 && shown == limit) {
      std::cout << fmt::format("... and {} more (--limit 0 lists all, --format json gives every field)\n",
                               r.errors.size() - shown);
      break;
    }
    std::cout << fmt::format("{:>5}  {:>9}  {:<9}  {}\n", e.cell, e.replicate, e.stage, printable(e.message));
    ++shown;
  }
}

/// `dpmu export`: the tidy table of tidy.hpp as CSV, on stdout or (written whole, then renamed
/// into place) to `out`.
void export_table(const std::string& path, const std::string& format, bool replicates, const std::string& metric,
                  const std::string& out) {
  if (format != "csv") throw std::invalid_argument("export: unknown --format '" + format + "' (known: csv)");
  set_activity("exporting " + path);
  const runtime::TidyTable table = replicates ? runtime::tidy_replicates(path, metric) : runtime::tidy_summaries(path);
  if (out.empty() || out == "-") {
    runtime::write_csv(table, std::cout);
    std::cout.flush();
    if (!std::cout) throw std::runtime_error("export: cannot write to stdout");
    return;
  }
  // A killed earlier export left "<out>.tmp-PID": removed now that its process is gone (it is
  // never the output: the table is renamed into place only when complete).
  for (const auto& f : runtime::remove_stale_temporary_files(out)) {
    std::cerr << "dpmu export: note: removed " << f << ", left by a killed export\n";
  }
  const std::string tmp = out + fmt::format(".tmp-{}", ::getpid());
  {
    std::ofstream file(tmp, std::ios::binary | std::ios::trunc);
    if (!file) throw std::runtime_error(fmt::format("export: cannot create {}: {}", tmp, std::strerror(errno)));
    runtime::write_csv(table, file);
    file.close();
    if (!file) {
      std::filesystem::remove(tmp);
      throw std::runtime_error(fmt::format("export: cannot write {} (disk full?)", out));
    }
  }
  std::error_code ec;
  std::filesystem::rename(tmp, out, ec);
  if (ec) {
    std::filesystem::remove(tmp);
    throw std::runtime_error(fmt::format("export: cannot move the table into place at {}: {}", out, ec.message()));
  }
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
      set_activity("merging " + std::to_string(paths.size()) + " shard files into " + *out);
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
    auto file = std::make_shared<std::string>();
    auto format = std::make_shared<std::string>("csv");
    auto replicates = std::make_shared<bool>(false);
    auto metric = std::make_shared<std::string>();
    auto out = std::make_shared<std::string>();
    auto force = std::make_shared<bool>(false);
    auto* cmd = app.add_subcommand(
        "export",
        "Write a results file as a tidy table: one row per cell, metric and component with the summaries, or "
        "(--replicates) one row per done replicate (docs/results-schema.md, \"Tidy tables\")");
    cmd->add_option("file", *file, "results file (.h5)")->required()->check(CLI::ExistingFile);
    cmd->add_option("--format", *format, "csv (default; RFC 4180, header row, NA for missing and NaN)");
    auto* reps = cmd->add_flag("--replicates", *replicates, "one row per cell, done replicate and component");
    cmd->add_option("--metric", *metric, "with --replicates: only this metric")->needs(reps);
    cmd->add_option("--out", *out, "output file (default: stdout)");
    cmd->add_flag("--force", *force, "replace --out if it exists");
    cmd->callback([file, format, replicates, metric, out, force] {
      if (!out->empty() && *out != "-") check_new_output_file("--out", *out, {*file}, *force);
      export_table(*file, *format, *replicates, *metric, *out);
    });
  }
  {
    auto a = std::make_shared<std::string>();
    auto b = std::make_shared<std::string>();
    auto z = std::make_shared<double>(4.0);
    auto allow_incomplete = std::make_shared<bool>(false);
    auto* cmd = app.add_subcommand(
        "compare",
        "Flag cell/metric means that differ by more than z combined Monte Carlo standard errors (exit 1 if any; "
        "exit 2 if the files cannot be compared)");
    cmd->add_option("a", *a, "first results file")->required()->check(CLI::ExistingFile);
    cmd->add_option("b", *b, "second results file")->required()->check(CLI::ExistingFile);
    cmd->add_option("--z", *z, "z-score threshold (default 4)");
    cmd->add_flag("--allow-incomplete", *allow_incomplete,
                  "compare an incomplete file (a stopped run) on its finished replicates");
    cmd->callback([a, b, z, allow_incomplete] {
      const int code = compare(*a, *b, *z, *allow_incomplete);
      if (code != 0) throw CLI::RuntimeError(code);
    });
  }
  {
    auto file = std::make_shared<std::string>();
    auto format = std::make_shared<std::string>("table");
    auto limit = std::make_shared<std::size_t>(50);
    auto* cmd = app.add_subcommand("errors", "Print the failed replicates recorded in a results file (/errors)");
    cmd->add_option("file", *file, "results file (.h5)")->required()->check(CLI::ExistingFile);
    cmd->add_option("--format", *format, "table (default) or json")->check(CLI::IsMember({"json", "table"}));
    cmd->add_option("--limit", *limit, "table: list at most N errors (default 50; 0: all)")->check(unsigned_integer());
    cmd->callback([file, format, limit] { errors(*file, *format, *limit); });
  }
}

}  // namespace dpmu::cli
