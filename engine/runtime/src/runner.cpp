#include "dpmu/runtime/runner.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/file.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <tbb/blocked_range.h>
#include <tbb/global_control.h>
#include <tbb/parallel_for.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstring>
#include <ctime>
#include <fstream>
#include <limits>
#include <map>
#include <mutex>
#include <set>
#include <sstream>
#include <stdexcept>
#include <thread>

#include "dpmu/runtime/ledger.hpp"
#include "dpmu/runtime/memory.hpp"
#include "dpmu/runtime/progress.hpp"
#include "dpmu/runtime/streams.hpp"
#include "dpmu/runtime/work_estimate.hpp"

namespace dpmu::runtime {

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
// Version 2: one record per task (a data group's cells for one replicate block).
constexpr char kJournalMagic[8] = {'D', 'P', 'M', 'U', 'J', 'N', 'L', '2'};

double process_cpu_seconds() {
  rusage u{};
  ::getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
         1e-6 * static_cast<double>(u.ru_utime.tv_usec + u.ru_stime.tv_usec);
}

std::string utc_now() {
  std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

// ---- binary journal -----------------------------------------------------------------------

class ByteWriter {
 public:
  template <class T>
  void put(const T& v) {
    const auto* p = reinterpret_cast<const char*>(&v);
    bytes.insert(bytes.end(), p, p + sizeof(T));
  }
  void put_string(const std::string& s) {
    put<std::uint64_t>(s.size());
    bytes.insert(bytes.end(), s.begin(), s.end());
  }
  void put_doubles(const double* d, std::size_t n) {
    const auto* p = reinterpret_cast<const char*>(d);
    bytes.insert(bytes.end(), p, p + n * sizeof(double));
  }
  std::string bytes;
};

class ByteReader {
 public:
  ByteReader(const char* data, std::size_t size) : p_(data), end_(data + size) {}
  template <class T>
  T get() {
    need(sizeof(T));
    T v;
    std::memcpy(&v, p_, sizeof(T));
    p_ += sizeof(T);
    return v;
  }
  std::string get_string() {
    const auto n = get<std::uint64_t>();
    need(n);
    std::string s(p_, p_ + n);
    p_ += n;
    return s;
  }
  void get_doubles(double* out, std::size_t n) {
    need(n * sizeof(double));
    std::memcpy(out, p_, n * sizeof(double));
    p_ += n * sizeof(double);
  }
  bool at_end() const { return p_ == end_; }

 private:
  void need(std::size_t n) const {
    if (static_cast<std::size_t>(end_ - p_) < n) throw std::runtime_error("truncated journal record");
  }
  const char* p_;
  const char* end_;
};

struct JournalHeader {
  std::uint64_t fingerprint;
  std::int64_t shard_index;
  std::int64_t shard_count;
};

std::string header_bytes(const JournalHeader& h) {
  ByteWriter w;
  w.bytes.append(kJournalMagic, sizeof kJournalMagic);
  w.put(h.fingerprint);
  w.put(h.shard_index);
  w.put(h.shard_count);
  w.put(core::fnv1a_64(w.bytes));
  return w.bytes;
}

constexpr std::size_t kHeaderSize = 8 + 8 * 4;

void write_all(int fd, const std::string& bytes, const std::filesystem::path& path) {
  std::size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      throw std::runtime_error(
          fmt::format("{}: cannot write the checkpoint journal: {}", path.string(), std::strerror(errno)));
    }
    done += static_cast<std::size_t>(n);
  }
}

constexpr std::uint64_t kTaskRecord = 0;
constexpr std::uint64_t kCalibrationRecord = 1;
constexpr std::uint64_t kDataFilesRecord = 2;  // the data files' fingerprints, right after the header

/// A record: u64 payload length, payload, u64 FNV-1a(payload).
std::string framed(const std::string& payload) {
  ByteWriter rec;
  rec.put<std::uint64_t>(payload.size());
  rec.bytes += payload;
  rec.put<std::uint64_t>(core::fnv1a_64(payload));
  return rec.bytes;
}

/// One cell's block inside a task record.
struct CellBlock {
  std::size_t cell = 0;
  double wall = 0.0;
  std::vector<ErrorRecord> errors;
};

/// A task's record (one record, so a task is in the journal whole or not at all): kind,
/// first replicate, count, number of cells, then per cell: cell, width, values, task time, errors.
std::string task_record(const StudyResults& r, std::size_t first, std::size_t count,
                        const std::vector<CellBlock>& cells) {
  ByteWriter p;
  p.put<std::uint64_t>(kTaskRecord);
  p.put<std::uint64_t>(first);
  p.put<std::uint64_t>(count);
  p.put<std::uint64_t>(cells.size());
  for (const auto& cb : cells) {
    const auto& cr = r.cell_results[cb.cell];
    p.put<std::uint64_t>(cb.cell);
    p.put<std::uint64_t>(cr.width);
    p.put_doubles(cr.values.data() + first * cr.width, count * cr.width);
    p.put<double>(cb.wall);
    p.put<std::uint64_t>(cb.errors.size());
    for (const auto& e : cb.errors) {
      p.put<std::uint64_t>(e.replicate);
      p.put_string(e.stage);
      p.put_string(e.message);
    }
  }
  return framed(p.bytes);
}

/// A cell's calibration outputs: kind, cell, count, then (name, k, k doubles) each.
std::string calibration_record(std::size_t cell, const std::vector<std::pair<std::string, std::vector<double>>>& cal) {
  ByteWriter p;
  p.put<std::uint64_t>(kCalibrationRecord);
  p.put<std::uint64_t>(cell);
  p.put<std::uint64_t>(cal.size());
  for (const auto& [name, v] : cal) {
    p.put_string(name);
    p.put<std::uint64_t>(v.size());
    p.put_doubles(v.data(), v.size());
  }
  return framed(p.bytes);
}

/// The data files' record: kind, count, then (path, sha256) each.
std::string data_files_record(const std::vector<DataFileFingerprint>& files) {
  ByteWriter p;
  p.put<std::uint64_t>(kDataFilesRecord);
  p.put<std::uint64_t>(files.size());
  for (const auto& f : files) {
    p.put_string(f.path);
    p.put_string(f.sha256);
  }
  return framed(p.bytes);
}

/// The data files recorded in a journal (after its header), if it has the record.
std::optional<std::vector<DataFileFingerprint>> journal_data_files(const std::string& data) {
  std::size_t pos = kHeaderSize;
  while (pos + 16 <= data.size()) {
    std::uint64_t len;
    std::memcpy(&len, data.data() + pos, 8);
    if (len > data.size() - pos - 16) break;
    std::uint64_t sum;
    std::memcpy(&sum, data.data() + pos + 8 + len, 8);
    const std::string_view payload(data.data() + pos + 8, len);
    if (core::fnv1a_64(payload) != sum) break;
    try {
      ByteReader rd(payload.data(), payload.size());
      if (rd.get<std::uint64_t>() == kDataFilesRecord) {
        std::vector<DataFileFingerprint> files(rd.get<std::uint64_t>());
        for (auto& f : files) {
          f.path = rd.get_string();
          f.sha256 = rd.get_string();
        }
        return files;
      }
    } catch (const std::exception&) {
      break;
    }
    pos += 16 + len;
  }
  return std::nullopt;
}

/// Recorded blocks of a journal, applied to `r`; returns the byte length of the valid prefix.
std::size_t load_journal(const std::filesystem::path& path, const JournalHeader& expected, StudyResults& r,
                         std::set<std::pair<std::size_t, std::size_t>>& blocks_done) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error(fmt::format("{}: cannot read the checkpoint journal", path.string()));
  std::string data((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (data.size() < kHeaderSize || data.compare(0, kHeaderSize, header_bytes(expected)) != 0) {
    if (data.size() >= kHeaderSize && data.compare(0, sizeof kJournalMagic, kJournalMagic, sizeof kJournalMagic) == 0) {
      const auto recorded = journal_data_files(data);
      const std::string why =
          recorded ? data_files_difference(*recorded, r.info.data_files, "in the checkpoint", "now") : "";
      if (!why.empty()) {
        throw std::invalid_argument(fmt::format(
            "{}: the checkpoint was computed from other data: {}; --resume would mix two data sets. Restore the "
            "file as it was, or delete the checkpoint to start again",
            path.string(), why));
      }
    }
    throw std::invalid_argument(fmt::format(
        "{}: this checkpoint belongs to another study or shard (config, master_seed, replicates, block_size or "
        "--shard differ); run with the original settings, or delete it to start again",
        path.string()));
  }
  std::size_t pos = kHeaderSize;
  const auto R = static_cast<std::size_t>(r.info.replicates);
  while (pos + 16 <= data.size()) {
    std::uint64_t len;
    std::memcpy(&len, data.data() + pos, 8);
    if (len > data.size() - pos - 16) break;  // torn record
    std::uint64_t sum;
    std::memcpy(&sum, data.data() + pos + 8 + len, 8);
    const std::string_view payload(data.data() + pos + 8, len);
    if (core::fnv1a_64(payload) != sum) break;  // torn or corrupt record: stop here
    ByteReader rd(payload.data(), payload.size());
    const auto kind = rd.get<std::uint64_t>();
    if (kind == kDataFilesRecord) {  // checked through the header's fingerprint
      pos += 16 + len;
      continue;
    }
    if (kind == kCalibrationRecord) {
      const auto cell = rd.get<std::uint64_t>();
      if (cell >= r.cells.size())
        throw std::runtime_error(fmt::format("{}: inconsistent calibration record", path.string()));
      const auto n = rd.get<std::uint64_t>();
      std::vector<std::pair<std::string, std::vector<double>>> cal;
      for (std::uint64_t i = 0; i < n; ++i) {
        std::string name = rd.get_string();
        std::vector<double> v(rd.get<std::uint64_t>());
        rd.get_doubles(v.data(), v.size());
        cal.emplace_back(std::move(name), std::move(v));
      }
      r.calibration[cell] = std::move(cal);
      pos += 16 + len;
      continue;
    }
    if (kind != kTaskRecord)
      throw std::runtime_error(fmt::format("{}: unknown checkpoint record kind {}", path.string(), kind));
    const auto first = rd.get<std::uint64_t>();
    const auto count = rd.get<std::uint64_t>();
    const auto n_cells = rd.get<std::uint64_t>();
    for (std::uint64_t k = 0; k < n_cells; ++k) {
      const auto cell = rd.get<std::uint64_t>();
      const auto width = rd.get<std::uint64_t>();
      if (cell >= r.cells.size() || first + count > R || width != r.cell_results[cell].width) {
        throw std::runtime_error(fmt::format("{}: inconsistent checkpoint record (cell {}, replicates {}+{})",
                                             path.string(), cell, first, count));
      }
      auto& cr = r.cell_results[cell];
      rd.get_doubles(cr.values.data() + first * width, count * width);
      cr.wall_seconds += rd.get<double>();
      const auto n_err = rd.get<std::uint64_t>();
      for (std::uint64_t i = 0; i < n_err; ++i) {
        ErrorRecord e;
        e.cell = cell;
        e.replicate = rd.get<std::uint64_t>();
        e.stage = rd.get_string();
        e.message = rd.get_string();
        r.errors.push_back(std::move(e));
      }
      std::fill_n(cr.done.begin() + first, count, std::uint8_t{1});
      blocks_done.emplace(cell, first / static_cast<std::size_t>(r.info.block_size));
    }
    pos += 16 + len;
  }
  return pos;
}

void sort_errors(std::vector<ErrorRecord>& errors) {
  std::stable_sort(errors.begin(), errors.end(), [](const ErrorRecord& a, const ErrorRecord& b) {
    return std::tie(a.cell, a.replicate) < std::tie(b.cell, b.replicate);
  });
}

/// Per-cell state of a run: the prepared set-up, computed once (lazily) and dropped when the last
/// task of the cell's group in this process is done.
struct CellState {
  std::once_flag once;
  std::shared_ptr<const void> prepared;
  std::string prepare_error;
};

}  // namespace

void check_results_fit_in_memory(const StudySpec& study) {
  double values = 0;
  for (const auto& m : study.cell_metrics)
    for (const auto& spec : *m) values += static_cast<double>(spec.size) * static_cast<double>(study.replicates);
  check_fits_in_memory(8.0 * values,
                       fmt::format("storing the results ({} cells x {} replicates, {:.3g} values)", study.cells.size(),
                                   study.replicates, values),
                       "use fewer replicates or cells per file (3x while writing and "
                       "verifying the file)",
                       3.0);
}

namespace {

/// The output folder must exist and be writable: say so before any work, with the reason.
void check_output_folder(const std::filesystem::path& out) {
  namespace fs = std::filesystem;
  const fs::path dir = out.has_parent_path() ? out.parent_path() : fs::path(".");
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) {
    throw std::invalid_argument(
        fmt::format("{}: the output folder {} does not exist (create it first)", out.string(), dir.string()));
  }
  if (::access(dir.c_str(), W_OK) != 0) {
    throw std::invalid_argument(
        fmt::format("{}: cannot write in the output folder {}: {}", out.string(), dir.string(), std::strerror(errno)));
  }
}

/// Without --resume: refuse an existing checkpoint or results file.
void refuse_existing_output(const std::filesystem::path& out, const std::filesystem::path& jpath) {
  namespace fs = std::filesystem;
  if (fs::exists(jpath)) {
    throw std::invalid_argument(
        fmt::format("{}: a checkpoint of an unfinished run exists; pass --resume to continue it, "
                    "or delete it to start again",
                    jpath.string()));
  }
  if (fs::exists(out)) {
    throw std::invalid_argument(
        fmt::format("{}: the file exists; choose another --out or delete it (--resume continues "
                    "an unfinished run)",
                    out.string()));
  }
}

/// --resume without a checkpoint: accept `out` if it is this study's shard, complete (and say so
/// in the report); refuse anything else.
RunReport accept_complete_file(const StudyResults& r, const RunOptions& opt, const ShardPlan& plan,
                               const std::filesystem::path& jpath) {
  const StudyResults old = read_results(opt.out);
  if (!old.info.data_files.empty() && old.info.shard_index == opt.shard.index &&
      old.info.shard_count == opt.shard.count) {
    const std::string why = data_files_difference(old.info.data_files, r.info.data_files, "in the file", "now");
    if (!why.empty()) {
      throw std::invalid_argument(
          fmt::format("{}: the file was computed from other data: {}; it cannot be resumed "
                      "with this config (restore the data file, or run into a new file)",
                      opt.out.string(), why));
    }
  }
  if (old.info.fingerprint != r.info.fingerprint || old.info.shard_index != opt.shard.index ||
      old.info.shard_count != opt.shard.count) {
    throw std::invalid_argument(fmt::format(
        "{}: the file holds another study or shard; it cannot be resumed with this config", opt.out.string()));
  }
  if (!old.info.complete) {
    throw std::invalid_argument(
        fmt::format("{}: the file is incomplete but its checkpoint {} is missing; run again without "
                    "--resume into a new file",
                    opt.out.string(), jpath.string()));
  }
  RunReport report;
  report.cells = r.cells.size();
  report.complete = true;
  report.already_complete = true;
  report.tasks_total = report.tasks_resumed = plan.tasks().size();
  return report;
}

/// Open the checkpoint for appending: a new one (header and data-file record written via a
/// temporary file and a rename) or an old one truncated to its valid prefix. Returns the fd.
int open_journal(const std::filesystem::path& jpath, const JournalHeader& header,
                 const std::vector<DataFileFingerprint>& files, std::size_t valid_end) {
  namespace fs = std::filesystem;
  if (valid_end == 0) {
    const fs::path tmp = jpath.string() + ".tmp";
    {
      std::ofstream o(tmp, std::ios::binary | std::ios::trunc);
      o << header_bytes(header) << data_files_record(files);
      o.flush();
      if (!o) {
        throw std::runtime_error(
            fmt::format("{}: cannot create the checkpoint journal: {}", tmp.string(), std::strerror(errno)));
      }
    }
    fs::rename(tmp, jpath);
  } else {
    fs::resize_file(jpath, valid_end);
  }
  const int fd = ::open(jpath.c_str(), O_WRONLY | O_APPEND | O_CLOEXEC);
  if (fd < 0)
    throw std::runtime_error(
        fmt::format("{}: cannot open the checkpoint journal: {}", jpath.string(), std::strerror(errno)));
  return fd;
}

/// The data must not have changed under the run (cells prepared after a change would use other data).
void check_data_files_unchanged(const StudySpec& study, const std::filesystem::path& out,
                                const std::filesystem::path& jpath) {
  for (const auto& f : study.data_files) {
    std::string now;
    try {
      now = sha256_file(f.resolved);
    } catch (const std::exception& e) {
      now = std::string("unreadable: ") + e.what();
    }
    if (now != f.sha256) {
      throw std::runtime_error(fmt::format(
          "data file {} ({}) changed while the study ran (SHA-256 {}... at the start, {} now): cells prepared after "
          "the change used other data, so {} was not written. Restore the file and resume, or delete the checkpoint "
          "{} and run again",
          f.path, f.resolved, f.sha256.substr(0, 12), now.size() == 64 ? now.substr(0, 12) + "..." : now, out.string(),
          jpath.string()));
    }
  }
}

/// The parallel part of a run: the pending tasks, each (data group, block), on oneTBB.
/// The ETA's cost model of the pending tasks: a task (data group × block) costs, per replicate,
/// the experiment's generate_cost of the data cell plus the analyse_cost of each cell of the
/// group (unknown costs count 0); if the experiment gives no cost at all, every cell replicate
/// costs 1 (the ETA of the replicate rate).
WorkEstimate predicted_work(const StudySpec& study, const std::vector<ShardPlan::Task>& pending) {
  const auto& exp = *study.experiment;
  std::vector<double> group_cost(study.data_groups.size(), -1.0);
  bool any_known = false;
  auto known = [](double c) { return std::isfinite(c) && c >= 0.0; };
  for (std::size_t g = 0; g < study.data_groups.size(); ++g) {
    const auto& group = study.data_groups[g];
    double gen = std::numeric_limits<double>::quiet_NaN();
    if (exp.has_data_step()) {
      const std::vector<Cell> data_cells = distinct_data_cells(study, group).first;
      gen = exp.generation_key(data_cells.front()).empty() ? std::numeric_limits<double>::quiet_NaN()
                                                           : exp.generate_shared_cost(data_cells);
      if (!known(gen)) {  // one data cell (no generation key), or the sum of the shared ones' costs
        double sum = 0.0;
        for (const Cell& d : data_cells) {
          const double c = exp.generate_cost(d);
          if (!known(c)) {
            sum = std::numeric_limits<double>::quiet_NaN();
            break;
          }
          sum += c;
        }
        gen = sum;
      }
    }
    double cost = known(gen) ? gen : 0.0;
    any_known = any_known || known(gen);
    for (std::size_t c : group) {
      const double a = exp.analyse_cost(study.cells[c]);
      any_known = any_known || known(a);
      cost += known(a) ? a : 0.0;
    }
    group_cost[g] = cost;
  }
  const auto R = static_cast<std::size_t>(study.replicates);
  const auto B = static_cast<std::size_t>(study.block_size);
  std::vector<double> costs;
  std::vector<std::uint64_t> replicates;
  costs.reserve(pending.size());
  replicates.reserve(pending.size());
  for (const auto& t : pending) {
    const auto& group = study.data_groups[t.group];
    costs.push_back(any_known ? group_cost[t.group] : static_cast<double>(group.size()));
    replicates.push_back(std::min(R, (t.block + 1) * B) - t.block * B);
  }
  return WorkEstimate(costs, replicates);
}

class TaskRunner {
 public:
  using Clock = std::chrono::steady_clock;

  TaskRunner(const StudySpec& study, const RunOptions& opt, StudyResults& r, int journal_fd,
             std::filesystem::path jpath, std::optional<Clock::time_point> deadline)
      : study_(study),
        opt_(opt),
        r_(r),
        fd_(journal_fd),
        jpath_(std::move(jpath)),
        deadline_(deadline),
        states_(study.cells.size()),
        remaining_(study.data_groups.size()) {}

  /// Count a pending task (before run()).
  void add_pending(const ShardPlan::Task& t) {
    pending_.push_back(t);
    remaining_[t.group].fetch_add(1, std::memory_order_relaxed);
  }
  const std::vector<ShardPlan::Task>& pending() const { return pending_; }
  /// True if no task of `group` is pending.
  bool group_done(std::size_t group) const { return remaining_[group].load() == 0; }

  /// Run every pending task (or stop early on --max-time or a signal).
  void run(Progress& progress) {
    std::optional<tbb::global_control> limit;
    if (opt_.threads > 0)
      limit.emplace(tbb::global_control::max_allowed_parallelism, static_cast<std::size_t>(opt_.threads));
    tbb::parallel_for(tbb::blocked_range<std::size_t>(0, pending_.size(), 1),
                      [&](const tbb::blocked_range<std::size_t>& range) {
                        for (std::size_t i = range.begin(); i != range.end(); ++i) {
                          if (should_stop()) return;
                          run_task(i, progress);
                        }
                      });
  }

  /// Record finished work in `work` (the ETA's cost model; may be null), task by pending index.
  void set_work_estimate(WorkEstimate* work) { work_ = work; }

  bool stopped() const { return stop_.load(); }
  std::size_t tasks_run() const { return tasks_run_.load(); }
  std::uint64_t replicates_run() const { return reps_run_.load(); }
  /// CPU time the threads spent in the cells' prepare() (set-up and calibration), seconds.
  double prepare_cpu_seconds() {
    std::lock_guard<std::mutex> lock(setup_mutex_);
    return prepare_cpu_seconds_;
  }

 private:
  bool should_stop() {
    if (stop_.load(std::memory_order_relaxed)) return true;
    if ((opt_.stop_flag && opt_.stop_flag->load(std::memory_order_relaxed)) ||
        (deadline_ && Clock::now() >= *deadline_)) {
      stop_.store(true);
      return true;
    }
    return false;
  }

  /// The run's share of wall-clock time spent in prepare(): ∫ (threads preparing / threads) dt,
  /// for the ETA (WorkEstimate::add_setup_seconds). The other threads' work meanwhile counts.
  /// `prepare_cpu`: the thread CPU time of a prepare() that ends (RunReport::prepare_cpu_seconds).
  void setup_changes(int delta, double prepare_cpu = 0.0) {
    std::lock_guard<std::mutex> lock(setup_mutex_);
    prepare_cpu_seconds_ += prepare_cpu;
    const auto now = Clock::now();
    if (preparing_ > 0 && work_) {
      const double threads = opt_.threads > 0 ? opt_.threads : std::max(1U, std::thread::hardware_concurrency());
      work_->add_setup_seconds(std::chrono::duration<double>(now - setup_last_).count() *
                               std::min(1.0, preparing_ / threads));
    }
    preparing_ += delta;
    setup_last_ = now;
  }
  void setup_begins() { setup_changes(+1); }
  void setup_ends(double cpu_seconds) { setup_changes(-1, cpu_seconds); }

  /// prepare() of cell c, once per process; its calibration outputs go to the journal.
  void prepare_once(std::size_t c) {
    auto& st = states_[c];
    std::call_once(st.once, [&] {
      setup_begins();
      struct SetupEnds {
        TaskRunner* runner;
        double cpu_start = thread_cpu_seconds();
        ~SetupEnds() { runner->setup_ends(thread_cpu_seconds() - cpu_start); }
      } setup_ends_guard{this};
      try {
        const Cell& cell = study_.cells[c];
        core::RngStream calibration = calibration_stream(study_.master_seed, cell);
        st.prepared = study_.experiment->prepare_erased(cell, calibration, shared_);
        auto cal = study_.experiment->calibration_outputs_erased(cell, st.prepared.get());
        if (!cal.empty()) {
          const std::string record = calibration_record(c, cal);
          std::lock_guard<std::mutex> lock(journal_mutex_);
          write_all(fd_, record, jpath_);
          r_.calibration[c] = std::move(cal);
        }
      } catch (const std::bad_alloc&) {
        throw;  // out of memory is not a property of the cell: end the run, keep the journal
      } catch (const std::exception& e) {
        st.prepare_error = e.what();
      } catch (...) {
        st.prepare_error = "unknown exception";
      }
    });
  }

  void run_task(std::size_t pending_index, Progress& progress) {
    const ShardPlan::Task& task = pending_[pending_index];
    const auto& group = study_.data_groups[task.group];
    const auto R = static_cast<std::size_t>(study_.replicates);
    const auto B = static_cast<std::size_t>(study_.block_size);
    const std::size_t first = task.block * B, last = std::min(R, first + B);
    const auto task_start = Clock::now();
    // Prepare the group's cells starting at a point that differs between tasks (the golden-ratio
    // sequence over the pending index), so that the first tasks of a large group prepare disjoint
    // cells concurrently instead of waiting in turn on the same call_once.
    const std::size_t start = static_cast<std::size_t>(
        std::fmod(static_cast<double>(pending_index) * 0.6180339887498949, 1.0) * static_cast<double>(group.size()));
    for (std::size_t i = 0; i < group.size(); ++i) prepare_once(group[(start + i) % group.size()]);
    std::vector<std::shared_ptr<const void>> prepared;  // held for the task: a cell may be released meanwhile
    for (std::size_t c : group) prepared.push_back(states_[c].prepared);
    const auto [data_cells, data_index] = distinct_data_cells(study_, group);
    std::vector<CellBlock> blocks(group.size());
    std::vector<CellReplicate> reps(group.size());
    for (std::size_t k = 0; k < group.size(); ++k) {
      const std::size_t c = group[k];
      blocks[k].cell = c;
      reps[k].cell = &study_.cells[c];
      reps[k].data_index = data_index[k];
      reps[k].prepared = prepared[k].get();
      reps[k].prepare_error = states_[c].prepare_error;
      reps[k].metrics = *study_.cell_metrics[c];
    }
    for (std::size_t rep = first; rep < last; ++rep) {
      if (rep > first && should_stop()) {  // abandon the task: nothing of it is kept
        for (std::size_t c : group) {
          auto& cr = r_.cell_results[c];
          std::fill(cr.values.begin() + static_cast<std::ptrdiff_t>(first * cr.width),
                    cr.values.begin() + static_cast<std::ptrdiff_t>(last * cr.width), kNaN);
        }
        return;
      }
      for (std::size_t k = 0; k < group.size(); ++k) {
        auto& cr = r_.cell_results[group[k]];
        reps[k].out = std::span<double>(cr.values.data() + rep * cr.width, cr.width);
      }
      run_one_replicate(*study_.experiment, data_cells, study_.master_seed, rep, reps);
      for (std::size_t k = 0; k < group.size(); ++k) {
        blocks[k].wall += reps[k].seconds;
        if (!reps[k].failure_stage.empty()) {
          blocks[k].errors.push_back({group[k], rep, reps[k].failure_stage, reps[k].failure_message});
        }
      }
    }
    // Cells of a group share the task's overhead (prepare, data cell) in proportion to nothing in
    // particular: give each an equal share of what the replicates did not account for.
    double accounted = 0;
    for (const auto& b : blocks) accounted += b.wall;
    const double wall = std::chrono::duration<double>(Clock::now() - task_start).count();
    const double overhead = std::max(0.0, wall - accounted) / static_cast<double>(group.size());
    for (auto& b : blocks) b.wall += overhead;
    const std::string record = task_record(r_, first, last - first, blocks);
    {
      std::lock_guard<std::mutex> lock(journal_mutex_);
      write_all(fd_, record, jpath_);
      for (const auto& b : blocks) {
        r_.cell_results[b.cell].wall_seconds += b.wall;
        r_.errors.insert(r_.errors.end(), b.errors.begin(), b.errors.end());
      }
    }
    for (std::size_t c : group) {
      auto& done = r_.cell_results[c].done;
      std::fill(done.begin() + static_cast<std::ptrdiff_t>(first), done.begin() + static_cast<std::ptrdiff_t>(last),
                std::uint8_t{1});
    }
    tasks_run_.fetch_add(1);
    reps_run_.fetch_add((last - first) * group.size());
    const bool group_finished = remaining_[task.group].fetch_sub(1) == 1;
    if (group_finished) {
      for (std::size_t c : group) states_[c].prepared.reset();  // every task of the group here is finished
    }
    if (work_) work_->add(pending_index, last - first);
    progress.add((last - first) * group.size(), group_finished ? group.size() : 0);
  }

  const StudySpec& study_;
  const RunOptions& opt_;
  StudyResults& r_;
  int fd_;
  std::filesystem::path jpath_;
  std::optional<Clock::time_point> deadline_;
  std::vector<CellState> states_;
  SharedCalibration shared_;                          // calibration shared by cells (one per run and process)
  std::vector<std::atomic<std::int64_t>> remaining_;  // pending tasks per group in this process
  std::vector<ShardPlan::Task> pending_;
  WorkEstimate* work_ = nullptr;
  std::mutex setup_mutex_;  // guards preparing_, setup_last_ and prepare_cpu_seconds_
  int preparing_ = 0;       // threads in prepare() now
  Clock::time_point setup_last_;
  double prepare_cpu_seconds_ = 0.0;  // thread CPU time in prepare(), all threads
  std::mutex journal_mutex_;          // guards the journal fd and r_.errors
  std::atomic<bool> stop_{false};
  std::atomic<std::size_t> tasks_run_{0};
  std::atomic<std::uint64_t> reps_run_{0};
};

}  // namespace

double thread_cpu_seconds() {
  timespec ts{};
  ::clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}

std::pair<std::vector<Cell>, std::vector<std::size_t>> distinct_data_cells(const StudySpec& study,
                                                                           const std::vector<std::size_t>& group) {
  std::vector<Cell> data_cells;
  std::vector<std::size_t> index;
  std::map<std::string, std::size_t> seen;
  for (std::size_t c : group) {
    const std::string& key = study.cells[c].data_key();
    auto [it, fresh] = seen.emplace(key, data_cells.size());
    if (fresh) data_cells.push_back(study.cells[c].data_cell());
    index.push_back(it->second);
  }
  return {std::move(data_cells), std::move(index)};
}

ShardPlan::ShardPlan(const StudySpec& study, Shard shard)
    : shard_(shard), groups_(study.data_groups.size()), blocks_(static_cast<std::size_t>(study.blocks_per_cell())) {
  for (std::size_t g = 0; g < groups_; ++g)
    for (std::size_t b = 0; b < blocks_; ++b)
      if (owns(g, b)) tasks_.push_back({g, b});
}

std::uint64_t ShardPlan::tasks_in_shard(std::uint64_t total, Shard shard) {
  const auto index = static_cast<std::uint64_t>(shard.index);
  const auto count = static_cast<std::uint64_t>(shard.count);
  return total > index ? (total - index - 1) / count + 1 : 0;
}

void check_max_time(double seconds) {
  if (!(seconds > 0.0)) throw std::invalid_argument(fmt::format("--max-time must be > 0 seconds (got {:g})", seconds));
  if (!(seconds <= kMaxTimeLimitSeconds)) {
    throw std::invalid_argument(
        fmt::format("--max-time: {:g} s is beyond the limit of 1e9 s (about 31 years); give at most 1e9 seconds, or "
                    "leave --max-time out for no time limit",
                    seconds));
  }
}

std::vector<std::size_t> ShardPlan::cells(const StudySpec& study) const {
  std::set<std::size_t> touched;
  for (const auto& t : tasks_) touched.insert(study.data_groups[t.group].begin(), study.data_groups[t.group].end());
  return {touched.begin(), touched.end()};
}

void run_one_replicate(const Experiment& experiment, std::span<const Cell> data_cells, std::uint64_t master_seed,
                       std::uint64_t replicate, std::span<CellReplicate> cells) {
  if (data_cells.empty()) throw std::invalid_argument("run_one_replicate: no data cell");
  for (const auto& c : cells) {
    if (c.data_index >= data_cells.size()) throw std::invalid_argument("run_one_replicate: data_index out of range");
  }
  using Clock = std::chrono::steady_clock;
  auto fail = [](CellReplicate& c, const char* stage, std::string message) {
    std::fill(c.out.begin(), c.out.end(), kNaN);
    c.failure_stage = stage;
    c.failure_message = std::move(message);
  };
  for (auto& c : cells) {
    std::fill(c.out.begin(), c.out.end(), kNaN);
    c.failure_stage.clear();
    c.failure_message.clear();
    c.seconds = 0.0;
    if (!c.prepare_error.empty()) fail(c, "prepare", c.prepare_error);
  }
  if (std::all_of(cells.begin(), cells.end(), [](const CellReplicate& c) { return !c.failure_stage.empty(); })) {
    return;
  }
  const auto t0 = Clock::now();
  std::vector<std::shared_ptr<const void>> data(data_cells.size());
  std::vector<std::string> generate_error(data_cells.size());  // per data cell; empty: generated
  // Runs `f`, returning its failure message ("" if none); std::bad_alloc is not a failed replicate
  // (it would never be redrawn): it ends the run, keeping the journal.
  const auto guarded = [](auto&& f) -> std::string {
    try {
      f();
      return {};
    } catch (const std::bad_alloc&) {
      throw;
    } catch (const std::exception& e) {
      return e.what();
    } catch (...) {
      return "unknown exception";
    }
  };
  const std::string generation =
      experiment.has_data_step() ? experiment.generation_key(data_cells.front()) : std::string();
  if (!generation.empty()) {
    const auto shared = [&](std::span<const Cell> which) {
      core::RngStream stream = generation_stream(master_seed, generation, replicate);
      return experiment.generate_shared_erased(which, stream);
    };
    const std::string error = guarded([&] { data = shared(data_cells); });
    if (!error.empty()) {
      // A data key's data set does not depend on the others in the call (the contract of
      // generation_key), so generating each alone isolates the failing keys: the others' cells
      // get the data they would have had, as a replay of them does.
      for (std::size_t i = 0; i < data_cells.size(); ++i) {
        generate_error[i] = data_cells.size() == 1
                                ? error
                                : guarded([&] { data[i] = std::move(shared(data_cells.subspan(i, 1)).front()); });
      }
    }
  } else {
    for (std::size_t i = 0; i < data_cells.size(); ++i) {
      generate_error[i] = guarded([&] {
        core::RngStream stream = data_stream(master_seed, data_cells[i], replicate);
        data[i] = experiment.generate_erased(data_cells[i], stream);
      });
    }
  }
  const double share = std::chrono::duration<double>(Clock::now() - t0).count() / static_cast<double>(cells.size());
  for (auto& c : cells) {
    c.seconds = share;
    if (!c.failure_stage.empty()) continue;
    if (!generate_error[c.data_index].empty()) {
      fail(c, "generate", generate_error[c.data_index]);
      continue;
    }
    const auto t1 = Clock::now();
    try {
      core::RngStream noise = noise_stream(master_seed, *c.cell, replicate);
      MetricWriter writer(c.metrics, c.out);
      experiment.analyse_erased(*c.cell, c.prepared, data[c.data_index].get(), noise, writer);
    } catch (const std::bad_alloc&) {
      throw;
    } catch (const std::exception& e) {
      fail(c, "replicate", e.what());
    } catch (...) {
      fail(c, "replicate", "unknown exception");
    }
    c.seconds += std::chrono::duration<double>(Clock::now() - t1).count();
  }
}

Shard parse_shard(const std::string& text) {
  const auto slash = text.find('/');
  Shard s;
  try {
    if (slash == std::string::npos) throw std::invalid_argument("");
    std::size_t a = 0, b = 0;
    s.index = std::stoll(text.substr(0, slash), &a);
    s.count = std::stoll(text.substr(slash + 1), &b);
    if (a != slash || b != text.size() - slash - 1) throw std::invalid_argument("");
  } catch (const std::exception&) {
    throw std::invalid_argument(fmt::format("--shard: '{}' is not of the form i/N (e.g. 0/4)", text));
  }
  if (s.count < 1 || s.index < 0 || s.index >= s.count) {
    throw std::invalid_argument(fmt::format("--shard: '{}' needs N >= 1 and 0 <= i < N", text));
  }
  return s;
}

std::filesystem::path journal_path(const std::filesystem::path& out) { return out.string() + ".journal"; }

std::filesystem::path OutputLock::lock_path(const std::filesystem::path& out) { return out.string() + ".lock"; }

OutputLock::OutputLock(const std::filesystem::path& out) : path_(lock_path(out)) {
  check_output_folder(out);  // "the folder does not exist", not a lock-file error (run and merge)
  for (int attempt = 0; attempt < 20; ++attempt) {
    fd_ = ::open(path_.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (fd_ < 0) {
      throw std::runtime_error(
          fmt::format("{}: cannot create the lock file {}: {}", out.string(), path_.string(), std::strerror(errno)));
    }
    if (::flock(fd_, LOCK_EX | LOCK_NB) != 0) {
      const int err = errno;
      std::string holder;
      for (int i = 0; i < 20 && holder.empty(); ++i) {  // the holder writes its PID right after locking
        char buf[32] = {};
        const ssize_t n = ::pread(fd_, buf, sizeof buf - 1, 0);
        if (n > 0) holder.assign(buf, static_cast<std::size_t>(n));
        while (!holder.empty() && (holder.back() == '\n' || holder.back() == ' ')) holder.pop_back();
        if (holder.empty()) ::usleep(10000);
      }
      ::close(fd_);
      fd_ = -1;
      if (err == EWOULDBLOCK) {
        throw std::invalid_argument(fmt::format(
            "{}: another dpmu process (PID {}) is writing this results file; wait for it to finish or stop it "
            "(two runs on one --out would lose a study)",
            out.string(), holder.empty() ? std::string("unknown") : holder));
      }
      throw std::runtime_error(fmt::format("{}: cannot lock {}: {}", out.string(), path_.string(), std::strerror(err)));
    }
    // The lock counts only if the file is still the one at the path (a finishing holder unlinks it).
    struct stat held {
    }, at_path{};
    if (::fstat(fd_, &held) == 0 && ::stat(path_.c_str(), &at_path) == 0 && held.st_ino == at_path.st_ino &&
        held.st_dev == at_path.st_dev) {
      const std::string pid = std::to_string(::getpid()) + "\n";
      if (::ftruncate(fd_, 0) == 0 && ::pwrite(fd_, pid.data(), pid.size(), 0) == static_cast<ssize_t>(pid.size())) {
        return;
      }
    }
    ::close(fd_);
    fd_ = -1;
  }
  throw std::runtime_error(
      fmt::format("{}: cannot take the lock {} (it keeps changing)", out.string(), path_.string()));
}

OutputLock::~OutputLock() {
  if (fd_ >= 0) {
    ::unlink(path_.c_str());  // while still locked: a process waiting on this inode retries
    ::close(fd_);
  }
}

StudyResults empty_results(const StudySpec& study) {
  StudyResults r;
  auto& in = r.info;
  in.config_yaml = study.config_yaml;
  in.source = study.source;
  in.experiment = study.experiment_name;
  in.description = study.description;
  in.master_seed = study.master_seed;
  in.replicates = study.replicates;
  in.block_size = study.block_size;
  in.max_failure_fraction = study.max_failure_fraction;
  in.fingerprint = study.fingerprint();
  in.data_files = study.data_files;
  r.parameter_names = study.parameter_names;
  r.parameter_types = study.parameter_types;
  r.data_factors = study.data_factors;
  r.cells = study.cells;
  const std::size_t C = study.cells.size();
  for (std::size_t m = 0; m < study.metric_template.size(); ++m) {
    MetricLayout ml;
    ml.name = study.metric_template[m].name;
    ml.description = study.metric_template[m].description;
    ml.max_size = 0;
    for (std::size_t c = 0; c < C; ++c) {
      const auto& spec = (*study.cell_metrics[c])[m];
      ml.sizes.push_back(spec.size);
      ml.component_labels.push_back(spec.component_labels);
      ml.max_size = std::max(ml.max_size, spec.size);
      ml.is_vector = ml.is_vector || spec.is_vector || spec.size != 1;
    }
    r.metrics.push_back(std::move(ml));
  }
  const auto R = static_cast<std::size_t>(study.replicates);
  for (std::size_t c = 0; c < C; ++c) {
    CellResults cr;
    for (const auto& ml : r.metrics) cr.width += ml.sizes[c];
    cr.values.assign(R * cr.width, kNaN);
    cr.done.assign(R, 0);
    r.cell_results.push_back(std::move(cr));
  }
  r.calibration.resize(C);
  return r;
}

RunReport run_study(const StudySpec& study, const RunOptions& opt) {
  namespace fs = std::filesystem;
  using Clock = std::chrono::steady_clock;
  const auto t_start = Clock::now();
  if (opt.max_time_seconds) check_max_time(*opt.max_time_seconds);
  check_results_fit_in_memory(study);
  StudyResults r = empty_results(study);
  r.info.shard_index = opt.shard.index;
  r.info.shard_count = opt.shard.count;
  r.info.dpmu_version = opt.dpmu_version;
  r.info.git_sha = opt.git_sha;
  r.info.started_utc = utc_now();
  const std::size_t C = study.cells.size();
  const auto R = static_cast<std::size_t>(study.replicates);
  const auto B = static_cast<std::size_t>(study.block_size);
  const ShardPlan plan(study, opt.shard);

  const fs::path jpath = journal_path(opt.out);
  const JournalHeader header{r.info.fingerprint, opt.shard.index, opt.shard.count};
  check_output_folder(opt.out);
  // One process at a time on this output (and its checkpoint), for the whole run.
  const OutputLock lock(opt.out);
  RunReport report;
  report.cells = C;
  report.removed_temporary_files = remove_stale_temporary_files(opt.out);
  {
    std::error_code ec;  // a journal being created by a killed run (we hold the lock: nobody else writes it)
    if (fs::remove(jpath.string() + ".tmp", ec)) report.removed_temporary_files.push_back(jpath.string() + ".tmp");
  }
  std::set<std::pair<std::size_t, std::size_t>> blocks_done;  // (cell, block) found in the checkpoint
  std::size_t valid_end = 0;
  if (!opt.resume) {
    refuse_existing_output(opt.out, jpath);
  } else if (fs::exists(jpath)) {
    valid_end = load_journal(jpath, header, r, blocks_done);
  } else if (fs::exists(opt.out)) {
    RunReport done = accept_complete_file(r, opt, plan, jpath);
    done.removed_temporary_files = std::move(report.removed_temporary_files);
    return done;
  }

  const int fd = open_journal(jpath, header, r.info.data_files, valid_end);
  struct FdCloser {
    int fd;
    ~FdCloser() { ::close(fd); }
  } closer{fd};
  const std::optional<Clock::time_point> deadline =
      opt.max_time_seconds
          ? std::optional<Clock::time_point>(t_start + std::chrono::duration_cast<Clock::duration>(
                                                           std::chrono::duration<double>(*opt.max_time_seconds)))
          : std::nullopt;
  TaskRunner runner(study, opt, r, fd, jpath, deadline);

  // This shard's tasks, skipping those in the checkpoint (a task record holds all its cells).
  std::uint64_t reps_pending = 0;
  for (const auto& task : plan.tasks()) {
    ++report.tasks_total;
    const auto& group = study.data_groups[task.group];
    if (std::all_of(group.begin(), group.end(), [&](std::size_t c) { return blocks_done.count({c, task.block}); })) {
      ++report.tasks_resumed;
    } else {
      runner.add_pending(task);
      reps_pending += (std::min(R, (task.block + 1) * B) - task.block * B) * group.size();
    }
  }
  const std::vector<std::size_t> cells_in_shard = plan.cells(study);
  std::size_t cells_already_done = 0;
  for (std::size_t g = 0; g < study.data_groups.size(); ++g) {
    if (!runner.group_done(g)) continue;
    for (std::size_t c : study.data_groups[g])
      cells_already_done += std::binary_search(cells_in_shard.begin(), cells_in_shard.end(), c) ? 1 : 0;
  }

  WorkEstimate work = predicted_work(study, runner.pending());
  runner.set_work_estimate(&work);
  Progress progress(reps_pending, cells_in_shard.size(), cells_already_done, opt.quiet, &work);
  const auto loop_start = Clock::now();
  const double loop_cpu_start = process_cpu_seconds();
  runner.run(progress);
  report.loop_seconds = std::chrono::duration<double>(Clock::now() - loop_start).count();
  report.loop_cpu_seconds = process_cpu_seconds() - loop_cpu_start;
  report.prepare_cpu_seconds = runner.prepare_cpu_seconds();
  progress.finish();
  report.tasks_run = runner.tasks_run();
  report.replicates_run = runner.replicates_run();
  report.stopped = runner.stopped();
  report.complete = report.tasks_resumed + report.tasks_run == report.tasks_total;

  sort_errors(r.errors);
  r.info.complete = report.complete;
  r.info.finished_utc = utc_now();
  for (std::size_t c = 0; c < C; ++c) {
    if (r.cell_failed(c)) report.failed_cells.push_back(c);
  }
  check_data_files_unchanged(study, opt.out, jpath);
  try {
    write_results(opt.out, r);
  } catch (const std::runtime_error& e) {
    throw std::runtime_error(
        fmt::format("{}. The checkpoint {} is intact: make room and continue with --resume", e.what(), jpath.string()));
  }
  if (report.complete) fs::remove(jpath);
  return report;
}

void merge_results(const std::filesystem::path& out, const std::vector<std::filesystem::path>& shards) {
  if (shards.empty()) throw std::invalid_argument("merge: no shard files given");
  const OutputLock lock(out);
  remove_stale_temporary_files(out);
  if (std::filesystem::exists(out))
    throw std::invalid_argument(fmt::format("merge: {} exists; choose another name", out.string()));
  std::vector<StudyResults> parts;
  for (const auto& s : shards) parts.push_back(read_results(s));
  const auto& first = parts.front().info;
  std::map<std::int64_t, std::vector<std::string>> by_index;
  for (std::size_t i = 0; i < parts.size(); ++i) {
    const auto& in = parts[i].info;
    const std::string name = shards[i].string();
    const std::string why =
        data_files_difference(first.data_files, in.data_files, "in " + shards[0].string(), "in " + name);
    if (!why.empty()) {
      throw std::invalid_argument(
          fmt::format("merge: {} and {} were computed from different data: {}; merging "
                      "them would mix two data sets",
                      shards[0].string(), name, why));
    }
    if (in.fingerprint != first.fingerprint || in.config_yaml != first.config_yaml ||
        in.master_seed != first.master_seed) {
      throw std::invalid_argument(
          fmt::format("merge: {} comes from another study than {} (config, master_seed, replicates or "
                      "cells differ)",
                      name, shards[0].string()));
    }
    if (in.shard_count != first.shard_count) {
      throw std::invalid_argument(fmt::format("merge: {} is shard {}/{} but {} is shard {}/{}", name, in.shard_index,
                                              in.shard_count, shards[0].string(), first.shard_index,
                                              first.shard_count));
    }
    if (!in.complete) {
      throw std::invalid_argument(fmt::format("merge: {} (shard {}/{}) is incomplete; finish it with dpmu run --resume",
                                              name, in.shard_index, in.shard_count));
    }
    by_index[in.shard_index].push_back(name);
  }
  for (const auto& [idx, names] : by_index) {
    if (names.size() > 1) {
      std::string list;
      for (const auto& n : names) list += (list.empty() ? "" : ", ") + n;
      throw std::invalid_argument(fmt::format("merge: shard {}/{} is given twice ({})", idx, first.shard_count, list));
    }
  }
  std::string missing;
  for (std::int64_t i = 0; i < first.shard_count; ++i) {
    if (!by_index.count(i)) missing += (missing.empty() ? "" : ", ") + fmt::format("{}/{}", i, first.shard_count);
  }
  if (!missing.empty()) throw std::invalid_argument(fmt::format("merge: missing shard(s) {}", missing));

  StudyResults merged = parts.front();
  const std::size_t C = merged.cells.size();
  const auto R = static_cast<std::size_t>(merged.info.replicates);
  merged.errors.clear();
  merged.calibration.assign(C, {});
  for (std::size_t c = 0; c < C; ++c) {
    auto& cr = merged.cell_results[c];
    std::fill(cr.values.begin(), cr.values.end(), kNaN);
    std::fill(cr.done.begin(), cr.done.end(), std::uint8_t{0});
    cr.wall_seconds = 0.0;
  }
  for (std::size_t s = 0; s < parts.size(); ++s) {
    const auto& p = parts[s];
    for (std::size_t c = 0; c < C; ++c) {
      auto& cr = merged.cell_results[c];
      const auto& pc = p.cell_results[c];
      cr.wall_seconds += pc.wall_seconds;
      for (std::size_t i = 0; i < R; ++i) {
        if (!pc.done[i]) continue;
        if (cr.done[i]) {
          throw std::invalid_argument(
              fmt::format("merge: replicate {} of cell {} is in two shards", i, merged.cells[c].key()));
        }
        cr.done[i] = 1;
        std::copy_n(pc.values.begin() + static_cast<std::ptrdiff_t>(i * pc.width), pc.width,
                    cr.values.begin() + static_cast<std::ptrdiff_t>(i * cr.width));
      }
    }
    for (std::size_t c = 0; c < C; ++c) {
      if (merged.calibration[c].empty() && c < p.calibration.size()) merged.calibration[c] = p.calibration[c];
    }
    merged.errors.insert(merged.errors.end(), p.errors.begin(), p.errors.end());
    merged.info.started_utc = std::min(merged.info.started_utc, p.info.started_utc);
    merged.info.finished_utc = std::max(merged.info.finished_utc, p.info.finished_utc);
  }
  for (std::size_t c = 0; c < C; ++c) {
    if (merged.n_done(c) != merged.info.replicates) {
      throw std::invalid_argument(fmt::format("merge: cell {} has {} of {} replicates in the shards",
                                              merged.cells[c].key(), merged.n_done(c), merged.info.replicates));
    }
  }
  sort_errors(merged.errors);
  merged.info.shard_index = 0;
  merged.info.shard_count = 1;
  merged.info.complete = true;
  write_results(out, merged);
}

std::string comparison_obstacle(const StudyResults& a, const std::string& name_a, const StudyResults& b,
                                const std::string& name_b, bool allow_incomplete) {
  if (a.info.experiment != b.info.experiment) {
    return fmt::format(
        "{} holds experiment '{}' but {} holds experiment '{}': their cells and metrics mean different "
        "things",
        name_a, a.info.experiment, name_b, b.info.experiment);
  }
  for (const auto& [name, r] : {std::pair{&name_a, &a}, std::pair{&name_b, &b}}) {
    if (r->info.shard_count > 1) {
      return fmt::format(
          "{} is shard {}/{} of a study (only its share of the replicates is done): merge the {} shards "
          "with dpmu merge and compare the merged file",
          *name, r->info.shard_index, r->info.shard_count, r->info.shard_count);
    }
  }
  if (!allow_incomplete) {
    for (const auto& [name, r] : {std::pair{&name_a, &a}, std::pair{&name_b, &b}}) {
      if (!r->info.complete) {
        std::int64_t done = 0;
        for (std::size_t c = 0; c < r->cells.size(); ++c) done += r->n_done(c);
        return fmt::format(
            "{} is incomplete (a stopped run: {} of {} replicates done); finish it with dpmu run "
            "--resume, or pass --allow-incomplete to compare the finished replicates",
            *name, done, static_cast<std::int64_t>(r->cells.size()) * r->info.replicates);
      }
    }
  }
  return "";
}

std::vector<Difference> compare_results(const StudyResults& a, const StudyResults& b, double z_threshold) {
  std::vector<Difference> diffs;
  std::map<std::string, std::size_t> b_cells;
  for (std::size_t c = 0; c < b.cells.size(); ++c) b_cells[b.cells[c].key()] = c;
  std::map<std::string, std::size_t> b_metrics;
  for (std::size_t m = 0; m < b.metrics.size(); ++m) b_metrics[b.metrics[m].name] = m;
  std::set<std::string> a_cells;
  for (std::size_t ca = 0; ca < a.cells.size(); ++ca) {
    const std::string& key = a.cells[ca].key();
    a_cells.insert(key);
    auto it = b_cells.find(key);
    if (it == b_cells.end()) {
      diffs.push_back({key, "", kNaN, kNaN, kNaN, kNaN, kNaN, "cell only in the first file"});
      continue;
    }
    const std::size_t cb = it->second;
    for (std::size_t ma = 0; ma < a.metrics.size(); ++ma) {
      const auto& ml = a.metrics[ma];
      auto mit = b_metrics.find(ml.name);
      if (mit == b_metrics.end()) {
        diffs.push_back({key, ml.name, kNaN, kNaN, kNaN, kNaN, kNaN, "metric only in the first file"});
        continue;
      }
      const std::size_t mb = mit->second;
      const std::size_t ka = ml.sizes[ca], kb = b.metrics[mb].sizes[cb];
      if (ka != kb) {
        diffs.push_back({key, ml.name, kNaN, kNaN, kNaN, kNaN, kNaN, fmt::format("sizes differ ({} vs {})", ka, kb)});
        continue;
      }
      for (std::size_t k = 0; k < ka; ++k) {
        const Summary sa = summarize_component(a, ca, ma, k);
        const Summary sb = summarize_component(b, cb, mb, k);
        const std::string name = ml.is_vector ? fmt::format("{}[{}]", ml.name, k) : ml.name;
        if (std::isnan(sa.mean) && std::isnan(sb.mean)) continue;
        if (sa.mean == sb.mean) continue;
        if (std::isnan(sa.mean) || std::isnan(sb.mean)) {
          diffs.push_back({key, name, sa.mean, sb.mean, sa.mcse, sb.mcse, kNaN, "NaN in one file only"});
          continue;
        }
        if (std::isnan(sa.mcse) || std::isnan(sb.mcse)) {
          // fewer than 2 finite replicates on a side: the Monte Carlo error is unknown, not zero
          diffs.push_back({key, name, sa.mean, sb.mean, sa.mcse, sb.mcse, kNaN,
                           "cannot judge: Monte Carlo SE unknown (fewer than 2 replicates in a file)"});
          continue;
        }
        const double se = std::hypot(sa.mcse, sb.mcse);
        const double z = std::abs(sa.mean - sb.mean) / se;  // +inf if se == 0
        if (!(z <= z_threshold)) {
          diffs.push_back({key, name, sa.mean, sb.mean, sa.mcse, sb.mcse, z,
                           se > 0 ? fmt::format("|z| > {}", z_threshold) : "differs with zero Monte Carlo error"});
        }
      }
    }
    for (const auto& mlb : b.metrics) {
      if (std::none_of(a.metrics.begin(), a.metrics.end(), [&](const MetricLayout& x) { return x.name == mlb.name; })) {
        diffs.push_back({key, mlb.name, kNaN, kNaN, kNaN, kNaN, kNaN, "metric only in the second file"});
      }
    }
  }
  for (const auto& cb : b.cells) {
    if (!a_cells.count(cb.key()))
      diffs.push_back({cb.key(), "", kNaN, kNaN, kNaN, kNaN, kNaN, "cell only in the second file"});
  }
  return diffs;
}

}  // namespace dpmu::runtime
