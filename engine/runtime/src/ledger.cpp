#include "dpmu/runtime/ledger.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <openssl/evp.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstring>
#include <ctime>
#include <memory>
#include <system_error>
#include <utility>

namespace dpmu::runtime {

namespace {

constexpr double kRelativeTolerance = 1e-12;

std::string errno_text(int err) { return std::error_code(err, std::generic_category()).message(); }

/// Throw std::runtime_error "[WHAT ]PATH: ACTION: <errno's message>", reading errno before anything can change it.
[[noreturn]] void throw_os_error(const char* what, const std::string& path, const char* action) {
  const int err = errno;
  std::string message = what;
  if (!message.empty()) message += ' ';
  throw std::runtime_error(message + path + ": " + action + ": " + errno_text(err));
}

/// A file descriptor closed on scope exit.
struct Fd {
  int fd = -1;
  explicit Fd(int f) : fd(f) {}
  ~Fd() {
    if (fd >= 0) ::close(fd);
  }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  int release() { return std::exchange(fd, -1); }
};

/// flock(2), retried when a signal interrupts the wait.
int flock_retry(int fd, int op) {
  int rc;
  do {
    rc = ::flock(fd, op);
  } while (rc != 0 && errno == EINTR);
  return rc;
}

/// Every byte of `fd` from offset 0. @throws std::runtime_error naming `path`.
std::string read_all(int fd, const std::string& path, const char* what) {
  std::string out;
  std::array<char, 65536> buf;
  off_t offset = 0;
  for (;;) {
    const ssize_t n = ::pread(fd, buf.data(), buf.size(), offset);
    if (n < 0) {
      if (errno == EINTR) continue;
      throw_os_error(what, path, "cannot read");
    }
    if (n == 0) return out;
    out.append(buf.data(), static_cast<std::size_t>(n));
    offset += n;
  }
}

bool is_fingerprint(const std::string& s) {
  if (s.size() != 64) return false;
  for (const char c : s) {
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  }
  return true;
}

/// The reason an entry is invalid, or empty if it is valid.
std::string entry_problem(const LedgerEntry& e) {
  if (!is_fingerprint(e.data_fingerprint)) {
    return "data_fingerprint '" + e.data_fingerprint + "' is not 64 lowercase hex digits";
  }
  if (!(std::isfinite(e.epsilon) && e.epsilon >= 0.0)) {
    return fmt::format("epsilon is {}, but must be finite and >= 0", e.epsilon);
  }
  if (!(std::isfinite(e.delta) && e.delta >= 0.0)) {
    return fmt::format("delta is {}, but must be finite and >= 0", e.delta);
  }
  return {};
}

/// One line of a ledger as an entry. @throws std::invalid_argument with the reason.
LedgerEntry parse_line(std::string_view line) {
  if (line.empty()) throw std::invalid_argument("empty line");
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(line);
  } catch (const nlohmann::json::exception& e) {  // a parse error, or out_of_range for a number like 1e999
    throw std::invalid_argument(std::string("not valid JSON (") + e.what() + ")");
  }
  if (!j.is_object()) throw std::invalid_argument("not a JSON object");
  const auto field = [&](const char* name) -> const nlohmann::json& {
    const auto it = j.find(name);
    if (it == j.end()) throw std::invalid_argument(std::string("missing field '") + name + "'");
    return *it;
  };
  const auto string_field = [&](const char* name) {
    const auto& v = field(name);
    if (!v.is_string()) throw std::invalid_argument(std::string("field '") + name + "' is not a string");
    return v.get<std::string>();
  };
  const auto number_field = [&](const char* name) {
    const auto& v = field(name);
    if (!v.is_number()) throw std::invalid_argument(std::string("field '") + name + "' is not a number");
    return v.get<double>();
  };
  LedgerEntry e;
  e.time = string_field("time");
  e.command = string_field("command");
  e.data_file = string_field("data_file");
  e.data_fingerprint = string_field("data_fingerprint");
  e.epsilon = number_field("epsilon");
  e.delta = number_field("delta");
  e.released = field("released");
  if (const std::string problem = entry_problem(e); !problem.empty()) throw std::invalid_argument(problem);
  return e;
}

/// Every entry of a ledger's contents. @throws std::runtime_error naming the file and line.
std::vector<LedgerEntry> parse_ledger(const std::string& contents, const std::string& path) {
  std::vector<LedgerEntry> entries;
  std::size_t start = 0;
  std::size_t line_number = 0;
  while (start < contents.size()) {
    ++line_number;
    const std::size_t end = contents.find('\n', start);
    try {
      if (end == std::string::npos) {
        throw std::invalid_argument("the last line has no newline (an interrupted write?)");
      }
      entries.push_back(parse_line(std::string_view(contents).substr(start, end - start)));
    } catch (const std::invalid_argument& e) {
      throw std::runtime_error("ledger " + path + " line " + std::to_string(line_number) + ": " + e.what() +
                               " (the ledger is damaged; fix or restore it, it is never reset)");
    }
    start = end + 1;
  }
  return entries;
}

std::string utc_now() {
  const std::time_t now = std::time(nullptr);
  std::tm tm{};
  ::gmtime_r(&now, &tm);
  std::array<char, 32> buf{};
  const std::size_t n = std::strftime(buf.data(), buf.size(), "%Y-%m-%dT%H:%M:%SZ", &tm);
  return std::string(buf.data(), n);
}

std::optional<double> parse_double(std::string_view s) {
  double v = 0.0;
  const auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (s.empty() || ec != std::errc() || ptr != s.data() + s.size()) return std::nullopt;
  return v;
}

bool exceeds(double total, double limit) { return total > limit + kRelativeTolerance * limit; }

}  // namespace

std::string sha256_file(const std::string& path) {
  Fd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (fd.fd < 0) throw_os_error("", path, "cannot open the file for reading");
  const std::unique_ptr<EVP_MD_CTX, decltype(&EVP_MD_CTX_free)> ctx(EVP_MD_CTX_new(), &EVP_MD_CTX_free);
  if (!ctx || EVP_DigestInit_ex(ctx.get(), EVP_sha256(), nullptr) != 1) {
    throw std::runtime_error("sha256_file: cannot initialise OpenSSL SHA-256");
  }
  std::array<unsigned char, 65536> buf;
  for (;;) {
    const ssize_t n = ::read(fd.fd, buf.data(), buf.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      throw_os_error("", path, "cannot read the file");
    }
    if (n == 0) break;
    if (EVP_DigestUpdate(ctx.get(), buf.data(), static_cast<std::size_t>(n)) != 1) {
      throw std::runtime_error("sha256_file: OpenSSL SHA-256 update failed");
    }
  }
  std::array<unsigned char, EVP_MAX_MD_SIZE> digest{};
  unsigned int size = 0;
  if (EVP_DigestFinal_ex(ctx.get(), digest.data(), &size) != 1) {
    throw std::runtime_error("sha256_file: OpenSSL SHA-256 final failed");
  }
  static const char* hex = "0123456789abcdef";
  std::string out;
  for (unsigned int i = 0; i < size; ++i) {
    out += hex[digest[i] >> 4];
    out += hex[digest[i] & 0xF];
  }
  return out;
}

Budget parse_budget(std::string_view text) {
  const auto bad = [&](const std::string& why) {
    return std::invalid_argument("--budget '" + std::string(text) + "': " + why +
                                 "; expected EPS or EPS,DELTA (e.g. 2 or 2,1e-6) with EPS finite and > 0 and "
                                 "DELTA in [0, 1)");
  };
  const std::size_t comma = text.find(',');
  const std::string_view eps_text = text.substr(0, comma);
  const auto eps = parse_double(eps_text);
  if (!eps) throw bad("epsilon '" + std::string(eps_text) + "' is not a number");
  if (!(std::isfinite(*eps) && *eps > 0.0)) throw bad(fmt::format("epsilon is {}, but must be finite and > 0", *eps));
  Budget b{*eps, 0.0};
  if (comma != std::string_view::npos) {
    const std::string_view delta_text = text.substr(comma + 1);
    const auto delta = parse_double(delta_text);
    if (!delta) throw bad("delta '" + std::string(delta_text) + "' is not a number");
    if (!(*delta >= 0.0 && *delta < 1.0)) throw bad(fmt::format("delta is {}, but must be in [0, 1)", *delta));
    b.delta = *delta;
  }
  return b;
}

std::map<std::string, LedgerTotal> ledger_totals(const std::vector<LedgerEntry>& entries) {
  std::map<std::string, LedgerTotal> totals;
  for (const auto& e : entries) {
    auto& t = totals[e.data_fingerprint];
    t.epsilon += e.epsilon;
    t.delta += e.delta;
    ++t.releases;
    if (std::find(t.data_files.begin(), t.data_files.end(), e.data_file) == t.data_files.end()) {
      t.data_files.push_back(e.data_file);
    }
  }
  return totals;
}

std::vector<LedgerEntry> read_ledger(const std::string& path) {
  Fd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (fd.fd < 0) {
    if (errno == ENOENT) return {};
    throw_os_error("ledger", path, "cannot open");
  }
  if (flock_retry(fd.fd, LOCK_SH) != 0) {
    throw_os_error("ledger", path, "cannot lock");
  }
  return parse_ledger(read_all(fd.fd, path, "ledger"), path);  // closing the descriptor releases the lock
}

LedgerLock::LedgerLock(const std::string& path) : path_(path) {
  Fd fd(::open(path.c_str(), O_RDWR | O_CREAT | O_APPEND | O_CLOEXEC, 0644));
  if (fd.fd < 0) throw_os_error("ledger", path, "cannot open or create");
  if (flock_retry(fd.fd, LOCK_EX) != 0) {
    throw_os_error("ledger", path, "cannot lock");
  }
  entries_ = parse_ledger(read_all(fd.fd, path, "ledger"), path);
  fd_ = fd.release();
}

LedgerLock::~LedgerLock() {
  if (fd_ >= 0) {
    ::flock(fd_, LOCK_UN);
    ::close(fd_);
  }
}

void LedgerLock::check(const std::string& data_fingerprint, const std::string& data_file, double epsilon, double delta,
                       const std::optional<Budget>& budget) const {
  if (!(std::isfinite(epsilon) && epsilon >= 0.0)) {
    throw std::invalid_argument(fmt::format("ledger check: epsilon is {}, but must be finite and >= 0", epsilon));
  }
  if (!(std::isfinite(delta) && delta >= 0.0)) {
    throw std::invalid_argument(fmt::format("ledger check: delta is {}, but must be finite and >= 0", delta));
  }
  if (!budget) return;
  if (!(std::isfinite(budget->epsilon) && budget->epsilon > 0.0)) {
    throw std::invalid_argument(fmt::format("budget epsilon is {}, but must be finite and > 0", budget->epsilon));
  }
  if (!(budget->delta >= 0.0 && budget->delta < 1.0)) {
    throw std::invalid_argument(fmt::format("budget delta is {}, but must be in [0, 1)", budget->delta));
  }
  LedgerTotal spent;
  for (const auto& e : entries_) {
    if (e.data_fingerprint != data_fingerprint) continue;
    spent.epsilon += e.epsilon;
    spent.delta += e.delta;
    ++spent.releases;
  }
  const bool over_epsilon = exceeds(spent.epsilon + epsilon, budget->epsilon);
  const bool over_delta = exceeds(spent.delta + delta, budget->delta);
  if (!over_epsilon && !over_delta) return;
  throw BudgetExceeded(fmt::format(
      "privacy budget exceeded for data file {} (sha256 {}): spent epsilon={}, delta={} in {} release(s) "
      "recorded in ledger {}; this release requests epsilon={}, delta={}; the budget is epsilon={}, delta={} "
      "(basic composition: the {} would be {}); nothing was released",
      data_file, data_fingerprint.substr(0, 12), spent.epsilon, spent.delta, spent.releases, path_, epsilon, delta,
      budget->epsilon, budget->delta, over_epsilon ? "total epsilon" : "total delta",
      over_epsilon ? spent.epsilon + epsilon : spent.delta + delta));
}

void LedgerLock::append(LedgerEntry entry) {
  if (entry.time.empty()) entry.time = utc_now();
  if (const std::string problem = entry_problem(entry); !problem.empty()) {
    throw std::invalid_argument("ledger " + path_ + ": cannot append: " + problem);
  }
  nlohmann::ordered_json j;
  j["time"] = entry.time;
  j["command"] = entry.command;
  j["data_file"] = entry.data_file;
  j["data_fingerprint"] = entry.data_fingerprint;
  j["epsilon"] = entry.epsilon;
  j["delta"] = entry.delta;
  j["released"] = entry.released;
  // Invalid UTF-8 (e.g. in a file name) is replaced rather than refused: the release is already computed.
  const std::string line = j.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace) + "\n";

  struct stat st {};
  if (::fstat(fd_, &st) != 0) throw_os_error("ledger", path_, "cannot stat");
  ssize_t n;
  do {
    n = ::write(fd_, line.data(), line.size());
  } while (n < 0 && errno == EINTR);
  if (n != static_cast<ssize_t>(line.size())) {
    const int err = errno;
    const std::string why = n < 0 ? errno_text(err) : "short write";
    // Undo a partial line (we hold the lock, so nobody appended since fstat).
    const bool undone = n <= 0 || ::ftruncate(fd_, st.st_size) == 0;
    throw std::runtime_error("ledger " + path_ + ": cannot append the release: " + why +
                             (undone ? "" : " (and a partial last line could not be removed)"));
  }
  const int synced = ::fsync(fd_);
  const int err = errno;
  entries_.push_back(std::move(entry));  // written, so charged from now on even if not yet durable
  if (synced != 0) {
    throw std::runtime_error("ledger " + path_ + ": cannot fsync after appending the release: " + errno_text(err) +
                             " (the entry may not be on disk)");
  }
}

}  // namespace dpmu::runtime
