#include "dpmu/runtime/results.hpp"

#include <H5Cpp.h>
#include <fcntl.h>
#include <fmt/format.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <fstream>
#include <functional>
#include <limits>
#include <map>
#include <memory>
#include <new>
#include <stdexcept>

#include "dpmu/core/quantile.hpp"
#include "dpmu/runtime/sha256.hpp"

namespace dpmu::runtime {

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// ---- HDF5 error reasons ----------------------------------------------------------------------

/// The innermost message of the last failed HDF5 call (collected by an automatic error handler,
/// because the C++ wrappers only report "H5Dread failed" and destructors clear the error stack).
thread_local std::string g_hdf5_reason;

herr_t collect_error(unsigned n, const H5E_error2_t* err, void* data) {
  auto* out = static_cast<std::string*>(data);
  if (n == 0 && err->desc != nullptr) *out = err->desc;  // walked upward: entry 0 is the innermost
  return 0;
}

herr_t on_hdf5_error(hid_t stack, void*) {
  std::string reason;
  H5Ewalk2(stack, H5E_WALK_UPWARD, collect_error, &reason);
  // The POSIX driver reports "..., errno = 28, error message = 'No space left on device', ...".
  const auto at = reason.find("error message = '");
  if (at != std::string::npos) {
    const auto end = reason.find('\'', at + 17);
    reason = reason.substr(at + 17, end == std::string::npos ? std::string::npos : end - at - 17);
  }
  if (g_hdf5_reason.empty() && !reason.empty()) g_hdf5_reason = reason;
  return 0;
}

/// Route HDF5 errors to on_hdf5_error (no printing) and forget any earlier reason.
void capture_hdf5_errors() {
  H5Eset_auto2(H5E_DEFAULT, on_hdf5_error, nullptr);
  g_hdf5_reason.clear();
}

std::string hdf5_reason(const H5::Exception& e) {
  if (!g_hdf5_reason.empty()) return g_hdf5_reason;
  return e.getFuncName().empty() ? e.getDetailMsg() : e.getFuncName() + ": " + e.getDetailMsg();
}

/// True if an HDF5 failure reason says that stored bytes do not match their checksum or structure.
bool looks_damaged(const std::string& reason) {
  for (const char* word : {"checksum", "Fletcher32", "signature", "filter", "truncated", "bad ", "corrupt", "decode",
                           "unable to load", "unable to protect", "not a valid"}) {
    if (reason.find(word) != std::string::npos) return true;
  }
  return false;
}

// ---- whole-file checksum -------------------------------------------------------------------------

/// SHA-256 (runtime/sha256.hpp), fed in pieces.
class Digest {
 public:
  void bytes(const void* p, std::size_t n) { sha_.update(std::string_view(static_cast<const char*>(p), n)); }
  std::string hex() {
    const auto d = sha_.finish();
    return to_hex(d.data(), d.size());
  }

 private:
  Sha256 sha_;
};

/// The user block (the first bytes of a results file, which HDF5 leaves to applications) holds
/// "dpmu-results\nsha256 <64 hex digits>\n", the SHA-256 of every byte after the user block.
/// It is checked before HDF5 parses anything: HDF5 has no checksum for variable-length strings
/// (its global heap), and a damaged one can crash the library instead of failing.
constexpr std::size_t kUserBlock = 512;
constexpr char kChecksumHeader[] = "dpmu-results\nsha256 ";

/// What the first bytes of a file say about its checksum.
enum class FileChecksum { verified, absent, mismatch, damaged_header };

FileChecksum check_file_checksum(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::vector<char> head(kUserBlock);
  in.read(head.data(), static_cast<std::streamsize>(head.size()));
  if (in.gcount() < static_cast<std::streamsize>(head.size())) return FileChecksum::absent;
  static const char hdf5[8] = {'\x89', 'H', 'D', 'F', '\r', '\n', '\x1a', '\n'};
  const std::size_t prefix = sizeof kChecksumHeader - 1;
  if (std::memcmp(head.data(), kChecksumHeader, prefix) != 0) {
    // An HDF5 file that starts at byte 0 has no user block (schema 1.0, or another writer).
    return std::memcmp(head.data(), hdf5, 8) == 0 ? FileChecksum::absent : FileChecksum::damaged_header;
  }
  const std::string stored(head.data() + prefix, 64);
  if (head[prefix + 64] != '\n' || stored.find_first_not_of("0123456789abcdef") != std::string::npos) {
    return FileChecksum::damaged_header;
  }
  Digest d;
  std::vector<char> buf(std::size_t{1} << 20);
  while (in) {
    in.read(buf.data(), static_cast<std::streamsize>(buf.size()));
    d.bytes(buf.data(), static_cast<std::size_t>(in.gcount()));
  }
  return d.hex() == stored ? FileChecksum::verified : FileChecksum::mismatch;
}

/// The user block that goes in front of `image` (HDF5's file image starts at the superblock):
/// the checksum header of the image's bytes, zero-padded to kUserBlock.
std::string file_checksum_block(const std::vector<char>& image) {
  Digest d;
  d.bytes(image.data(), image.size());
  std::string block = std::string(kChecksumHeader) + d.hex() + "\n";
  block.resize(kUserBlock, '\0');
  return block;
}

// ---- small HDF5 helpers (C++ API) -------------------------------------------------------

/// Variable-length UTF-8 strings (schema 2.0; before, the character set said ASCII whatever the
/// bytes, which R's hdf5r refuses for non-ASCII text: "unknown encoding mask").
H5::StrType vlen_str() {
  H5::StrType t(H5::PredType::C_S1, H5T_VARIABLE);
  t.setCset(H5T_CSET_UTF8);
  return t;
}

/// Creation properties of a numeric dataset: chunked (about 256 KiB per chunk) with the Fletcher32
/// checksum filter, so that a damaged chunk is an error on reading, never a wrong number; shuffled
/// and deflated (level 1). Empty
/// datasets stay contiguous (no data to check).
H5::DSetCreatPropList checked_layout(const std::vector<hsize_t>& dims, std::size_t element_size) {
  H5::DSetCreatPropList plist;
  hsize_t total = 1;
  for (auto d : dims) total *= d;
  if (dims.empty() || total == 0) return plist;
  std::vector<hsize_t> chunk = dims;
  const hsize_t target = std::max<hsize_t>(1, (256 * 1024) / element_size);
  auto product = [&] {
    hsize_t p = 1;
    for (auto c : chunk) p *= c;
    return p;
  };
  while (product() > target) {
    auto largest = std::max_element(chunk.begin(), chunk.end());
    *largest = (*largest + 1) / 2;
  }
  plist.setChunk(static_cast<int>(chunk.size()), chunk.data());
  // Byte shuffle + deflate level 1: metrics that are 0/1 indicators, counts or NaN for most cells
  // shrink ~100x, and the in-memory image that write_results builds (and so its peak memory)
  // shrinks with them; zlib is in every HDF5 build that h5py and hdf5r use. Fletcher-32 last, so
  // it checks the stored (compressed) bytes.
  plist.setShuffle();
  plist.setDeflate(1);
  plist.setFletcher32();
  return plist;
}

void attr_string(H5::H5Object& obj, const std::string& name, const std::string& value) {
  auto t = vlen_str();
  auto a = obj.createAttribute(name, t, H5::DataSpace(H5S_SCALAR));
  a.write(t, value);
}

/// A list of strings as an attribute; an empty list writes no attribute (R's hdf5r cannot read a
/// zero-length attribute: "null attribute buffer"); read_attr_strings reads it back as empty.
void attr_strings(H5::H5Object& obj, const std::string& name, const std::vector<std::string>& values) {
  if (values.empty()) return;
  auto t = vlen_str();
  hsize_t dims[1] = {values.size()};
  auto a = obj.createAttribute(name, t, H5::DataSpace(1, dims));
  std::vector<const char*> ptrs;
  for (const auto& v : values) ptrs.push_back(v.c_str());
  if (!ptrs.empty()) a.write(t, ptrs.data());
}

template <class T>
const H5::PredType& pred();
template <>
const H5::PredType& pred<double>() {
  return H5::PredType::NATIVE_DOUBLE;
}
template <>
const H5::PredType& pred<std::int64_t>() {
  return H5::PredType::NATIVE_INT64;
}
template <>
const H5::PredType& pred<std::uint64_t>() {
  return H5::PredType::NATIVE_UINT64;
}
template <>
const H5::PredType& pred<std::uint8_t>() {
  return H5::PredType::NATIVE_UINT8;
}

template <class T>
void attr_scalar(H5::H5Object& obj, const std::string& name, T value) {
  auto a = obj.createAttribute(name, pred<T>(), H5::DataSpace(H5S_SCALAR));
  a.write(pred<T>(), &value);
}

std::string read_attr_string(const H5::H5Object& obj, const std::string& name) {
  auto a = obj.openAttribute(name);
  std::string s;
  a.read(a.getStrType(), s);
  return s;
}

/// A list written by attr_strings (empty if the attribute is absent), read in the character set
/// it was written in (ASCII before schema 2.0, UTF-8 since).
std::vector<std::string> read_attr_strings(const H5::H5Object& obj, const std::string& name) {
  if (!obj.attrExists(name)) return {};
  auto a = obj.openAttribute(name);
  hsize_t n = a.getSpace().getSimpleExtentNpoints();
  std::vector<char*> buf(n, nullptr);
  auto t = vlen_str();
  t.setCset(a.getStrType().getCset());
  if (n > 0) a.read(t, buf.data());
  std::vector<std::string> out;
  for (auto* p : buf) {
    out.emplace_back(p ? p : "");
    free(p);  // NOLINT: memory allocated by the HDF5 library for variable-length strings
  }
  return out;
}

template <class T>
T read_attr_scalar(const H5::H5Object& obj, const std::string& name) {
  T v{};
  obj.openAttribute(name).read(pred<T>(), &v);
  return v;
}

/// Create a dataset of `dims` (zero-size allowed) and write `data` (row-major).
template <class T>
void dataset(H5::Group& g, const std::string& name, const std::vector<hsize_t>& dims, const T* data) {
  H5::DataSpace space(static_cast<int>(dims.size()), dims.data());
  auto ds = g.createDataSet(name, pred<T>(), space, checked_layout(dims, sizeof(T)));
  hsize_t total = 1;
  for (auto d : dims) total *= d;
  if (total > 0) ds.write(data, pred<T>());
}

/// A dataset of UTF-8 strings, of shape `dims` (default [values.size()]; row-major): variable-length,
/// except that an empty one has fixed-length strings (R's hdf5r fails on an empty variable-length
/// string dataset, in H5Dvlen_reclaim; read_string_dataset and h5py read either).
void string_dataset(H5::Group& g, const std::string& name, const std::vector<std::string>& values,
                    std::vector<hsize_t> dims = {}) {
  if (dims.empty()) dims = {values.size()};
  auto t = vlen_str();
  if (values.empty()) {
    H5::StrType fixed(H5::PredType::C_S1, 1);
    fixed.setCset(H5T_CSET_UTF8);
    g.createDataSet(name, fixed, H5::DataSpace(static_cast<int>(dims.size()), dims.data()));
    return;
  }
  auto ds = g.createDataSet(name, t, H5::DataSpace(static_cast<int>(dims.size()), dims.data()));
  std::vector<const char*> ptrs;
  for (const auto& v : values) ptrs.push_back(v.c_str());
  if (!ptrs.empty()) ds.write(ptrs.data(), t);
}

template <class T>
std::vector<T> read_dataset(const H5::Group& g, const std::string& name, std::vector<hsize_t>* dims_out = nullptr) {
  auto ds = g.openDataSet(name);
  auto space = ds.getSpace();
  std::vector<hsize_t> dims(space.getSimpleExtentNdims());
  if (!dims.empty()) space.getSimpleExtentDims(dims.data());
  hsize_t total = 1;
  for (auto d : dims) total *= d;
  std::vector<T> out(total);
  if (total > 0) ds.read(out.data(), pred<T>());
  if (dims_out) *dims_out = dims;
  return out;
}

std::vector<std::string> read_string_dataset(const H5::Group& g, const std::string& name) {
  auto ds = g.openDataSet(name);
  auto space = ds.getSpace();
  hsize_t n = space.getSimpleExtentNpoints();
  std::vector<char*> buf(n, nullptr);
  if (n == 0) return {};
  auto t = vlen_str();
  t.setCset(ds.getStrType().getCset());  // ASCII in files before schema 2.0
  ds.read(buf.data(), t);
  std::vector<std::string> out;
  for (auto* p : buf) out.emplace_back(p ? p : "");
  if (n > 0) H5::DataSet::vlenReclaim(buf.data(), t, space);
  return out;
}

ParameterType type_from_name(const std::string& s) {
  if (s == "integer") return ParameterType::integer;
  if (s == "real") return ParameterType::real;
  if (s == "integer_list") return ParameterType::integer_list;
  if (s == "real_list") return ParameterType::real_list;
  if (s == "string_list") return ParameterType::string_list;
  return ParameterType::string;
}

}  // namespace

const char* parameter_type_name(ParameterType t) {
  switch (t) {
    case ParameterType::integer:
      return "integer";
    case ParameterType::real:
      return "real";
    case ParameterType::string:
      return "string";
    case ParameterType::integer_list:
      return "integer_list";
    case ParameterType::real_list:
      return "real_list";
    case ParameterType::string_list:
      return "string_list";
  }
  return "string";
}

std::string data_files_difference(const std::vector<DataFileFingerprint>& then,
                                  const std::vector<DataFileFingerprint>& now, const std::string& then_label,
                                  const std::string& now_label) {
  auto short_sha = [](const std::string& s) { return s.substr(0, 12) + "..."; };
  for (const auto& a : then) {
    auto b = std::find_if(now.begin(), now.end(), [&](const DataFileFingerprint& x) { return x.path == a.path; });
    if (b == now.end()) return fmt::format("data file {} is read {} but not {}", a.path, then_label, now_label);
    if (b->sha256 != a.sha256) {
      return fmt::format("data file {} differs (SHA-256 {} {}, {} {})", a.path, short_sha(a.sha256), then_label,
                         short_sha(b->sha256), now_label);
    }
  }
  for (const auto& b : now) {
    if (std::none_of(then.begin(), then.end(), [&](const DataFileFingerprint& x) { return x.path == b.path; })) {
      return fmt::format("data file {} is read {} but not {}", b.path, now_label, then_label);
    }
  }
  return "";
}

std::string hex_key(std::uint64_t id) { return fmt::format("{:016x}", id); }

std::string MetricLayout::component_label(std::size_t cell, std::size_t k) const {
  if (!is_vector) return "";
  if (cell < component_labels.size() && k < component_labels[cell].size()) return component_labels[cell][k];
  return std::to_string(k);
}

std::size_t StudyResults::offset(std::size_t cell, std::size_t metric) const {
  std::size_t off = 0;
  for (std::size_t m = 0; m < metric; ++m) off += metrics[m].sizes[cell];
  return off;
}

std::int64_t StudyResults::n_done(std::size_t cell) const {
  const auto& d = cell_results[cell].done;
  return static_cast<std::int64_t>(std::count(d.begin(), d.end(), std::uint8_t{1}));
}

std::int64_t StudyResults::n_failed(std::size_t cell) const {
  std::int64_t n = 0;
  std::uint64_t last = std::numeric_limits<std::uint64_t>::max();
  for (const auto& e : errors) {
    if (e.cell == cell && e.replicate != last) {
      ++n;
      last = e.replicate;
    }
  }
  return n;
}

bool StudyResults::cell_failed(std::size_t cell) const {
  const auto n = n_done(cell);
  return n > 0 && static_cast<double>(n_failed(cell)) > info.max_failure_fraction * static_cast<double>(n);
}

Summary summarize_values(const double* values, std::size_t stride, const std::uint8_t* done, std::size_t count) {
  Summary s{kNaN, kNaN, kNaN, kNaN, kNaN, kNaN, kNaN, kNaN, 0, 0};
  std::vector<double> ok;
  for (std::size_t i = 0; i < count; ++i) {
    if (!done[i]) continue;
    ++s.n;
    const double x = values[i * stride];
    if (!std::isnan(x)) ok.push_back(x);
  }
  s.n_ok = static_cast<std::int64_t>(ok.size());
  if (ok.empty()) return s;
  // Two-pass mean and variance, in replicate order.
  double sum = 0.0;
  for (double x : ok) sum += x;
  s.mean = sum / static_cast<double>(ok.size());
  if (ok.size() > 1) {
    double ss = 0.0;
    for (double x : ok) ss += (x - s.mean) * (x - s.mean);
    s.sd = std::sqrt(ss / static_cast<double>(ok.size() - 1));
    s.mcse = s.sd / std::sqrt(static_cast<double>(ok.size()));
  }
  s.q025 = core::type7_quantile(ok, 0.025);
  s.q250 = core::type7_quantile(ok, 0.25);
  s.q500 = core::type7_quantile(ok, 0.5);
  s.q750 = core::type7_quantile(ok, 0.75);
  s.q975 = core::type7_quantile(ok, 0.975);
  return s;
}

Summary summarize_component(const StudyResults& r, std::size_t cell, std::size_t metric, std::size_t k) {
  const auto& cr = r.cell_results[cell];
  const std::size_t off = r.offset(cell, metric) + k;
  const std::size_t count = cr.done.size();
  return summarize_values(cr.values.data() + off, cr.width, cr.done.data(), count);
}

namespace {

/// Bob Jenkins' lookup3 hashlittle, HDF5's metadata checksum (H5_checksum_lookup3, initval 0).
std::uint32_t lookup3(const unsigned char* k, std::size_t length) {
  auto rot = [](std::uint32_t x, int n) { return (x << n) | (x >> (32 - n)); };
  std::uint32_t a, b, c;
  a = b = c = 0xdeadbeefu + static_cast<std::uint32_t>(length);
  auto word = [&](std::size_t i) {
    return std::uint32_t{k[i]} | (std::uint32_t{k[i + 1]} << 8) | (std::uint32_t{k[i + 2]} << 16) |
           (std::uint32_t{k[i + 3]} << 24);
  };
  while (length > 12) {
    a += word(0), b += word(4), c += word(8);
    a -= c, a ^= rot(c, 4), c += b;
    b -= a, b ^= rot(a, 6), a += c;
    c -= b, c ^= rot(b, 8), b += a;
    a -= c, a ^= rot(c, 16), c += b;
    b -= a, b ^= rot(a, 19), a += c;
    c -= b, c ^= rot(b, 4), b += a;
    length -= 12, k += 12;
  }
  if (length == 0) return c;
  unsigned char tail[12] = {};  // the last 1..12 bytes, zero-padded (adds what the reference's switch adds)
  std::memcpy(tail, k, length);
  auto tword = [&](std::size_t i) {
    return std::uint32_t{tail[i]} | (std::uint32_t{tail[i + 1]} << 8) | (std::uint32_t{tail[i + 2]} << 16) |
           (std::uint32_t{tail[i + 3]} << 24);
  };
  a += tword(0), b += tword(4), c += tword(8);
  c ^= b, c -= rot(b, 14);
  a ^= c, a -= rot(c, 11);
  b ^= a, b -= rot(a, 25);
  c ^= b, c -= rot(b, 16);
  a ^= c, a -= rot(c, 4);
  b ^= a, b -= rot(a, 14);
  c ^= b, c -= rot(b, 24);
  return c;
}

/// HDF5 1.10.8's H5Fget_file_image() sets the end-of-file address and clears the consistency flags
/// of a version 2/3 superblock in the image without updating the superblock's checksum, so the
/// image does not open ("incorrect metadata checksum"). Recompute it (a no-op where it is right).
void fix_superblock_checksum(std::vector<char>& image, std::size_t at) {
  static const char signature[8] = {'\x89', 'H', 'D', 'F', '\r', '\n', '\x1a', '\n'};
  if (image.size() < at + 12 || std::memcmp(image.data() + at, signature, 8) != 0) {
    throw std::logic_error("results image: no HDF5 superblock after the user block");
  }
  const auto version = static_cast<unsigned char>(image[at + 8]);
  const auto offset_size = static_cast<unsigned char>(image[at + 9]);
  if (version < 2 || (offset_size != 4 && offset_size != 8)) return;
  const std::size_t length = 12 + 4 * std::size_t{offset_size};
  if (image.size() < at + length + 4) return;
  const std::uint32_t sum = lookup3(reinterpret_cast<const unsigned char*>(image.data() + at), length);
  for (int i = 0; i < 4; ++i)
    image[at + length + static_cast<std::size_t>(i)] = static_cast<char>((sum >> (8 * i)) & 0xff);
}

/// Write `head` then `bytes` to `tmp` (created), fsync it, call `verify`, and rename it over
/// `path`. On any failure the temporary file is removed and the message names `path` and the
/// reason (errno).
void write_file_atomically(const std::filesystem::path& path, const std::filesystem::path& tmp, const std::string& head,
                           const std::vector<char>& bytes, const std::function<void()>& verify) {
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) {
    throw std::runtime_error(fmt::format("{}: cannot write the results file: cannot create {}: {}", path.string(),
                                         tmp.string(), std::strerror(errno)));
  }
  auto fail = [&](const char* step, int err) {
    ::close(fd);
    ::unlink(tmp.c_str());
    throw std::runtime_error(fmt::format("{}: cannot write the results file ({} {} bytes): {}", path.string(), step,
                                         head.size() + bytes.size(), std::strerror(err)));
  };
  for (const auto& [data, size] : {std::pair{head.data(), head.size()}, std::pair{bytes.data(), bytes.size()}}) {
    std::size_t done = 0;
    while (done < size) {
      const ssize_t n = ::write(fd, data + done, size - done);
      if (n < 0) {
        if (errno == EINTR) continue;
        fail("writing", errno);
      }
      done += static_cast<std::size_t>(n);
    }
  }
  if (::fsync(fd) != 0) fail("flushing", errno);
  if (::close(fd) != 0) {
    const int err = errno;
    ::unlink(tmp.c_str());
    throw std::runtime_error(
        fmt::format("{}: cannot write the results file (closing): {}", path.string(), std::strerror(err)));
  }
  try {
    verify();
  } catch (const std::exception& e) {
    ::unlink(tmp.c_str());
    throw std::runtime_error(fmt::format("{}: the results file written does not read back ({}); nothing was replaced",
                                         path.string(), e.what()));
  }
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    const int err = errno;
    ::unlink(tmp.c_str());
    throw std::runtime_error(
        fmt::format("{}: cannot move the results file into place: {}", path.string(), std::strerror(err)));
  }
}

}  // namespace

std::vector<std::string> remove_stale_temporary_files(const std::filesystem::path& path) {
  namespace fs = std::filesystem;
  std::vector<std::string> removed;
  const fs::path dir = path.has_parent_path() ? path.parent_path() : fs::path(".");
  const std::string prefix = path.filename().string() + ".tmp-";
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (name.rfind(prefix, 0) != 0) continue;
    const std::string digits = name.substr(prefix.size());
    if (digits.empty() || digits.find_first_not_of("0123456789") != std::string::npos || digits.size() > 9) continue;
    const auto pid = static_cast<pid_t>(std::stol(digits));
    if (pid == ::getpid()) continue;
    if (::kill(pid, 0) == 0 || errno == EPERM) continue;  // that process still runs
    std::error_code rm;
    if (fs::remove(it->path(), rm)) removed.push_back(it->path().string());
  }
  return removed;
}

namespace {

// ---- write_results, one group at a time ---------------------------------------------------

/// Root attributes (docs/results-schema.md, "Root attributes").
void write_root_attributes(H5::Group& root, const StudyResults& r) {
  attr_string(root, "filetype", "dpmu-results");
  {
    std::vector<std::string> paths, digests;
    for (const auto& f : r.info.data_files) paths.push_back(f.path), digests.push_back(f.sha256);
    attr_strings(root, "data_files", paths);
    attr_strings(root, "data_sha256", digests);
  }
  int version[2] = {kSchemaMajor, kSchemaMinor};
  {
    hsize_t d[1] = {2};
    auto a = root.createAttribute("schema_version", H5::PredType::NATIVE_INT, H5::DataSpace(1, d));
    a.write(H5::PredType::NATIVE_INT, version);
  }
  attr_string(root, "dpmu_version", r.info.dpmu_version);
  attr_string(root, "git_sha", r.info.git_sha);
  attr_string(root, "created_utc", r.info.finished_utc);
  attr_string(root, "started_utc", r.info.started_utc);
  attr_string(root, "finished_utc", r.info.finished_utc);
  attr_string(root, "experiment", r.info.experiment);
  attr_string(root, "description", r.info.description);
  attr_scalar<std::uint64_t>(root, "master_seed", r.info.master_seed);
  attr_string(root, "rng", "philox4x64-10 key {master_seed, stream key} counter {replicate, purpose, 0, block}");
  attr_string(root, "config_yaml", r.info.config_yaml);
  attr_string(root, "config_source", r.info.source);
  attr_scalar<std::int64_t>(root, "replicates", r.info.replicates);
  attr_scalar<std::int64_t>(root, "block_size", r.info.block_size);
  attr_scalar<double>(root, "max_failure_fraction", r.info.max_failure_fraction);
  attr_string(root, "study_fingerprint", hex_key(r.info.fingerprint));
  attr_scalar<std::int64_t>(root, "shard_index", r.info.shard_index);
  attr_scalar<std::int64_t>(root, "shard_count", r.info.shard_count);
  attr_scalar<std::uint8_t>(root, "complete", r.info.complete ? 1 : 0);
  attr_strings(root, "parameters", r.parameter_names);
  std::vector<std::string> types;
  for (auto t : r.parameter_types) types.push_back(parameter_type_name(t));
  attr_strings(root, "parameter_types", types);
  attr_strings(root, "data_factors", r.data_factors);
  // Parameters left out of the cell keys at their defaults (ParameterSpec::keyed_at_default), as
  // "name=canonical default": a reader rebuilds the cells' keys from them. Absent when there are none.
  if (!r.cells.empty() && !r.cells.front().unkeyed_defaults().empty()) {
    std::vector<std::string> unkeyed;
    for (const auto& [name, text] : r.cells.front().unkeyed_defaults()) unkeyed.push_back(name + "=" + text);
    attr_strings(root, "unkeyed_defaults", unkeyed);
  }
  std::vector<std::string> metric_names;
  for (const auto& m : r.metrics) metric_names.push_back(m.name);
  attr_strings(root, "metrics", metric_names);
}

/// /cells: one value per cell of every parameter, the stream keys and the canonical key.
void write_cells(H5::H5File& file, const StudyResults& r) {
  const std::size_t C = r.cells.size();
  H5::Group cells = file.createGroup("cells");
  for (std::size_t p = 0; p < r.parameter_names.size(); ++p) {
    const auto& name = r.parameter_names[p];
    switch (r.parameter_types[p]) {
      case ParameterType::integer: {
        std::vector<std::int64_t> v;
        for (const auto& c : r.cells) v.push_back(c.get_int(name));
        dataset(cells, name, {C}, v.data());
        break;
      }
      case ParameterType::real: {
        std::vector<double> v;
        for (const auto& c : r.cells) v.push_back(c.get_double(name));
        dataset(cells, name, {C}, v.data());
        break;
      }
      case ParameterType::string: {
        std::vector<std::string> v;
        for (const auto& c : r.cells) v.push_back(c.get_string(name));
        string_dataset(cells, name, v);
        break;
      }
      case ParameterType::integer_list:
      case ParameterType::real_list:
      case ParameterType::string_list: {  // the canonical text of the list (docs/results-schema.md)
        std::vector<std::string> v;
        for (const auto& c : r.cells) v.push_back(format_parameter_value(c.get(name)));
        string_dataset(cells, name, v);
        break;
      }
    }
  }
  std::vector<std::uint64_t> ids, data_ids;
  std::vector<std::string> keys, id_keys, data_id_keys;
  for (const auto& c : r.cells) {
    ids.push_back(c.cell_id());
    data_ids.push_back(c.data_id());
    keys.push_back(c.key());
    id_keys.push_back(hex_key(c.cell_id()));
    data_id_keys.push_back(hex_key(c.data_id()));
  }
  dataset(cells, "cell_id", {C}, ids.data());
  dataset(cells, "data_id", {C}, data_ids.data());
  string_dataset(cells, "cell_key", id_keys);
  string_dataset(cells, "data_key", data_id_keys);
  string_dataset(cells, "key", keys);
}

/// /cell_status and /replicates_done.
void write_cell_status(H5::H5File& file, const StudyResults& r) {
  const std::size_t C = r.cells.size();
  const auto R = static_cast<std::size_t>(r.info.replicates);
  H5::Group status = file.createGroup("cell_status");
  std::vector<std::int64_t> n_done(C), n_failed(C);
  std::vector<std::uint8_t> complete(C), failed(C);
  std::vector<double> wall(C);
  for (std::size_t c = 0; c < C; ++c) {
    n_done[c] = r.n_done(c);
    n_failed[c] = r.n_failed(c);
    complete[c] = n_done[c] == r.info.replicates ? 1 : 0;
    failed[c] = r.cell_failed(c) ? 1 : 0;
    wall[c] = r.cell_results[c].wall_seconds;
  }
  dataset(status, "n_done", {C}, n_done.data());
  dataset(status, "n_failed", {C}, n_failed.data());
  dataset(status, "complete", {C}, complete.data());
  dataset(status, "failed", {C}, failed.data());
  dataset(status, "wall_seconds", {C}, wall.data());

  std::vector<std::uint8_t> done(C * R);
  for (std::size_t c = 0; c < C; ++c) std::copy_n(r.cell_results[c].done.begin(), R, done.begin() + c * R);
  H5::Group root = file.openGroup("/");
  dataset(root, "replicates_done", {C, R}, done.data());
}

/// /replicates/<metric> (with its description), and for a vector metric /metric_sizes/<metric>
/// and /component_labels/<metric>.
void write_metric_values(H5::Group& reps, H5::Group& sizes, H5::Group& labels, const StudyResults& r, std::size_t m) {
  const std::size_t C = r.cells.size();
  const auto R = static_cast<std::size_t>(r.info.replicates);
  const auto& ml = r.metrics[m];
  const std::size_t K = ml.max_size;
  std::vector<double> buf(C * R * K, kNaN);
  for (std::size_t c = 0; c < C; ++c) {
    const auto& cr = r.cell_results[c];
    const std::size_t off = r.offset(c, m);
    for (std::size_t i = 0; i < R; ++i) {
      for (std::size_t k = 0; k < ml.sizes[c]; ++k) buf[(c * R + i) * K + k] = cr.values[i * cr.width + off + k];
    }
  }
  std::vector<hsize_t> dims = ml.is_vector ? std::vector<hsize_t>{C, R, K} : std::vector<hsize_t>{C, R};
  dataset(reps, ml.name, dims, buf.data());
  auto ds = reps.openDataSet(ml.name);
  attr_string(ds, "description", ml.description);
  if (!ml.is_vector) return;
  std::vector<std::int64_t> s(ml.sizes.begin(), ml.sizes.end());
  dataset(sizes, ml.name, {C}, s.data());
  std::vector<std::string> text(C * K);
  for (std::size_t c = 0; c < C; ++c)
    for (std::size_t k = 0; k < ml.sizes[c]; ++k) text[c * K + k] = ml.component_label(c, k);
  string_dataset(labels, ml.name, text, {C, K});
}

/// /summary/<metric>/{mean, ..., n_ok, n_nan}: [cells] or [cells, K].
void write_metric_summary(H5::Group& summary, const StudyResults& r, std::size_t m) {
  const std::size_t C = r.cells.size();
  const auto& ml = r.metrics[m];
  const std::size_t K = ml.max_size;
  H5::Group g = summary.createGroup(ml.name);
  std::vector<double> mean(C * K, kNaN), sd(C * K, kNaN), mcse(C * K, kNaN), q025(C * K, kNaN), q250(C * K, kNaN),
      q500(C * K, kNaN), q750(C * K, kNaN), q975(C * K, kNaN);
  std::vector<std::int64_t> n_ok(C * K, 0), n_nan(C * K, 0);
  for (std::size_t c = 0; c < C; ++c) {
    for (std::size_t k = 0; k < ml.sizes[c]; ++k) {
      const Summary s = summarize_component(r, c, m, k);
      const std::size_t j = c * K + k;
      mean[j] = s.mean, sd[j] = s.sd, mcse[j] = s.mcse, q025[j] = s.q025, q250[j] = s.q250, q500[j] = s.q500,
      q750[j] = s.q750, q975[j] = s.q975, n_ok[j] = s.n_ok, n_nan[j] = s.n - s.n_ok;
    }
  }
  std::vector<hsize_t> sdims = ml.is_vector ? std::vector<hsize_t>{C, K} : std::vector<hsize_t>{C};
  dataset(g, "mean", sdims, mean.data());
  dataset(g, "sd", sdims, sd.data());
  dataset(g, "mcse", sdims, mcse.data());
  dataset(g, "q025", sdims, q025.data());
  dataset(g, "q250", sdims, q250.data());
  dataset(g, "q500", sdims, q500.data());
  dataset(g, "q750", sdims, q750.data());
  dataset(g, "q975", sdims, q975.data());
  dataset(g, "n_ok", sdims, n_ok.data());
  dataset(g, "n_nan", sdims, n_nan.data());
}

/// /replicates, /metric_sizes, /component_labels and /summary, metric by metric.
void write_metrics(H5::H5File& file, const StudyResults& r) {
  H5::Group reps = file.createGroup("replicates");
  H5::Group sizes = file.createGroup("metric_sizes");
  H5::Group labels = file.createGroup("component_labels");
  H5::Group summary = file.createGroup("summary");
  for (std::size_t m = 0; m < r.metrics.size(); ++m) {
    write_metric_values(reps, sizes, labels, r, m);
    write_metric_summary(summary, r, m);
  }
}

/// /calibration/<name> [C, K] and /calibration_sizes/<name> [C].
void write_calibration(H5::H5File& file, const StudyResults& r) {
  const std::size_t C = r.cells.size();
  H5::Group cal = file.createGroup("calibration");
  H5::Group cal_sizes = file.createGroup("calibration_sizes");
  std::vector<std::string> names;
  for (const auto& cell_cal : r.calibration)
    for (const auto& [name, v] : cell_cal)
      if (std::find(names.begin(), names.end(), name) == names.end()) names.push_back(name);
  for (const auto& name : names) {
    std::size_t K = 1;
    std::vector<std::int64_t> size(C, 0);
    for (std::size_t c = 0; c < r.calibration.size(); ++c)
      for (const auto& [n, v] : r.calibration[c])
        if (n == name) K = std::max(K, v.size()), size[c] = static_cast<std::int64_t>(v.size());
    std::vector<double> buf(C * K, kNaN);
    for (std::size_t c = 0; c < r.calibration.size(); ++c)
      for (const auto& [n, v] : r.calibration[c])
        if (n == name) std::copy(v.begin(), v.end(), buf.begin() + static_cast<std::ptrdiff_t>(c * K));
    dataset(cal, name, {C, K}, buf.data());
    dataset(cal_sizes, name, {C}, size.data());
  }
}

/// /errors: one entry per failed replicate (or failed prepare).
void write_errors(H5::H5File& file, const StudyResults& r) {
  H5::Group errs = file.createGroup("errors");
  std::vector<std::uint64_t> ecell, ecell_id, erep;
  std::vector<std::string> ecell_key, estage, emsg;
  for (const auto& e : r.errors) {
    ecell.push_back(e.cell);
    ecell_id.push_back(r.cells.at(e.cell).cell_id());
    ecell_key.push_back(hex_key(r.cells.at(e.cell).cell_id()));
    erep.push_back(e.replicate);
    estage.push_back(e.stage);
    emsg.push_back(e.message);
  }
  const hsize_t E = r.errors.size();
  dataset(errs, "cell", {E}, ecell.data());
  dataset(errs, "cell_id", {E}, ecell_id.data());
  string_dataset(errs, "cell_key", ecell_key);
  dataset(errs, "replicate", {E}, erep.data());
  string_dataset(errs, "stage", estage);
  string_dataset(errs, "message", emsg);
}

/// The bytes of an open in-memory (core driver) file, after flushing it.
std::vector<char> file_image(H5::H5File& file) {
  file.flush(H5F_SCOPE_GLOBAL);
  const ssize_t size = H5Fget_file_image(file.getId(), nullptr, 0);
  if (size < 0) throw H5::FileIException("H5Fget_file_image", "cannot get the size of the file image");
  std::vector<char> image(static_cast<std::size_t>(size));
  if (H5Fget_file_image(file.getId(), image.data(), image.size()) != size) {
    throw H5::FileIException("H5Fget_file_image", "cannot copy the file image");
  }
  return image;
}

/// Read back every numeric dataset of a just-written results file, one at a time (decompressing
/// and checking each chunk's Fletcher-32), after its whole-file SHA-256 has been checked: the
/// verification of write_results without a second copy of the results in memory. Strings and
/// attributes are covered by the SHA-256 and the HDF5 1.10 metadata checksums.
/// @throws std::runtime_error naming the file and what failed.
void verify_written_file(const std::filesystem::path& path) {
  if (check_file_checksum(path) != FileChecksum::verified) {
    throw std::runtime_error(fmt::format("{}: the written file does not match its checksum", path.string()));
  }
  H5::H5File file(path.string(), H5F_ACC_RDONLY);
  std::vector<unsigned char> buf;
  std::function<void(const H5::Group&)> walk = [&](const H5::Group& g) {
    for (hsize_t i = 0; i < g.getNumObjs(); ++i) {
      const std::string name = g.getObjnameByIdx(i);
      const H5G_obj_t type = g.getObjTypeByIdx(i);
      if (type == H5G_GROUP) {
        walk(g.openGroup(name));
      } else if (type == H5G_DATASET) {
        H5::DataSet ds = g.openDataSet(name);
        const H5T_class_t cls = ds.getTypeClass();
        if (cls != H5T_FLOAT && cls != H5T_INTEGER) continue;
        const H5::DataType t = ds.getDataType();
        const hssize_t count = ds.getSpace().getSimpleExtentNpoints();
        if (count <= 0) continue;
        buf.resize(static_cast<std::size_t>(count) * t.getSize());
        ds.read(buf.data(), t);
      }
    }
  };
  walk(file.openGroup("/"));
}

}  // namespace

void write_results(const std::filesystem::path& path, const StudyResults& r) {
  capture_hdf5_errors();
  const std::filesystem::path tmp = path.string() + fmt::format(".tmp-{}", ::getpid());
  std::vector<char> image;
  try {
    // The file is built in memory (HDF5's core driver, no backing store) and written below with
    // write(2): a full disk or a file-size limit is then one clear error, never a failure inside
    // HDF5's own I/O (which left half-closed files and crashed). Format 1.10: every piece of
    // metadata carries a checksum.
    H5::FileAccPropList fapl;
    fapl.setCore(std::size_t{1} << 20, false);
    fapl.setLibverBounds(H5F_LIBVER_V110, H5F_LIBVER_V110);
    H5::FileCreatPropList fcpl;
    fcpl.setUserblock(kUserBlock);  // for the whole-file checksum (file_checksum_block)
    H5::H5File file(tmp.string(), H5F_ACC_TRUNC, fcpl, fapl);
    H5::Group root = file.openGroup("/");
    write_root_attributes(root, r);
    write_cells(file, r);
    write_cell_status(file, r);
    write_metrics(file, r);
    write_calibration(file, r);
    write_errors(file, r);
    image = file_image(file);
    file.close();
  } catch (const H5::Exception& e) {
    throw std::runtime_error(fmt::format("{}: cannot write the results file: {}", path.string(), hdf5_reason(e)));
  }
  fix_superblock_checksum(image, 0);
  // Before it replaces anything, the file on disk is read back with every checksum verified:
  // its SHA-256, then every numeric dataset one at a time (no second copy of the results).
  write_file_atomically(path, tmp, file_checksum_block(image), image, [&] {
    std::vector<char>().swap(image);
    try {
      verify_written_file(tmp);
    } catch (const H5::Exception& e) {
      throw std::runtime_error(
          fmt::format("{}: the written file does not read back: {}", path.string(), hdf5_reason(e)));
    }
  });
}

StudyResults read_results(const std::filesystem::path& path) {
  capture_hdf5_errors();
  if (!std::filesystem::exists(path)) throw std::runtime_error(fmt::format("{}: no such file", path.string()));
  StudyResults r;
  auto damaged = [&](const std::string& what) {
    return std::runtime_error(
        fmt::format("{}: the results file is damaged ({}); it cannot be used: restore it from a "
                    "copy or run the study again",
                    path.string(), what));
  };
  switch (check_file_checksum(path)) {
    case FileChecksum::mismatch:
      throw damaged("its SHA-256 does not match the one stored when it was written");
    case FileChecksum::damaged_header:
      if (H5::H5File::isHdf5(path.string())) {
        throw damaged("the checksum header at its start is not intact, or it was not written by dpmu");
      }
      break;  // not an HDF5 file at all: said below
    default:
      break;
  }
  try {
    if (!H5::H5File::isHdf5(path.string())) {
      throw std::runtime_error(fmt::format("{}: not an HDF5 file (or its first bytes are damaged)", path.string()));
    }
    H5::H5File file(path.string(), H5F_ACC_RDONLY);
    H5::Group root = file.openGroup("/");
    if (!root.attrExists("filetype") || read_attr_string(root, "filetype") != "dpmu-results") {
      throw std::runtime_error(
          fmt::format("{}: not a dpmu results file (no filetype = \"dpmu-results\")", path.string()));
    }
    int version[2] = {0, 0};
    root.openAttribute("schema_version").read(H5::PredType::NATIVE_INT, version);
    if (version[0] < kOldestSchemaMajor || version[0] > kSchemaMajor) {
      throw std::runtime_error(
          fmt::format("{}: schema version {}.{} is not supported (this dpmu reads {}.x to {}.x){}", path.string(),
                      version[0], version[1], kOldestSchemaMajor, kSchemaMajor,
                      version[0] > kSchemaMajor ? "; read it with the newer dpmu that wrote it" : ""));
    }
    auto& in = r.info;
    if (root.attrExists("data_files")) {
      const auto paths = read_attr_strings(root, "data_files");
      const auto digests = read_attr_strings(root, "data_sha256");
      if (paths.size() != digests.size()) throw damaged("data_files and data_sha256 differ in length");
      for (std::size_t i = 0; i < paths.size(); ++i) in.data_files.push_back({paths[i], digests[i], ""});
    }
    in.config_yaml = read_attr_string(root, "config_yaml");
    in.source = read_attr_string(root, "config_source");
    in.experiment = read_attr_string(root, "experiment");
    in.description = read_attr_string(root, "description");
    in.master_seed = read_attr_scalar<std::uint64_t>(root, "master_seed");
    in.replicates = read_attr_scalar<std::int64_t>(root, "replicates");
    in.block_size = read_attr_scalar<std::int64_t>(root, "block_size");
    in.max_failure_fraction = read_attr_scalar<double>(root, "max_failure_fraction");
    in.fingerprint = std::stoull(read_attr_string(root, "study_fingerprint"), nullptr, 16);
    in.shard_index = read_attr_scalar<std::int64_t>(root, "shard_index");
    in.shard_count = read_attr_scalar<std::int64_t>(root, "shard_count");
    in.complete = read_attr_scalar<std::uint8_t>(root, "complete") != 0;
    in.dpmu_version = read_attr_string(root, "dpmu_version");
    in.git_sha = read_attr_string(root, "git_sha");
    in.started_utc = read_attr_string(root, "started_utc");
    in.finished_utc = read_attr_string(root, "finished_utc");
    r.parameter_names = read_attr_strings(root, "parameters");
    for (const auto& t : read_attr_strings(root, "parameter_types")) r.parameter_types.push_back(type_from_name(t));
    r.data_factors = read_attr_strings(root, "data_factors");
    const auto metric_names = read_attr_strings(root, "metrics");

    H5::Group cells = file.openGroup("cells");
    const auto ids = read_dataset<std::uint64_t>(cells, "cell_id");
    const std::size_t C = ids.size();
    if (in.replicates < 1 || in.block_size < 1 || r.parameter_types.size() != r.parameter_names.size()) {
      throw damaged(fmt::format("replicates = {}, block_size = {}", in.replicates, in.block_size));
    }
    const auto R = static_cast<std::size_t>(in.replicates);
    auto need = [&](std::size_t got, std::size_t want, const std::string& what) {
      if (got != want) throw damaged(fmt::format("{} has {} values where the file's shape needs {}", what, got, want));
    };
    std::vector<std::vector<std::pair<std::string, ParameterValue>>> values(C);
    for (std::size_t p = 0; p < r.parameter_names.size(); ++p) {
      const auto& name = r.parameter_names[p];
      switch (r.parameter_types[p]) {
        case ParameterType::integer: {
          auto v = read_dataset<std::int64_t>(cells, name);
          need(v.size(), C, "/cells/" + name);
          for (std::size_t c = 0; c < C; ++c) values[c].emplace_back(name, v[c]);
          break;
        }
        case ParameterType::real: {
          auto v = read_dataset<double>(cells, name);
          need(v.size(), C, "/cells/" + name);
          for (std::size_t c = 0; c < C; ++c) values[c].emplace_back(name, v[c]);
          break;
        }
        case ParameterType::string: {
          auto v = read_string_dataset(cells, name);
          need(v.size(), C, "/cells/" + name);
          for (std::size_t c = 0; c < C; ++c) values[c].emplace_back(name, v[c]);
          break;
        }
        case ParameterType::integer_list:
        case ParameterType::real_list:
        case ParameterType::string_list: {
          auto v = read_string_dataset(cells, name);
          need(v.size(), C, "/cells/" + name);
          for (std::size_t c = 0; c < C; ++c) {
            try {
              values[c].emplace_back(name, parse_list_value(r.parameter_types[p], v[c]));
            } catch (const std::invalid_argument& e) {
              throw damaged(fmt::format("/cells/{}: {}", name, e.what()));
            }
          }
          break;
        }
      }
    }
    std::vector<std::pair<std::string, std::string>> unkeyed;
    for (const auto& item : read_attr_strings(root, "unkeyed_defaults")) {
      const auto eq = item.find('=');
      if (eq == std::string::npos || eq == 0) throw damaged(fmt::format("unkeyed_defaults item '{}'", item));
      unkeyed.emplace_back(item.substr(0, eq), item.substr(eq + 1));
    }
    for (std::size_t c = 0; c < C; ++c) r.cells.emplace_back(std::move(values[c]), r.data_factors, unkeyed);
    // The keys rebuilt from the values must be the keys the file was written with.
    for (std::size_t c = 0; c < C; ++c) {
      if (r.cells[c].cell_id() != ids[c]) {
        throw damaged(fmt::format("/cells/cell_id[{}] is {:016x}, but the cell's parameters give {:016x}", c, ids[c],
                                  r.cells[c].cell_id()));
      }
    }

    H5::Group status = file.openGroup("cell_status");
    const auto wall = read_dataset<double>(status, "wall_seconds");
    const auto done = read_dataset<std::uint8_t>(root, "replicates_done");
    need(wall.size(), C, "/cell_status/wall_seconds");
    need(done.size(), C * R, "/replicates_done");
    H5::Group reps = file.openGroup("replicates");
    H5::Group sizes = file.openGroup("metric_sizes");
    // The layout of every metric first, then one metric's values at a time (so that reading needs
    // the memory of the results plus one dataset, not twice the results).
    for (const auto& name : metric_names) {
      MetricLayout ml;
      ml.name = name;
      const auto ds = reps.openDataSet(name);
      const auto space = ds.getSpace();
      std::vector<hsize_t> dims(static_cast<std::size_t>(space.getSimpleExtentNdims()));
      if (!dims.empty()) space.getSimpleExtentDims(dims.data());
      ml.is_vector = dims.size() == 3;
      ml.max_size = ml.is_vector ? dims[2] : 1;
      if (dims.size() < 2 || dims[0] != C || dims[1] != R)
        throw damaged("/replicates/" + name + " has the wrong shape");
      ml.description = read_attr_string(ds, "description");
      if (ml.is_vector) {
        for (auto s : read_dataset<std::int64_t>(sizes, name)) {
          if (s < 0 || static_cast<std::size_t>(s) > ml.max_size)
            throw damaged("/metric_sizes/" + name + " is out of range");
          ml.sizes.push_back(static_cast<std::size_t>(s));
        }
        need(ml.sizes.size(), C, "/metric_sizes/" + name);
        if (file.nameExists("component_labels") && file.openGroup("component_labels").nameExists(name)) {
          const auto text = read_string_dataset(file.openGroup("component_labels"), name);
          need(text.size(), C * ml.max_size, "/component_labels/" + name);
          for (std::size_t c = 0; c < C; ++c) {
            const auto first = text.begin() + static_cast<std::ptrdiff_t>(c * ml.max_size);
            ml.component_labels.emplace_back(first, first + static_cast<std::ptrdiff_t>(ml.sizes[c]));
          }
        }  // else (before schema 2.0): component_label() gives the index
      } else {
        ml.sizes.assign(C, 1);
      }
      r.metrics.push_back(std::move(ml));
    }
    for (std::size_t c = 0; c < C; ++c) {
      CellResults cr;
      for (const auto& ml : r.metrics) cr.width += ml.sizes[c];
      cr.values.assign(R * cr.width, kNaN);
      cr.done.assign(done.begin() + c * R, done.begin() + (c + 1) * R);
      cr.wall_seconds = wall[c];
      r.cell_results.push_back(std::move(cr));
    }
    for (std::size_t m = 0; m < r.metrics.size(); ++m) {
      const auto& ml = r.metrics[m];
      const std::vector<double> raw = read_dataset<double>(reps, ml.name);
      need(raw.size(), C * R * ml.max_size, "/replicates/" + ml.name);
      for (std::size_t c = 0; c < C; ++c) {
        auto& cr = r.cell_results[c];
        const std::size_t off = r.offset(c, m);
        for (std::size_t i = 0; i < R; ++i) {
          for (std::size_t k = 0; k < ml.sizes[c]; ++k) {
            cr.values[i * cr.width + off + k] = raw[(c * R + i) * ml.max_size + k];
          }
        }
      }
    }
    r.calibration.assign(C, {});
    if (file.nameExists("calibration")) {
      H5::Group cal = file.openGroup("calibration");
      H5::Group cal_sizes = file.openGroup("calibration_sizes");
      for (hsize_t i = 0; i < cal.getNumObjs(); ++i) {
        const std::string name = cal.getObjnameByIdx(i);
        std::vector<hsize_t> dims;
        const auto v = read_dataset<double>(cal, name, &dims);
        const auto size = read_dataset<std::int64_t>(cal_sizes, name);
        need(size.size(), C, "/calibration_sizes/" + name);
        if (dims.size() != 2 || dims[0] != C) throw damaged("/calibration/" + name + " has the wrong shape");
        for (std::size_t c = 0; c < C; ++c) {
          if (size[c] < 0 || static_cast<hsize_t>(size[c]) > dims[1])
            throw damaged("/calibration_sizes/" + name + " is out of range");
          if (size[c] == 0) continue;
          r.calibration[c].emplace_back(
              name, std::vector<double>(v.begin() + static_cast<std::ptrdiff_t>(c * dims[1]),
                                        v.begin() + static_cast<std::ptrdiff_t>(c * dims[1] + size[c])));
        }
      }
    }
    H5::Group errs = file.openGroup("errors");
    const auto ecell = read_dataset<std::uint64_t>(errs, "cell");
    const auto erep = read_dataset<std::uint64_t>(errs, "replicate");
    const auto estage = read_string_dataset(errs, "stage");
    const auto emsg = read_string_dataset(errs, "message");
    need(erep.size(), ecell.size(), "/errors/replicate");
    need(estage.size(), ecell.size(), "/errors/stage");
    need(emsg.size(), ecell.size(), "/errors/message");
    for (std::size_t i = 0; i < ecell.size(); ++i) {
      if (ecell[i] >= C || erep[i] >= R)
        throw damaged(fmt::format("/errors entry {} names no replicate of the study", i));
      r.errors.push_back({ecell[i], erep[i], estage[i], emsg[i]});
    }
  } catch (const H5::Exception& e) {
    const std::string reason = hdf5_reason(e);
    if (looks_damaged(reason)) throw damaged("HDF5: " + reason);
    throw std::runtime_error(
        fmt::format("{}: cannot read the results file (damaged, or not written by dpmu): {}", path.string(), reason));
  } catch (const std::logic_error& e) {  // a size or number that cannot be (std::length_error, std::stoull)
    throw damaged(std::string("an impossible value: ") + e.what());
  }
  return r;
}

}  // namespace dpmu::runtime
