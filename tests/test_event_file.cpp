// The TensorBoard event writer's pieces: CRC-32C against published vectors, TFRecord framing
// byte by byte, an Event's protobuf bytes written out by hand, and the file the writer makes.
// tests/tensorboard/check_event_files.py decodes whole files with protoc's classes.
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

#include "minidl/io/crc32c.hpp"
#include "minidl/io/event_encoding.hpp"
#include "minidl/io/event_writer.hpp"
#include "minidl/io/record_writer.hpp"
#include "support/temp_dir.hpp"

namespace test_event_file {

using namespace minidl;

namespace {

uint32_t read_u32(const std::string& bytes, size_t at) {
  uint32_t value = 0;
  for (int i = 3; i >= 0; --i) value = (value << 8) | uint8_t(bytes[at + size_t(i)]);
  return value;
}

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), {}};
}

}  // namespace

TEST_CASE("crc32c matches the published check values", "[event_file]") {
  // RFC 3720 (iSCSI) appendix B.4 and the CRC catalogue's check value.
  CHECK(io::crc32c("") == 0x00000000u);
  CHECK(io::crc32c("123456789") == 0xE3069283u);
  CHECK(io::crc32c(std::string(32, '\0')) == 0x8A9136AAu);
  CHECK(io::crc32c(std::string(32, '\xFF')) == 0x62A8AB43u);
  std::string ascending, descending;
  for (int i = 0; i < 32; ++i) {
    ascending.push_back(char(i));
    descending.push_back(char(31 - i));
  }
  CHECK(io::crc32c(ascending) == 0x46DD794Eu);
  CHECK(io::crc32c(descending) == 0x113FDB5Cu);
}

TEST_CASE("mask_crc32c rotates right by 15 bits and adds TFRecord's constant", "[event_file]") {
  CHECK(io::mask_crc32c(0) == 0xA282EAD8u);
  CHECK(io::mask_crc32c(0x00008000u) == 0xA282EAD9u);  // bit 15 rotates to bit 0
  CHECK(io::mask_crc32c(1) == 0xA284EAD8u);            // bit 0 rotates to bit 17
}

TEST_CASE("append_record frames data with its length and both masked CRCs", "[event_file]") {
  std::string out = "x";  // appends after what is there
  io::append_record(out, "abc");
  REQUIRE(out.size() == 1 + 8 + 4 + 3 + 4);
  const std::string length = out.substr(1, 8);
  CHECK(length == std::string("\x03\0\0\0\0\0\0\0", 8));
  CHECK(read_u32(out, 9) == io::mask_crc32c(io::crc32c(length)));
  CHECK(out.substr(13, 3) == "abc");
  CHECK(read_u32(out, 16) == io::mask_crc32c(io::crc32c("abc")));
}

TEST_CASE("scalar_event writes Event { wall_time, step, summary { value { tag, simple_value } } }", "[event_file]") {
  const std::string expected = std::string("\x09\0\0\0\0\0\0\xF0\x3F", 9)  // wall_time = 1.0 (double, field 1)
                               + std::string("\x10\x07", 2)                // step = 7 (varint, field 2)
                               + std::string("\x2A\x0A", 2)                // summary (field 5), 10 bytes
                               + std::string("\x0A\x08", 2)                // value (field 1), 8 bytes
                               + std::string(
                                     "\x0A\x01"
                                     "a",
                                     3)                                   // tag "a"
                               + std::string("\x15\x00\x00\x80\x3F", 5);  // simple_value = 1.0f (field 2)
  CHECK(io::scalar_event(1.0, 7, "a", 1.0f) == expected);
  const std::string negative_step = io::scalar_event(1.0, -1, "a", 1.0f);  // int64: ten bytes of two's complement
  CHECK(negative_step.substr(9, 11) == std::string("\x10\xFF\xFF\xFF\xFF\xFF\xFF\xFF\xFF\xFF\x01", 11));
}

TEST_CASE("EventWriter starts its file with the file_version record", "[event_file]") {
  minidl::testing::TempDir dir;
  const std::string run = dir.file("layer/seed0");
  std::string path;
  {
    io::EventWriter log(run);
    log.add_scalar("train/loss", 1, 2.5f);
    path = log.path();
  }
  CHECK(std::filesystem::path(path).parent_path() == std::filesystem::path(run));
  CHECK(std::filesystem::path(path).filename().string().starts_with("events.out.tfevents."));
  std::string expected;
  const std::string bytes = read_file(path);
  const std::string first = bytes.substr(12, bytes.size() >= 12 ? size_t(read_u32(bytes, 0)) : 0);
  CHECK(first.find("brain.Event:2") != std::string::npos);
  io::append_record(expected, first);
  CHECK(bytes.starts_with(expected));
  CHECK(bytes.size() > expected.size());  // the scalar followed at destruction
}

TEST_CASE("EventWriter names the directory it cannot create", "[event_file]") {
  minidl::testing::TempDir dir;
  const std::string file = dir.write("taken", "a file, not a directory");
  REQUIRE_THROWS_WITH(io::EventWriter(file + "/run"), Catch::Contains("cannot create") && Catch::Contains(file));
}

}  // namespace test_event_file
