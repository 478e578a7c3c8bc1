#include "dpmu/runtime/ledger.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <memory>
#include <system_error>
#include <utility>

#include "dpmu/core/mechanisms.hpp"
#include "dpmu/runtime/secure_random.hpp"
#include "dpmu/runtime/sha256.hpp"

namespace dpmu::runtime {

namespace {

constexpr double kRelativeTolerance = 1e-12;

/// The shortest decimal text that reads back as `x` (as fmt's "{}").
std::string num(double x) {
  std::array<char, 32> buf{};
  const auto r = std::to_chars(buf.data(), buf.data() + buf.size(), x);
  return std::string(buf.data(), r.ptr);
}
std::string num(std::size_t x) { return std::to_string(x); }
std::string num(const std::string& x) { return x; }
std::string num(const char* x) { return x; }

/// "{}" placeholders of `pattern` replaced by `args` in order (messages only).
template <class... Args>
std::string format(std::string_view pattern, const Args&... args) {
  const std::array<std::string, sizeof...(Args)> values{num(args)...};
  std::string out;
  std::size_t k = 0;
  for (std::size_t i = 0; i < pattern.size(); ++i) {
    if (pattern[i] == '{' && i + 1 < pattern.size() && pattern[i + 1] == '}' && k < values.size()) {
      out += values[k++];
      ++i;
    } else {
      out += pattern[i];
    }
  }
  return out;
}

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
    return format("epsilon is {}, but must be finite and >= 0", e.epsilon);
  }
  if (!(std::isfinite(e.delta) && e.delta >= 0.0)) {
    return format("delta is {}, but must be finite and >= 0", e.delta);
  }
  if (e.mechanism) {
    const MechanismRecord& m = *e.mechanism;
    if (m.kind.empty()) return "mechanism.kind is empty";
    if (!(std::isfinite(m.sensitivity) && m.sensitivity >= 0.0)) {
      return format("mechanism.sensitivity is {}, but must be finite and >= 0", m.sensitivity);
    }
    if (!(std::isfinite(m.noise_scale) && m.noise_scale >= 0.0)) {
      return format("mechanism.noise_scale is {}, but must be finite and >= 0", m.noise_scale);
    }
    if (m.kind == "gaussian") {
      if (!(m.sensitivity > 0.0 && m.noise_scale > 0.0 && e.epsilon > 0.0 && e.delta > 0.0 && e.delta < 1.0)) {
        return "a gaussian mechanism record needs sensitivity > 0, noise_scale > 0, epsilon > 0 and delta in (0, 1)";
      }
      // The record must not claim less privacy loss than (ε, δ): δ_μ(ε) ≤ δ (rounding allowed).
      const double implied = core::gaussian_dp_delta(m.sensitivity / m.noise_scale, e.epsilon);
      if (implied > e.delta * (1.0 + 1e-9)) {
        return format("the gaussian mechanism record (mu = {}) is not ({}, {})-DP (its delta at that epsilon is {})",
                      m.sensitivity / m.noise_scale, e.epsilon, e.delta, implied);
      }
    }
  }
  return {};
}

nlohmann::ordered_json budget_json(const Budget& b) {
  if (b.is_zcdp()) return {{"rho", b.rho}};
  return {{"epsilon", b.epsilon}, {"delta", b.delta}};
}

/// Accessors of one JSON line's fields. @throws std::invalid_argument naming the field.
struct Fields {
  const nlohmann::json& j;
  const nlohmann::json& field(const char* name) const {
    const auto it = j.find(name);
    if (it == j.end()) throw std::invalid_argument(std::string("missing field '") + name + "'");
    return *it;
  }
  std::string string(const char* name) const {
    const auto& v = field(name);
    if (!v.is_string()) throw std::invalid_argument(std::string("field '") + name + "' is not a string");
    return v.get<std::string>();
  }
  double number(const char* name) const {
    const auto& v = field(name);
    if (!v.is_number()) throw std::invalid_argument(std::string("field '") + name + "' is not a number");
    return v.get<double>();
  }
  Budget budget(const char* name) const {
    const auto& v = field(name);
    if (!v.is_object()) throw std::invalid_argument(std::string("field '") + name + "' is not an object");
    const Fields f{v};
    if (v.contains("rho")) {
      Budget b;
      b.rho = f.number("rho");
      if (!(std::isfinite(b.rho) && b.rho > 0.0)) {
        throw std::invalid_argument(format("{} is rho={}; a zCDP budget needs a finite rho > 0", name, b.rho));
      }
      return b;
    }
    Budget b{f.number("epsilon"), f.number("delta")};
    if (!(std::isfinite(b.epsilon) && b.epsilon > 0.0) || !(b.delta >= 0.0 && b.delta < 1.0)) {
      throw std::invalid_argument(
          format("{} is epsilon={}, delta={}; a budget needs a finite epsilon > 0 and a "
                 "delta in [0, 1)",
                 name, b.epsilon, b.delta));
    }
    return b;
  }
};

MechanismRecord parse_mechanism(const nlohmann::json& j) {
  if (!j.is_object()) throw std::invalid_argument("field 'mechanism' is not an object");
  const Fields f{j};
  MechanismRecord m;
  m.kind = f.string("kind");
  m.sensitivity_name = f.string("sensitivity_name");
  m.sensitivity = f.number("sensitivity");
  m.noise_scale = f.number("noise_scale");
  m.neighbouring = f.string("neighbouring");
  m.description = f.string("description");
  return m;
}

nlohmann::json parse_object(std::string_view line) {
  if (line.empty()) throw std::invalid_argument("empty line");
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(line);
  } catch (const nlohmann::json::exception& e) {  // a parse error, or out_of_range for a number like 1e999
    throw std::invalid_argument(std::string("not valid JSON (") + e.what() + ")");
  }
  if (!j.is_object()) throw std::invalid_argument("not a JSON object");
  return j;
}

LedgerHeader parse_header(const nlohmann::json& j) {
  const Fields f{j};
  LedgerHeader h;
  const auto& version = f.field("dpmu_ledger");
  if (!version.is_number_integer() || version.get<int>() != 2) {
    throw std::invalid_argument("dpmu_ledger is " + version.dump() + ", but this dpmu reads version 2");
  }
  h.created = f.string("created");
  h.budget = f.budget("budget");
  h.key_id = f.string("key_id");
  h.accountant = j.contains("accountant") ? parse_accountant(f.string("accountant")) : Accountant::basic;
  if ((h.accountant == Accountant::zcdp) != h.budget.is_zcdp()) {
    throw std::invalid_argument("the accountant " + accountant_name(h.accountant) + " does not go with the budget " +
                                budget_text(h.budget) + " (a rho budget goes with the zcdp accountant only)");
  }
  return h;
}

/// Every line of a ledger's contents. @throws std::runtime_error naming the file and line.
Ledger parse_ledger(const std::string& contents, const std::string& path) {
  Ledger ledger;
  double total_epsilon = 0.0;
  double total_delta = 0.0;
  std::size_t start = 0;
  std::size_t line_number = 0;
  while (start < contents.size()) {
    ++line_number;
    const std::size_t end = contents.find('\n', start);
    try {
      if (end == std::string::npos) {
        throw std::invalid_argument("the last line has no newline (an interrupted write?)");
      }
      const nlohmann::json j = parse_object(std::string_view(contents).substr(start, end - start));
      const Fields f{j};
      if (line_number == 1) {
        if (!j.contains("dpmu_ledger")) {
          throw std::invalid_argument(
              "not a dpmu ledger header (the first line must be {\"dpmu_ledger\": 2, ...}); a ledger written by an "
              "earlier dpmu has no budget or key: keep it as a record and start a new one with `dpmu ledger init`");
        }
        ledger.header = parse_header(j);
      } else if (j.contains("budget_change")) {
        BudgetChange c{f.string("time"), f.budget("budget_change"), f.string("reason")};
        if (c.budget.is_zcdp() != ledger.header.budget.is_zcdp()) {
          throw std::invalid_argument("a budget change from " + budget_text(ledger.header.budget) + " to " +
                                      budget_text(c.budget) + " changes the budget's form (rho or epsilon, delta)");
        }
        ledger.budget_changes.push_back(std::move(c));
      } else {
        LedgerEntry e;
        e.time = f.string("time");
        e.command = f.string("command");
        e.data_file = f.string("data_file");
        e.data_fingerprint = f.string("data_fingerprint");
        e.epsilon = f.number("epsilon");
        e.delta = f.number("delta");
        e.released = f.field("released");
        if (j.contains("mechanism")) e.mechanism = parse_mechanism(j["mechanism"]);
        if (const std::string problem = entry_problem(e); !problem.empty()) throw std::invalid_argument(problem);
        // Every total is finite (a budget is finite and check() keeps the total within it); a total
        // that overflows a double was never written by dpmu and would print as null.
        total_epsilon += e.epsilon;
        total_delta += e.delta;
        if (!std::isfinite(total_epsilon) || !std::isfinite(total_delta)) {
          throw std::invalid_argument("the total epsilon or delta up to this entry overflows a double");
        }
        ledger.entries.push_back(std::move(e));
      }
    } catch (const std::invalid_argument& e) {
      throw std::runtime_error("ledger " + path + " line " + std::to_string(line_number) + ": " + e.what() +
                               " (the ledger is damaged; fix or restore it, it is never reset)");
    }
    start = end + 1;
  }
  return ledger;
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

Budget parse_budget(std::string_view text) {
  const auto bad = [&](const std::string& why) {
    return std::invalid_argument("--budget '" + std::string(text) + "': " + why +
                                 "; expected EPS or EPS,DELTA (e.g. 2 or 2,1e-6) with EPS finite and > 0 and "
                                 "DELTA in [0, 1), or rho=RHO (a zCDP budget, e.g. rho=0.5) with RHO finite and > 0");
  };
  if (text.starts_with("rho=")) {
    const std::string_view rho_text = text.substr(4);
    const auto rho = parse_double(rho_text);
    if (!rho) throw bad("rho '" + std::string(rho_text) + "' is not a number");
    if (!(std::isfinite(*rho) && *rho > 0.0)) throw bad(format("rho is {}, but must be finite and > 0", *rho));
    Budget b;
    b.rho = *rho;
    return b;
  }
  const std::size_t comma = text.find(',');
  const std::string_view eps_text = text.substr(0, comma);
  const auto eps = parse_double(eps_text);
  if (!eps) throw bad("epsilon '" + std::string(eps_text) + "' is not a number");
  if (!(std::isfinite(*eps) && *eps > 0.0)) throw bad(format("epsilon is {}, but must be finite and > 0", *eps));
  Budget b{*eps, 0.0};
  if (comma != std::string_view::npos) {
    const std::string_view delta_text = text.substr(comma + 1);
    const auto delta = parse_double(delta_text);
    if (!delta) throw bad("delta '" + std::string(delta_text) + "' is not a number");
    if (!(*delta >= 0.0 && *delta < 1.0)) throw bad(format("delta is {}, but must be in [0, 1)", *delta));
    b.delta = *delta;
  }
  return b;
}

namespace {

/// Add one release to a total (basic composition: sums), keeping the distinct labels in order.
void add_release(LedgerTotal& t, const LedgerEntry& e) {
  t.epsilon += e.epsilon;
  t.delta += e.delta;
  ++t.releases;
  if (std::find(t.data_files.begin(), t.data_files.end(), e.data_file) == t.data_files.end()) {
    t.data_files.push_back(e.data_file);
  }
}

}  // namespace

std::string budget_text(const Budget& b) {
  if (b.is_zcdp()) return "rho=" + num(b.rho);
  return num(b.epsilon) + "," + num(b.delta);
}

std::string accountant_name(Accountant a) {
  switch (a) {
    case Accountant::basic:
      return "basic";
    case Accountant::tight:
      return "tight";
    case Accountant::zcdp:
      return "zcdp";
  }
  return "basic";
}

std::string accountant_description(Accountant a) {
  switch (a) {
    case Accountant::basic:
      return "basic composition: epsilon and delta are the sums over every release (valid for any mechanisms)";
    case Accountant::tight:
      return "tight: epsilon at the stated delta; Gaussian releases by exact Gaussian-DP composition (Dong, Roth & "
             "Su 2022), pure epsilon-DP releases by optimal composition (Kairouz, Oh & Viswanath 2017), the delta "
             "split between the two optimally, every other release (and every release without a mechanism record) "
             "by basic composition (docs/privacy.md, Accountants)";
    case Accountant::zcdp:
      return "zCDP: rho is the sum over the releases of mu^2/2 (Gaussian, mu = sensitivity/sigma) and "
             "epsilon^2/2 (pure epsilon-DP) (Bun & Steinke 2016)";
  }
  return "";
}

Accountant parse_accountant(std::string_view text) {
  if (text == "basic") return Accountant::basic;
  if (text == "tight") return Accountant::tight;
  if (text == "zcdp") return Accountant::zcdp;
  throw std::invalid_argument("--accountant '" + std::string(text) +
                              "': expected basic (sums of epsilon and delta; the default), tight (Gaussian-DP and "
                              "optimal pure-DP composition at the budget's delta) or zcdp (for a budget rho=RHO)");
}

Accountant default_accountant(const Budget& budget) { return budget.is_zcdp() ? Accountant::zcdp : Accountant::basic; }

EntryFamily entry_family(const LedgerEntry& e) {
  if (e.epsilon == 0.0 && e.delta == 0.0) return EntryFamily::none;
  if (!e.mechanism) return EntryFamily::approximate;
  if (e.mechanism->kind == "gaussian" && e.mechanism->sensitivity > 0.0 && e.mechanism->noise_scale > 0.0) {
    return EntryFamily::gaussian;
  }
  if (e.delta == 0.0) return EntryFamily::pure;
  return EntryFamily::approximate;
}

double entry_mu(const LedgerEntry& e) {
  if (entry_family(e) != EntryFamily::gaussian) {
    throw std::invalid_argument("entry_mu: the entry has no gaussian mechanism record");
  }
  return e.mechanism->sensitivity / e.mechanism->noise_scale;
}

core::CompositionTotal tight_total(const std::vector<LedgerEntry>& entries, double delta) {
  core::CompositionInput in;
  for (const auto& e : entries) {
    switch (entry_family(e)) {
      case EntryFamily::gaussian:
        in.gaussian_mu.push_back(entry_mu(e));
        in.gaussian_epsilon_delta.emplace_back(e.epsilon, e.delta);
        break;
      case EntryFamily::pure:
        in.pure_epsilon.push_back(e.epsilon);
        break;
      case EntryFamily::approximate:
        in.approximate.emplace_back(e.epsilon, e.delta);
        break;
      case EntryFamily::none:
        break;
    }
  }
  return core::tight_composition(in, delta);
}

std::optional<double> zcdp_total(const std::vector<LedgerEntry>& entries, std::string* why) {
  std::vector<double> mu, pure;
  for (const auto& e : entries) {
    switch (entry_family(e)) {
      case EntryFamily::gaussian:
        mu.push_back(entry_mu(e));
        break;
      case EntryFamily::pure:
        pure.push_back(e.epsilon);
        break;
      case EntryFamily::approximate:
        if (e.delta == 0.0) {  // an ε-DP release without a record is still ε-DP
          pure.push_back(e.epsilon);
          break;
        }
        if (why) {
          *why = format("the release of {} ({}) is (epsilon={}, delta={})-DP{}: zCDP has no bound for it", e.time,
                        e.command, e.epsilon, e.delta,
                        e.mechanism ? " by the " + e.mechanism->kind + " mechanism, not Gaussian"
                                    : " without a mechanism record");
        }
        return std::nullopt;
      case EntryFamily::none:
        break;
    }
  }
  return core::zcdp_rho(mu, pure);
}

nlohmann::ordered_json accountant_total_json(Accountant accountant, const std::vector<LedgerEntry>& entries,
                                             double delta) {
  using Json = nlohmann::ordered_json;
  const auto number_or_null = [](double x) { return std::isfinite(x) ? Json(x) : Json(nullptr); };
  switch (accountant) {
    case Accountant::basic: {
      LedgerTotal t;
      for (const auto& e : entries) add_release(t, e);
      return {{"accountant", accountant_description(accountant)}, {"epsilon", t.epsilon}, {"delta", t.delta}};
    }
    case Accountant::tight: {
      const core::CompositionTotal t = tight_total(entries, delta);
      std::size_t counts[4] = {0, 0, 0, 0};
      for (const auto& e : entries) ++counts[static_cast<int>(entry_family(e))];
      Json out{
          {"accountant", accountant_description(accountant)}, {"epsilon", number_or_null(t.epsilon)}, {"delta", delta}};
      if (!std::isfinite(t.epsilon)) {
        out["why"] =
            "no split of this delta covers the releases (Gaussian releases need delta > 0, and the other "
            "releases' deltas must fit)";
      }
      out["gaussian"] = {{"releases", counts[0]},
                         {"mu", t.gaussian_mu},
                         {"epsilon", number_or_null(t.gaussian_epsilon)},
                         {"delta", t.gaussian_delta}};
      out["pure"] = {{"releases", counts[1]}, {"epsilon", t.pure_epsilon}, {"delta", t.pure_delta}};
      out["basic_composition"] = {
          {"releases", counts[2]}, {"epsilon", t.approximate_epsilon}, {"delta", t.approximate_delta}};
      out["basic_was_smaller"] = t.basic_was_smaller;
      return out;
    }
    case Accountant::zcdp: {
      std::string why;
      const auto rho = zcdp_total(entries, &why);
      Json out{{"accountant", accountant_description(accountant)}, {"rho", rho ? Json(*rho) : Json(nullptr)}};
      if (!rho) out["why"] = why;
      return out;
    }
  }
  return {};
}

std::map<std::string, LedgerTotal> ledger_totals(const std::vector<LedgerEntry>& entries) {
  std::map<std::string, LedgerTotal> totals;
  for (const auto& e : entries) add_release(totals[e.data_fingerprint], e);
  return totals;
}

namespace {

/// The key's id in the header: a prefix of SHA-256 of the key file's contents (not of the key alone,
/// and too short to matter: it only tells a wrong key file from the right one).
std::string key_id(const std::string& key) { return sha256_hex("dpmu ledger key id\n" + key).substr(0, 16); }

/// A fresh key: 32 bytes from the kernel CSPRNG, as 64 hex digits.
std::string fresh_key() {
  SecureRng rng;
  std::array<unsigned char, 32> bytes{};
  for (std::size_t i = 0; i < bytes.size(); i += 8) {
    const std::uint64_t w = rng();
    for (std::size_t k = 0; k < 8; ++k) bytes[i + k] = static_cast<unsigned char>(w >> (8 * k));
  }
  return to_hex(bytes.data(), bytes.size());
}

/// Write the key file (mode 0600), replacing a leftover one (only ever called for a new, empty
/// ledger under its lock). @throws std::runtime_error naming the file.
void write_key_file(const std::string& path, const std::string& key) {
  const std::string kp = ledger_key_path(path);
  Fd fd(::open(kp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600));
  if (fd.fd < 0) throw_os_error("ledger key", kp, "cannot create");
  ::fchmod(fd.fd, 0600);
  const std::string text = key + "\n";
  if (::write(fd.fd, text.data(), text.size()) != static_cast<ssize_t>(text.size()) || ::fsync(fd.fd) != 0) {
    throw_os_error("ledger key", kp, "cannot write");
  }
}

/// Read and check the key file of a ledger whose header names `id`. @throws std::runtime_error.
std::string read_key_file(const std::string& path, const std::string& id) {
  const std::string kp = ledger_key_path(path);
  Fd fd(::open(kp.c_str(), O_RDONLY | O_CLOEXEC));
  if (fd.fd < 0) {
    throw std::runtime_error("ledger " + path + ": its key file " + kp + " cannot be opened (" + errno_text(errno) +
                             "); the key is needed to fingerprint the data of a release: restore it from a backup "
                             "(a ledger without its key cannot be charged)");
  }
  std::string text = read_all(fd.fd, kp, "ledger key");
  if (!text.empty() && text.back() == '\n') text.pop_back();
  if (text.size() != 64 || !is_fingerprint(text) || key_id(text) != id) {
    throw std::runtime_error("ledger " + path + ": the key file " + kp +
                             " does not belong to this ledger (its id differs from the header's key_id " + id +
                             "); restore the right key file");
  }
  return text;
}

std::string header_line(const LedgerHeader& h) {
  nlohmann::ordered_json j;
  j["dpmu_ledger"] = h.version;
  j["created"] = h.created;
  j["budget"] = budget_json(h.budget);
  j["accountant"] = accountant_name(h.accountant);
  j["key_id"] = h.key_id;
  j["note"] = "privacy-budget ledger of one data set (dpmu docs/privacy.md); append-only, never edit";
  return j.dump() + "\n";
}

void check_budget(const Budget& b, const char* what) {
  if (b.rho != 0.0) {
    if (!(std::isfinite(b.rho) && b.rho > 0.0)) {
      throw std::invalid_argument(format("{} rho is {}, but must be finite and > 0", what, b.rho));
    }
    return;
  }
  if (!(std::isfinite(b.epsilon) && b.epsilon > 0.0)) {
    throw std::invalid_argument(format("{} epsilon is {}, but must be finite and > 0", what, b.epsilon));
  }
  if (!(b.delta >= 0.0 && b.delta < 1.0)) {
    throw std::invalid_argument(format("{} delta is {}, but must be in [0, 1)", what, b.delta));
  }
}

/// Write `line` to `fd` (O_APPEND) with one write(2) and fsync it; a partial line is truncated away.
void append_line(int fd, const std::string& path, const std::string& line) {
  struct stat st {};
  if (::fstat(fd, &st) != 0) throw_os_error("ledger", path, "cannot stat");
  ssize_t n;
  do {
    n = ::write(fd, line.data(), line.size());
  } while (n < 0 && errno == EINTR);
  if (n != static_cast<ssize_t>(line.size())) {
    const int err = errno;
    const std::string why = n < 0 ? errno_text(err)
                                  : "only " + std::to_string(n) + " of " + std::to_string(line.size()) +
                                        " bytes were written (the disk is full or a file-size limit was reached)";
    const bool undone = n <= 0 || ::ftruncate(fd, st.st_size) == 0;  // we hold the lock
    throw std::runtime_error("ledger " + path + ": cannot append the release's entry: " + why +
                             (undone ? "; nothing was charged and nothing released: free space and run again"
                                     : " (and a partial last line could not be removed: the ledger needs repair)"));
  }
  if (::fsync(fd) != 0) {
    throw std::runtime_error("ledger " + path + ": cannot fsync after appending: " + errno_text(errno) +
                             " (the line may not be on disk)");
  }
}

void check_accountant_fits(Accountant accountant, const Budget& budget) {
  if ((accountant == Accountant::zcdp) != budget.is_zcdp()) {
    throw std::invalid_argument("--accountant " + accountant_name(accountant) + " with --budget " +
                                budget_text(budget) +
                                ": a budget rho=RHO goes with the zcdp accountant, and an (EPS[,DELTA]) budget with "
                                "basic or tight");
  }
}

std::string missing_ledger_message(const std::string& path) {
  return "ledger " + path + " does not exist (or is empty): create it with its budget, `dpmu ledger init " + path +
         " --budget EPS[,DELTA]` (R: dpmu::ledger_init, Python: dpmu.ledger_init), or give a budget with this "
         "release (--budget / budget =), which is then fixed for the ledger";
}

}  // namespace

std::string ledger_key_path(const std::string& path) { return path + ".key"; }

Budget Ledger::budget() const { return budget_changes.empty() ? header.budget : budget_changes.back().budget; }

LedgerTotal Ledger::total() const {
  LedgerTotal t;
  for (const auto& e : entries) add_release(t, e);
  return t;
}

void init_ledger(const std::string& path, const Budget& budget, std::optional<Accountant> accountant) {
  check_budget(budget, "--budget");
  check_accountant_fits(accountant.value_or(default_accountant(budget)), budget);
  std::error_code ec;
  if (std::filesystem::exists(path, ec) && std::filesystem::file_size(path, ec) > 0) {
    throw std::invalid_argument("ledger " + path +
                                " already exists and is not empty; a ledger is never reset (change its budget with "
                                "`dpmu ledger set-budget`, or start a new ledger under another name)");
  }
  LedgerLock lock(path, budget, accountant);
  if (!lock.created()) {
    throw std::invalid_argument("ledger " + path + " was created by another process meanwhile; it is not reset");
  }
}

Ledger read_ledger(const std::string& path) {
  Fd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (fd.fd < 0) {
    if (errno == ENOENT) throw std::runtime_error(missing_ledger_message(path));
    throw_os_error("ledger", path, "cannot open");
  }
  if (flock_retry(fd.fd, LOCK_SH) != 0) throw_os_error("ledger", path, "cannot lock");
  const std::string contents = read_all(fd.fd, path, "ledger");
  if (contents.empty()) throw std::runtime_error(missing_ledger_message(path));
  return parse_ledger(contents, path);  // closing the descriptor releases the lock
}

void check_release_fits(const Budget& budget, const LedgerTotal& spent, double epsilon, double delta,
                        const std::string& path, bool per_call_budget) {
  const bool over_epsilon = exceeds(spent.epsilon + epsilon, budget.epsilon);
  const bool over_delta = exceeds(spent.delta + delta, budget.delta);
  if (!over_epsilon && !over_delta) return;
  throw BudgetExceeded(format(
      "privacy budget exceeded: ledger {} has spent epsilon={}, delta={} in {} release(s); this release requests "
      "epsilon={}, delta={}; the budget is epsilon={}, delta={}{} (basic composition: the {} would be {}); nothing "
      "was released",
      path, spent.epsilon, spent.delta, spent.releases, epsilon, delta, budget.epsilon, budget.delta,
      per_call_budget ? " (this call's --budget)" : "", over_epsilon ? "total epsilon" : "total delta",
      over_epsilon ? spent.epsilon + epsilon : spent.delta + delta));
}

void check_release_fits(Accountant accountant, const Budget& budget, const std::vector<LedgerEntry>& spent,
                        const LedgerEntry& release, const std::string& path, bool per_call_budget) {
  check_accountant_fits(accountant, budget);
  const std::string whose = per_call_budget ? " (this call's --budget)" : "";
  switch (accountant) {
    case Accountant::basic: {
      LedgerTotal t;
      for (const auto& e : spent) add_release(t, e);
      check_release_fits(budget, t, release.epsilon, release.delta, path, per_call_budget);
      return;
    }
    case Accountant::tight: {
      std::vector<LedgerEntry> all = spent;
      all.push_back(release);
      const core::CompositionTotal after = tight_total(all, budget.delta);
      if (!exceeds(after.epsilon, budget.epsilon)) return;
      const core::CompositionTotal before = tight_total(spent, budget.delta);
      throw BudgetExceeded(format(
          "privacy budget exceeded: ledger {} (accountant tight) has spent epsilon={} at delta={} in {} release(s); "
          "this release requests epsilon={}, delta={} ({}); the total would be epsilon={} at delta={}; the budget is "
          "epsilon={}, delta={}{}; nothing was released",
          path, before.epsilon, budget.delta, spent.size(), release.epsilon, release.delta,
          release.mechanism ? release.mechanism->kind + " mechanism" : std::string("no mechanism record"),
          after.epsilon, budget.delta, budget.epsilon, budget.delta, whose));
    }
    case Accountant::zcdp: {
      std::string why;
      const auto before = zcdp_total(spent, &why);
      std::vector<LedgerEntry> all = spent;
      all.push_back(release);
      const auto after = zcdp_total(all, &why);
      if (!after) {
        throw std::invalid_argument("ledger " + path + " has a zCDP budget (rho=" + num(budget.rho) +
                                    "), but this release cannot be accounted in zCDP: " + why +
                                    "; charge it to a ledger with an (epsilon, delta) budget");
      }
      if (!exceeds(*after, budget.rho)) return;
      throw BudgetExceeded(
          format("privacy budget exceeded: ledger {} (accountant zcdp) has spent rho={} in {} "
                 "release(s); this release requests rho={}; the total would be rho={}; the budget is "
                 "rho={}{}; nothing was released",
                 path, before.value_or(0.0), spent.size(), *after - before.value_or(0.0), *after, budget.rho, whose));
    }
  }
}

LedgerLock::LedgerLock(const std::string& path, const std::optional<Budget>& create_budget,
                       std::optional<Accountant> create_accountant)
    : path_(path) {
  if (create_budget) {
    check_budget(*create_budget, "--budget");
    if (!create_accountant) create_accountant = default_accountant(*create_budget);
    check_accountant_fits(*create_accountant, *create_budget);
  }
  const int flags = O_RDWR | O_APPEND | O_CLOEXEC | (create_budget ? O_CREAT : 0);
  Fd fd(::open(path.c_str(), flags, 0644));
  if (fd.fd < 0) {
    if (errno == ENOENT) throw std::runtime_error(missing_ledger_message(path));
    throw_os_error("ledger", path, "cannot open or create");
  }
  if (flock_retry(fd.fd, LOCK_EX) != 0) throw_os_error("ledger", path, "cannot lock");
  const std::string contents = read_all(fd.fd, path, "ledger");
  if (contents.empty()) {
    if (!create_budget) throw std::runtime_error(missing_ledger_message(path));
    std::error_code ec;
    if (std::filesystem::exists(ledger_key_path(path), ec)) {
      // A key without its ledger's lines: the ledger was truncated or replaced, not new. Never reset.
      throw std::runtime_error("ledger " + path + " is empty but its key file " + ledger_key_path(path) +
                               " exists: the ledger was truncated or replaced (it is never reset); restore it from "
                               "a backup, or remove the key file if you really mean to start a new ledger");
    }
    key_ = fresh_key();
    write_key_file(path, key_);
    ledger_.header.created = utc_now();
    ledger_.header.budget = *create_budget;
    ledger_.header.key_id = key_id(key_);
    ledger_.header.accountant = *create_accountant;
    append_line(fd.fd, path, header_line(ledger_.header));
    created_ = true;
  } else {
    ledger_ = parse_ledger(contents, path);
    key_ = read_key_file(path, ledger_.header.key_id);
  }
  fd_ = fd.release();
}

LedgerLock::~LedgerLock() {
  if (fd_ >= 0) {
    ::flock(fd_, LOCK_UN);
    ::close(fd_);
  }
}

std::string LedgerLock::fingerprint(std::string_view bytes) const { return hmac_sha256_hex(key_, bytes); }

void LedgerLock::check(double epsilon, double delta, const std::optional<Budget>& per_call,
                       const std::optional<MechanismRecord>& mechanism) const {
  if (!(std::isfinite(epsilon) && epsilon >= 0.0)) {
    throw std::invalid_argument(format("ledger check: epsilon is {}, but must be finite and >= 0", epsilon));
  }
  if (!(std::isfinite(delta) && delta >= 0.0)) {
    throw std::invalid_argument(format("ledger check: delta is {}, but must be finite and >= 0", delta));
  }
  const Budget in_force = ledger_.budget();
  Budget budget = in_force;
  if (per_call) {
    check_budget(*per_call, "--budget");
    if (per_call->is_zcdp() != in_force.is_zcdp()) {
      throw std::invalid_argument(
          "--budget " + budget_text(*per_call) + " is not of the form of the budget of ledger " + path_ + " (" +
          budget_text(in_force) + "): give a per-call budget as rho=RHO for a rho budget, else as EPS[,DELTA]");
    }
    if (in_force.is_zcdp() && exceeds(per_call->rho, in_force.rho)) {
      throw std::invalid_argument(format(
          "--budget rho={} is above the budget of ledger {} (rho={}): a per-call budget may only be lower; to change "
          "the ledger's budget, record it with `dpmu ledger set-budget {} --budget rho=RHO --reason TEXT`",
          per_call->rho, path_, in_force.rho, path_));
    }
    if (!in_force.is_zcdp() &&
        (exceeds(per_call->epsilon, in_force.epsilon) || exceeds(per_call->delta, in_force.delta))) {
      throw std::invalid_argument(format(
          "--budget epsilon={}, delta={} is above the budget of ledger {} (epsilon={}, delta={}): a per-call budget "
          "may only be lower; to change the ledger's budget, record it with `dpmu ledger set-budget {} --budget "
          "EPS[,DELTA] --reason TEXT`",
          per_call->epsilon, per_call->delta, path_, in_force.epsilon, in_force.delta, path_));
    }
    budget = *per_call;
  }
  LedgerEntry release;
  release.data_fingerprint = std::string(64, '0');
  release.epsilon = epsilon;
  release.delta = delta;
  release.mechanism = mechanism;
  if (const std::string problem = entry_problem(release); !problem.empty()) {
    throw std::invalid_argument("ledger check: " + problem);
  }
  check_release_fits(ledger_.accountant(), budget, ledger_.entries, release, path_, per_call.has_value());
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
  if (entry.mechanism) {
    const MechanismRecord& m = *entry.mechanism;
    j["mechanism"] = {{"kind", m.kind},
                      {"sensitivity_name", m.sensitivity_name},
                      {"sensitivity", m.sensitivity},
                      {"noise_scale", m.noise_scale},
                      {"neighbouring", m.neighbouring},
                      {"description", m.description}};
  }
  // Invalid UTF-8 (e.g. in a file name) is replaced rather than refused.
  write_line(j.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace) + "\n");
  ledger_.entries.push_back(std::move(entry));
}

void LedgerLock::change_budget(const Budget& budget, const std::string& reason) {
  check_budget(budget, "--budget");
  if (reason.empty()) throw std::invalid_argument("a budget change needs a reason (--reason TEXT)");
  if (budget.is_zcdp() != ledger_.budget().is_zcdp()) {
    throw std::invalid_argument("--budget " + budget_text(budget) + ": ledger " + path_ + " has the budget " +
                                budget_text(ledger_.budget()) + " (accountant " +
                                accountant_name(ledger_.accountant()) +
                                "); a new budget keeps its form (rho=RHO, or EPS[,DELTA])");
  }
  BudgetChange c{utc_now(), budget, reason};
  nlohmann::ordered_json j;
  j["time"] = c.time;
  j["budget_change"] = budget_json(budget);
  j["reason"] = reason;
  write_line(j.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace) + "\n");
  ledger_.budget_changes.push_back(std::move(c));
}

void LedgerLock::write_line(const std::string& line) { append_line(fd_, path_, line); }

}  // namespace dpmu::runtime
