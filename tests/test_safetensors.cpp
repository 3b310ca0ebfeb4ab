// safetensors checkpoints: round trips, the file layout, and every corrupt file as an error.
#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "minidl/io/atomic_file.hpp"
#include "minidl/io/safetensors.hpp"
#include "support/check.hpp"
#include "support/temp_dir.hpp"

namespace test_safetensors {

using namespace minidl;
using minidl::testing::TempDir;

namespace {

nn::StateDict sample_state() {
  Generator gen(5);
  return {{"0.weight", Tensor::randn({3, 2}, gen), DType::F32},
          {"0.bias", Tensor::from_vector({-1.5f, 0.0f, 3.25f}), DType::F32},
          {"1.num_batches_tracked", Tensor::scalar(7.0f), DType::I64},
          {"1.steps", Tensor::from_vector({-3.0f, 1e6f}), DType::I64}};
}

std::string read_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// A file with the given header text (length prefix computed unless given) and data.
std::string make_file(const std::string& header, const std::string& data, int64_t header_length = -1) {
  uint64_t n = header_length < 0 ? header.size() : uint64_t(header_length);
  std::string bytes(8, '\0');
  std::memcpy(bytes.data(), &n, 8);
  return bytes + header + data;
}

std::string floats(std::initializer_list<float> values) {
  std::string out(values.size() * 4, '\0');
  std::memcpy(out.data(), values.begin(), out.size());
  return out;
}

}  // namespace

TEST_CASE("safetensors round trip keeps names, dtypes, shapes and values", "[io]") {
  TempDir dir;
  const std::string path = dir.file("model.safetensors");
  nn::StateDict saved = sample_state();
  io::save_safetensors(path, saved);
  nn::StateDict loaded = io::load_safetensors(path);
  REQUIRE(loaded.size() == saved.size());
  for (size_t i = 0; i < saved.size(); ++i) {
    INFO(saved[i].name);
    CHECK(loaded[i].name == saved[i].name);
    CHECK(loaded[i].dtype == saved[i].dtype);
    CHECK(loaded[i].value.shape() == saved[i].value.shape());
    CHECK(loaded[i].value.to_vector() == saved[i].value.to_vector());  // bit for bit
  }
}

TEST_CASE("safetensors writes the format's layout: LE length, JSON header, LE data", "[io]") {
  TempDir dir;
  const std::string path = dir.file("model.safetensors");
  io::save_safetensors(path, sample_state());
  const std::string bytes = read_bytes(path);
  uint64_t n = 0;
  std::memcpy(&n, bytes.data(), 8);
  CHECK(n % 8 == 0);
  auto header = nlohmann::json::parse(bytes.substr(8, n));
  CHECK(header["0.weight"]["dtype"] == "F32");
  CHECK(header["0.weight"]["shape"] == nlohmann::json::array({3, 2}));
  CHECK(header["0.weight"]["data_offsets"] == nlohmann::json::array({0, 24}));
  CHECK(header["0.bias"]["data_offsets"] == nlohmann::json::array({24, 36}));
  CHECK(header["1.num_batches_tracked"]["dtype"] == "I64");
  CHECK(header["1.num_batches_tracked"]["shape"] == nlohmann::json::array());
  CHECK(header["1.num_batches_tracked"]["data_offsets"] == nlohmann::json::array({36, 44}));
  CHECK(bytes.size() == 8 + n + 60);
  int64_t tracked = 0;
  std::memcpy(&tracked, bytes.data() + 8 + n + 36, 8);
  CHECK(tracked == 7);
  float bias2 = 0;
  std::memcpy(&bias2, bytes.data() + 8 + n + 32, 4);
  CHECK(bias2 == 3.25f);
}

TEST_CASE("save_safetensors replaces the file atomically and leaves no temporary behind", "[io]") {
  TempDir dir;
  const std::string path = dir.file("model.safetensors");
  io::save_safetensors(path, sample_state());
  nn::StateDict second = {{"w", Tensor::full({2}, 4.0f), DType::F32}};
  io::save_safetensors(path, second);
  CHECK(io::load_safetensors(path)[0].value.to_vector() == std::vector<float>{4.0f, 4.0f});
  int files = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir.path())) {
    ++files;
    CHECK(entry.path().filename() == "model.safetensors");
  }
  CHECK(files == 1);
}

TEST_CASE("write_file_atomically names the path it cannot write", "[io]") {
  TempDir dir;
  const std::string path = dir.file("no_such_dir/out.csv");
  REQUIRE_THROWS_WITH(io::write_file_atomically(path, "x"), Catch::Contains(path) && Catch::Contains("No such file"));
}

TEST_CASE("save_safetensors refuses duplicate names and non-integral I64 values", "[io]") {
  TempDir dir;
  nn::StateDict twice = {{"a", Tensor::zeros({1}), DType::F32}, {"a", Tensor::zeros({1}), DType::F32}};
  REQUIRE_THROWS_WITH(io::save_safetensors(dir.file("x"), twice), Catch::Contains("a appears twice"));
  nn::StateDict half = {{"n", Tensor::scalar(1.5f), DType::I64}};
  REQUIRE_THROWS_WITH(io::save_safetensors(dir.file("x"), half), Catch::Contains("n is stored as I64 but holds 1.5"));
  CHECK(!std::filesystem::exists(dir.file("x")));
}

TEST_CASE("load_safetensors names the file and what is wrong with a corrupt one", "[io]") {
  TempDir dir;
  const std::string good_header = R"({"w":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}})";
  auto check = [&](const std::string& bytes, const std::string& what) {
    const std::string path = dir.write("bad.safetensors", bytes);
    REQUIRE_THROWS_AS(io::load_safetensors(path), UsageError);
    REQUIRE_THROWS_WITH(io::load_safetensors(path), Catch::Contains(path + ": ") && Catch::Contains(what));
  };
  CHECK(
      io::load_safetensors(dir.write("ok.safetensors", make_file(good_header, floats({1, 2}))))[0].value.to_vector() ==
      std::vector<float>{1, 2});

  check("", "truncated: the file has 0 bytes");
  check(std::string(5, '\x01'), "truncated: the file has 5 bytes");
  check(make_file(good_header, floats({1, 2}), 4000), "header length 4000 runs past the end of the file");
  check(make_file(good_header, floats({1, 2}), int64_t(1) << 50), "is absurd");
  check(make_file(good_header.substr(0, 20), floats({1, 2})), "not valid JSON");
  check(make_file("[1,2]", ""), "the header is not a JSON object");
  check(make_file(R"({"w":3})", ""), "entry \"w\": expected an object");
  check(make_file(R"({"w":{"dtype":"I32","shape":[2],"data_offsets":[0,8]}})", floats({1, 2})),
        "entry \"w\": unsupported dtype \"I32\"");
  // An empty tensor may share an offset, not sit inside another tensor's bytes.
  check(make_file(R"({"a":{"dtype":"F32","shape":[3],"data_offsets":[0,12]},)"
                  R"("b":{"dtype":"F32","shape":[0],"data_offsets":[4,4]}})",
                  floats({1, 2, 3})),
        "entries \"a\" and \"b\" overlap");
  check(make_file(R"({"w":{"shape":[2],"data_offsets":[0,8]}})", floats({1, 2})), "the field \"dtype\" is missing");
  check(make_file(R"({"w":{"dtype":"F32","shape":[-2],"data_offsets":[0,8]}})", floats({1, 2})), "not a size");
  check(
      make_file(R"({"w":{"dtype":"F32","shape":[1099511627776,1099511627776],"data_offsets":[0,8]}})", floats({1, 2})),
      "absurdly large");
  check(make_file(R"({"w":{"dtype":"F32","shape":[3],"data_offsets":[0,8]}})", floats({1, 2})),
        "shape [3] with dtype F32 needs 12 bytes, but data_offsets [0, 8] hold 8");
  check(make_file(R"({"w":{"dtype":"F32","shape":[2],"data_offsets":[0,16]}})", floats({1, 2})),
        "data_offsets [0, 16] are out of range: the data holds 8 bytes");
  check(make_file(R"({"w":{"dtype":"F32","shape":[2],"data_offsets":[8,0]}})", floats({1, 2})), "out of range");
  check(make_file(R"({"w":{"dtype":"F32","shape":[2],"data_offsets":[0]}})", floats({1, 2})),
        "is not a pair of byte offsets");
  check(make_file(R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},)"
                  R"("b":{"dtype":"F32","shape":[2],"data_offsets":[4,12]}})",
                  floats({1, 2, 3})),
        "entries \"a\" and \"b\" overlap");
  check(make_file(R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},)"
                  R"("b":{"dtype":"F32","shape":[1],"data_offsets":[8,12]}})",
                  floats({1, 2, 3})),
        "bytes 4 to 8 of the data belong to no entry");
  check(make_file(good_header, floats({1, 2, 3})), "the data holds 12 bytes but the entries cover 8");
  check(make_file(std::string(R"({"w":{"dtype":"I64","shape":[1],"data_offsets":[0,4]}})"), floats({1})),
        "needs 8 bytes");

  const std::string missing = dir.file("absent.safetensors");
  REQUIRE_THROWS_WITH(io::load_safetensors(missing), Catch::Contains(missing) && Catch::Contains("cannot open"));
}

TEST_CASE("load_safetensors takes empty tensors that share an offset", "[io]") {
  // What the safetensors library writes for an empty tensor saved beside others.
  for (const char* header : {R"({"b":{"dtype":"F32","shape":[0],"data_offsets":[0,0]},)"
                             R"("a":{"dtype":"F32","shape":[3],"data_offsets":[0,12]}})",
                             R"({"a":{"dtype":"F32","shape":[3],"data_offsets":[0,12]},)"
                             R"("b":{"dtype":"F32","shape":[0],"data_offsets":[12,12]},)"
                             R"("c":{"dtype":"I64","shape":[2,0],"data_offsets":[12,12]}})"}) {
    INFO(header);
    nn::StateDict state = io::parse_safetensors(make_file(header, floats({1, 2, 3})), "mem");
    for (const nn::StateEntry& entry : state) {
      if (entry.name == "a") CHECK(entry.value.to_vector() == std::vector<float>{1, 2, 3});
      else CHECK(entry.value.numel() == 0);
    }
    CHECK(state.size() >= 2);
  }
}

TEST_CASE("load_safetensors reads F64, F16 and BF16 entries as float32", "[io]") {
  // model.double() saves F64; half precision checkpoints F16 or BF16.
  const double doubles[] = {1.5, -2.25, 0.1, 1e300};
  std::string data(reinterpret_cast<const char*>(doubles), sizeof(doubles));
  const uint16_t halves[] = {0x3c00, 0xc000, 0x3555, 0x0001};  // 1, -2, 0.33325, 2^-24
  data.append(reinterpret_cast<const char*>(halves), sizeof(halves));
  const uint16_t brains[] = {0x3f80, 0xc040, 0x7f80};  // 1, -3, inf
  data.append(reinterpret_cast<const char*>(brains), sizeof(brains));
  data.append(2, '\0');  // one more BF16 value, 0
  const std::string header = R"({"d":{"dtype":"F64","shape":[2,2],"data_offsets":[0,32]},)"
                             R"("h":{"dtype":"F16","shape":[4],"data_offsets":[32,40]},)"
                             R"("b":{"dtype":"BF16","shape":[3],"data_offsets":[40,46]},)"
                             R"("pad":{"dtype":"BF16","shape":[1],"data_offsets":[46,48]}})";
  nn::StateDict state = io::parse_safetensors(make_file(header, data), "mem");
  REQUIRE(state.size() == 4);
  CHECK(state[0].name == "d");
  CHECK(state[0].dtype == nn::DType::F32);
  CHECK(state[0].value.shape() == Shape{2, 2});
  CHECK(state[0].value.to_vector() == std::vector<float>{1.5f, -2.25f, 0.1f, INFINITY});
  CHECK(state[1].value.to_vector() == std::vector<float>{1.0f, -2.0f, 0.333251953125f, 0x1p-24f});
  CHECK(state[2].value.to_vector() == std::vector<float>{1.0f, -3.0f, INFINITY});
  CHECK(state[3].value.to_vector() == std::vector<float>{0.0f});
}

TEST_CASE("load_safetensors refuses a checkpoint cut short", "[io]") {
  TempDir dir;
  const std::string path = dir.file("model.safetensors");
  io::save_safetensors(path, sample_state());
  std::string bytes = read_bytes(path);
  for (size_t keep : {bytes.size() - 1, bytes.size() - 20, size_t(30), size_t(8), size_t(3)}) {
    INFO("kept " << keep << " of " << bytes.size() << " bytes");
    const std::string cut = dir.write("cut.safetensors", bytes.substr(0, keep));
    REQUIRE_THROWS_AS(io::load_safetensors(cut), UsageError);
  }
}

TEST_CASE("load_safetensors skips __metadata__ and reads PyTorch's entry order", "[io]") {
  TempDir dir;
  // The safetensors library sorts entries; data order and header order may differ.
  const std::string header =
      R"({"__metadata__":{"format":"pt"},"b":{"dtype":"F32","shape":[1],"data_offsets":[4,8]},)"
      R"("a":{"dtype":"I64","shape":[],"data_offsets":[8,16]},"c":{"dtype":"F32","shape":[1,1],"data_offsets":[0,4]}})";
  int64_t seven = 7;
  std::string data = floats({5, 6}) + std::string(reinterpret_cast<const char*>(&seven), 8);
  nn::StateDict state = io::load_safetensors(dir.write("pt.safetensors", make_file(header, data)));
  REQUIRE(state.size() == 3);
  CHECK(state[0].name == "c");
  CHECK(state[0].value.shape() == Shape{1, 1});
  CHECK(state[0].value.item() == 5.0f);
  CHECK(state[1].name == "b");
  CHECK(state[1].value.item() == 6.0f);
  CHECK(state[2].name == "a");
  CHECK(state[2].dtype == DType::I64);
  CHECK(state[2].value.shape() == Shape{});
  CHECK(state[2].value.item() == 7.0f);
}

}  // namespace test_safetensors
