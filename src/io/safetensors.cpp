#include "minidl/io/safetensors.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "minidl/io/atomic_file.hpp"
#include "minidl/tensor/error.hpp"

namespace minidl::io {

namespace {

using nlohmann::json;
using nlohmann::ordered_json;

static_assert(std::endian::native == std::endian::little, "safetensors data is little-endian; add byte swaps");

// The safetensors library refuses headers above 100 MB; so do we, before allocating.
constexpr uint64_t kMaxHeaderBytes = 100'000'000;

const char* dtype_name(nn::DType dtype) { return dtype == nn::DType::I64 ? "I64" : "F32"; }

void append_bytes(std::string& out, const void* data, size_t size) { out.append(static_cast<const char*>(data), size); }

void append_data(std::string& out, const nn::StateEntry& entry) {
  const float* values = entry.value.data();
  const int64_t n = entry.value.numel();
  if (entry.dtype == DType::F32) return append_bytes(out, values, size_t(n) * sizeof(float));
  for (int64_t i = 0; i < n; ++i) {
    const float v = values[i];
    if (!std::isfinite(v) || v != std::nearbyint(v))
      throw Error(
          cat("save_safetensors: entry ", entry.name, " is stored as I64 but holds ", v, ", which is not an integer"));
    const auto as_int = int64_t(v);
    append_bytes(out, &as_int, sizeof(as_int));
  }
}

}  // namespace

void save_safetensors(const std::string& path, const nn::StateDict& state) { save_safetensors(path, state, {}); }

void save_safetensors(const std::string& path, const nn::StateDict& state, const Metadata& metadata) {
  ordered_json header = ordered_json::object();
  if (!metadata.empty()) header["__metadata__"] = metadata;
  std::string data;
  std::set<std::string> names;
  for (const nn::StateEntry& entry : state) {
    if (!names.insert(entry.name).second)
      throw Error(cat("save_safetensors: ", path, ": the name ", entry.name, " appears twice in the state dict"));
    const size_t begin = data.size();
    append_data(data, entry);
    header[entry.name] = {
        {"dtype", dtype_name(entry.dtype)}, {"shape", entry.value.shape()}, {"data_offsets", {begin, data.size()}}};
  }
  std::string text = header.dump();
  text.append((8 - text.size() % 8) % 8, ' ');  // align the data to 8 bytes, as safetensors does
  const uint64_t header_size = text.size();
  std::string file;
  file.reserve(8 + text.size() + data.size());
  append_bytes(file, &header_size, sizeof(header_size));
  file += text;
  file += data;
  write_file_atomically(path, file);
}

namespace {

// Reads and checks one file; every failure names the file.
class Reader {
 public:
  // `in` holds the file's bytes; `path` names it in messages.
  Reader(const std::string& path, std::istream& in) : path_(path), in_(in) {
    in_.seekg(0, std::ios::end);
    file_size_ = uint64_t(in_.tellg());
    in_.seekg(0);
  }

  const Metadata& metadata() const { return metadata_; }

  nn::StateDict read() {
    if (file_size_ < 8)
      fail(cat("truncated: the file has ", file_size_, " bytes, fewer than the 8-byte header length"));
    uint64_t header_size = 0;
    read_bytes(&header_size, 8);
    if (header_size > kMaxHeaderBytes)
      fail(cat("the header length ", header_size, " is absurd (the limit is ", kMaxHeaderBytes,
               " bytes): not a safetensors file or corrupt"));
    if (header_size > file_size_ - 8)
      fail(cat("truncated or corrupt: the header length ", header_size, " runs past the end of the file (", file_size_,
               " bytes)"));
    std::string text(header_size, '\0');
    read_bytes(text.data(), header_size);
    data_size_ = file_size_ - 8 - header_size;
    std::vector<Slot> slots = parse_header(text);
    check_layout(slots);
    return read_data(slots);
  }

 private:
  // How an entry's values are stored in the file; all but I64 load as float32 entries.
  enum class Stored { F32, I64, F64, F16, BF16 };
  static size_t stored_size(Stored s) { return s == Stored::I64 || s == Stored::F64 ? 8 : s == Stored::F32 ? 4 : 2; }

  struct Slot {
    std::string name;
    Stored stored;
    Shape shape;
    uint64_t begin, end;
  };

  [[noreturn]] void fail(const std::string& what) const { throw UsageError(cat(path_, ": ", what)); }

  void read_bytes(void* out, uint64_t size) {
    in_.read(static_cast<char*>(out), std::streamsize(size));
    if (!in_) fail("could not read the file (truncated while reading?)");
  }

  std::vector<Slot> parse_header(const std::string& text) {
    json header;
    try {
      header = json::parse(text);
    } catch (const json::exception& e) {
      fail(cat("the header is not valid JSON (corrupt file?): ", e.what()));
    }
    if (!header.is_object()) fail("the header is not a JSON object");
    std::vector<Slot> slots;
    for (const auto& [name, info] : header.items()) {
      if (name == "__metadata__") {
        read_metadata(info);
        continue;
      }
      slots.push_back(parse_slot(name, info));
    }
    return slots;
  }

  void read_metadata(const json& info) {
    if (!info.is_object()) fail("__metadata__ is not a JSON object");
    for (const auto& [key, value] : info.items()) {
      if (!value.is_string()) fail(cat("__metadata__ entry \"", key, "\" is not a string"));
      metadata_[key] = value.get<std::string>();
    }
  }

  Slot parse_slot(const std::string& name, const json& info) const {
    auto bad = [&](const std::string& what) { fail(cat("entry \"", name, "\": ", what)); };
    if (!info.is_object()) bad("expected an object with dtype, shape and data_offsets");
    for (const char* key : {"dtype", "shape", "data_offsets"})
      if (!info.contains(key)) bad(cat("the field \"", key, "\" is missing"));
    Slot slot{name, Stored::F32, {}, 0, 0};
    const json& dtype = info["dtype"];
    const std::pair<const char*, Stored> known[] = {
        {"F32", Stored::F32}, {"I64", Stored::I64}, {"F64", Stored::F64}, {"F16", Stored::F16}, {"BF16", Stored::BF16}};
    const auto found =
        std::find_if(std::begin(known), std::end(known), [&](const auto& k) { return dtype == k.first; });
    if (found == std::end(known))
      bad(cat("unsupported dtype ", dtype.dump(), " (minidl reads F32, I64, and F64, F16, BF16 as float32)"));
    slot.stored = found->second;
    const json& shape = info["shape"];
    if (!shape.is_array()) bad(cat("the shape ", shape.dump(), " is not a list of sizes"));
    // The product of the non-zero sizes must fit int64 even when a 0 makes the tensor empty:
    // numel and the strides are computed in int64 ([0, 2^40, 2^40] would overflow them).
    uint64_t numel = 1, extents = 1;
    for (const json& size : shape) {
      if (!size.is_number_unsigned()) bad(cat("the shape ", shape.dump(), " holds ", size.dump(), ", not a size"));
      const uint64_t s = size.get<uint64_t>();
      if (s != 0 &&
          (__builtin_mul_overflow(extents, s, &extents) || extents > uint64_t(std::numeric_limits<int64_t>::max())))
        bad(cat("the shape ", shape.dump(), " is absurdly large"));
      numel *= s;  // at most extents
      slot.shape.push_back(int64_t(s));
    }
    uint64_t bytes = 0;
    if (__builtin_mul_overflow(numel, stored_size(slot.stored), &bytes))
      bad(cat("the shape ", shape.dump(), " is absurdly large"));
    const json& offsets = info["data_offsets"];
    if (!offsets.is_array() || offsets.size() != 2 || !offsets[0].is_number_unsigned() ||
        !offsets[1].is_number_unsigned())
      bad(cat("data_offsets ", offsets.dump(), " is not a pair of byte offsets"));
    slot.begin = offsets[0].get<uint64_t>();
    slot.end = offsets[1].get<uint64_t>();
    if (slot.begin > slot.end || slot.end > data_size_)
      bad(cat("data_offsets [", slot.begin, ", ", slot.end, "] are out of range: the data holds ", data_size_,
              " bytes"));
    if (slot.end - slot.begin != bytes)
      bad(cat("shape ", shape.dump(), " with dtype ", dtype.get<std::string>(), " needs ", bytes,
              " bytes, but data_offsets [", slot.begin, ", ", slot.end, "] hold ", slot.end - slot.begin));
    return slot;
  }

  // The tensors must tile the data exactly: no overlaps, no holes, nothing after the end.
  // Sorted by begin, then end, an empty tensor sharing its offset with the next comes first
  // and covers nothing (as the safetensors library orders them); inside another it overlaps.
  void check_layout(std::vector<Slot>& slots) const {
    std::sort(slots.begin(), slots.end(),
              [](const Slot& a, const Slot& b) { return std::pair(a.begin, a.end) < std::pair(b.begin, b.end); });
    uint64_t covered = 0;
    const Slot* previous = nullptr;
    for (const Slot& slot : slots) {
      if (slot.begin < covered)
        fail(cat("entries \"", previous->name, "\" and \"", slot.name, "\" overlap (bytes ", slot.begin, " to ",
                 covered, ")"));
      if (slot.begin > covered) fail(cat("bytes ", covered, " to ", slot.begin, " of the data belong to no entry"));
      covered = slot.end;
      previous = &slot;
    }
    if (covered != data_size_)
      fail(cat("the data holds ", data_size_, " bytes but the entries cover ", covered,
               " (trailing bytes or a wrong header length)"));
  }

  nn::StateDict read_data(const std::vector<Slot>& slots) {
    nn::StateDict state;
    std::vector<char> bytes;
    for (const Slot& slot : slots) {
      Tensor value = Tensor::empty(slot.shape);
      bytes.resize(slot.end - slot.begin);
      read_bytes(bytes.data(), bytes.size());
      if (slot.stored == Stored::F32) {
        // An empty tensor has no storage: memcpy must not see its null pointer (UB).
        if (!bytes.empty()) std::memcpy(value.data(), bytes.data(), bytes.size());
      } else {
        for (int64_t i = 0; i < value.numel(); ++i)
          value.data()[i] = to_float(slot.stored, bytes.data() + i * stored_size(slot.stored));
      }
      state.push_back({slot.name, value, slot.stored == Stored::I64 ? nn::DType::I64 : nn::DType::F32});
    }
    return state;
  }

  // IEEE 754 binary16 to float32, exactly (every half is a float): portable, since not
  // every compiler has _Float16 on x86-64.
  static float half_to_float(uint16_t h) {
    const uint32_t sign = uint32_t(h & 0x8000u) << 16, exponent = (h >> 10) & 0x1fu, mantissa = h & 0x3ffu;
    if (exponent == 0x1f) return std::bit_cast<float>(sign | 0x7f800000u | (mantissa << 13));  // inf, NaN
    if (exponent != 0) return std::bit_cast<float>(sign | ((exponent + 112) << 23) | (mantissa << 13));
    const float magnitude = float(mantissa) * 0x1p-24f;  // subnormal (or zero): mantissa x 2^-24
    return sign ? -magnitude : magnitude;
  }

  // One stored value as float32 (rounded to nearest: F64 past float's range becomes inf).
  static float to_float(Stored stored, const char* at) {
    switch (stored) {
      case Stored::I64:
        return float(load<int64_t>(at));
      case Stored::F64:
        return float(load<double>(at));
      case Stored::F16:
        return half_to_float(load<uint16_t>(at));
      case Stored::BF16:
        return std::bit_cast<float>(uint32_t(load<uint16_t>(at)) << 16);  // bfloat16 is float's top half
      case Stored::F32:
        return load<float>(at);
    }
    return 0.0f;
  }
  template <typename T>
  static T load(const char* at) {
    T v;
    std::memcpy(&v, at, sizeof(T));
    return v;
  }

  std::string path_;
  std::istream& in_;
  uint64_t file_size_ = 0;
  uint64_t data_size_ = 0;
  Metadata metadata_;
};

}  // namespace

nn::StateDict load_safetensors(const std::string& path) {
  Metadata ignored;
  return load_safetensors(path, ignored);
}

nn::StateDict load_safetensors(const std::string& path, Metadata& metadata) {
  std::error_code error;
  if (std::filesystem::is_directory(path, error))
    throw UsageError(cat(path, ": is a directory, not a checkpoint file"));
  std::ifstream in(path, std::ios::binary);
  if (!in) throw UsageError(cat(path, ": cannot open the checkpoint (missing or unreadable)"));
  Reader reader(path, in);
  nn::StateDict state = reader.read();
  metadata = reader.metadata();
  return state;
}

nn::StateDict parse_safetensors(std::string_view bytes, const std::string& name) {
  std::istringstream in{std::string(bytes), std::ios::binary};
  return Reader(name, in).read();
}

}  // namespace minidl::io
