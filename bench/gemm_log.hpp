#pragma once
// The sgemm calls a workload made, as a file: bench_lesson --record-gemm and the preloaded
// bench/gemm_shim.cpp write it, bench/sgemm_lesson reads it and makes the same calls alone. Buffers are numbered in the
// order the workload first touched them, each with the largest extent it used, so the
// replay moves the same bytes through the caches. Binary, native byte order (a file made
// and read on one machine):
//   "MDLGEMM1", int64 buffers, int64 extent[buffers], int64 calls, then per call
//   uint8 transpose_a, uint8 transpose_b, int64 m, n, k, float beta, int64 a, b, c (buffer ids).
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

namespace minidl::bench {

struct LoggedGemm {
  bool transpose_a, transpose_b;
  int64_t m, n, k;
  float beta;
  int64_t a, b, c;  // buffer ids
};

struct GemmLog {
  std::vector<int64_t> extents;  // (buffers) floats used from each buffer
  std::vector<LoggedGemm> calls;
};

namespace detail {
constexpr char kGemmLogMagic[8] = {'M', 'D', 'L', 'G', 'E', 'M', 'M', '1'};

template <typename T>
void put(std::FILE* f, const T& v) {
  if (std::fwrite(&v, sizeof v, 1, f) != 1) throw std::runtime_error("gemm log: write failed");
}
template <typename T>
T get(std::FILE* f, const std::string& path) {
  T v{};
  if (std::fread(&v, sizeof v, 1, f) != 1) throw std::runtime_error("gemm log " + path + ": truncated");
  return v;
}
}  // namespace detail

/// Numbers the buffers of calls (given by address, as GemmRecorder logs them).
/// Templated on the call type so that this header needs nothing of the library. A call type
/// with a `contiguous` flag may log strided operands (attention's heads, columns of a packed
/// (B, T, 3C) buffer): such an operand lying inside a buffer already numbered is replayed at
/// that buffer's start, contiguous, with the same sizes: the same arithmetic on no more
/// memory than the workload touched.
template <typename Call>
GemmLog make_gemm_log(const std::vector<Call>& calls) {
  GemmLog log;
  std::map<const float*, int64_t> ids;  // workload address -> buffer id
  auto id = [&](const float* address, int64_t count) {
    auto [it, fresh] = ids.emplace(address, int64_t(log.extents.size()));
    if (fresh) log.extents.push_back(0);
    log.extents[size_t(it->second)] = std::max(log.extents[size_t(it->second)], count);
    return it->second;
  };
  auto id_within = [&](const float* address, int64_t count) {
    auto it = ids.upper_bound(address);
    if (it == ids.begin()) return id(address, count);
    --it;
    if (address >= it->first + log.extents[size_t(it->second)]) return id(address, count);
    log.extents[size_t(it->second)] = std::max(log.extents[size_t(it->second)], count);
    return it->second;
  };
  for (const Call& c : calls) {
    bool contiguous = true;
    if constexpr (requires { c.contiguous; }) contiguous = c.contiguous;
    const auto operand = [&](const float* address, int64_t count) {
      return contiguous ? id(address, count) : id_within(address, count);
    };
    log.calls.push_back({c.transpose_a, c.transpose_b, c.m, c.n, c.k, c.beta, operand(c.a, c.m * c.k),
                         operand(c.b, c.k * c.n), operand(c.c, c.m * c.n)});
  }
  return log;
}

inline void write_gemm_log(const GemmLog& log, const std::string& path) {
  std::FILE* f = std::fopen(path.c_str(), "wb");
  if (f == nullptr) throw std::runtime_error("gemm log: cannot write " + path);
  std::fwrite(detail::kGemmLogMagic, 1, sizeof detail::kGemmLogMagic, f);
  detail::put(f, int64_t(log.extents.size()));
  for (int64_t e : log.extents) detail::put(f, e);
  detail::put(f, int64_t(log.calls.size()));
  for (const LoggedGemm& c : log.calls) {
    detail::put(f, uint8_t(c.transpose_a));
    detail::put(f, uint8_t(c.transpose_b));
    for (int64_t v : {c.m, c.n, c.k}) detail::put(f, v);
    detail::put(f, c.beta);
    for (int64_t v : {c.a, c.b, c.c}) detail::put(f, v);
  }
  if (std::fclose(f) != 0) throw std::runtime_error("gemm log: cannot write " + path);
}

inline GemmLog read_gemm_log(const std::string& path) {
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (f == nullptr) throw std::runtime_error("gemm log: cannot read " + path);
  char magic[sizeof detail::kGemmLogMagic];
  GemmLog log;
  try {
    if (std::fread(magic, 1, sizeof magic, f) != sizeof magic ||
        std::memcmp(magic, detail::kGemmLogMagic, sizeof magic))
      throw std::runtime_error("gemm log " + path + ": not a gemm log (expected MDLGEMM1 first)");
    log.extents.resize(size_t(detail::get<int64_t>(f, path)));
    for (int64_t& e : log.extents) e = detail::get<int64_t>(f, path);
    log.calls.resize(size_t(detail::get<int64_t>(f, path)));
    for (LoggedGemm& c : log.calls) {
      c.transpose_a = detail::get<uint8_t>(f, path) != 0;
      c.transpose_b = detail::get<uint8_t>(f, path) != 0;
      c.m = detail::get<int64_t>(f, path);
      c.n = detail::get<int64_t>(f, path);
      c.k = detail::get<int64_t>(f, path);
      c.beta = detail::get<float>(f, path);
      c.a = detail::get<int64_t>(f, path);
      c.b = detail::get<int64_t>(f, path);
      c.c = detail::get<int64_t>(f, path);
      const auto buffers = int64_t(log.extents.size());
      if (c.a < 0 || c.a >= buffers || c.b < 0 || c.b >= buffers || c.c < 0 || c.c >= buffers)
        throw std::runtime_error("gemm log " + path + ": a buffer id out of range");
    }
  } catch (...) {
    std::fclose(f);
    throw;
  }
  std::fclose(f);
  return log;
}

}  // namespace minidl::bench
