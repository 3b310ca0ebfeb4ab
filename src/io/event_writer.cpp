#include "minidl/io/event_writer.hpp"

#include <unistd.h>

#include <chrono>
#include <climits>
#include <filesystem>

#include "minidl/io/record_writer.hpp"
#include "minidl/tensor/error.hpp"

namespace fs = std::filesystem;

namespace minidl::io {

namespace {

double seconds_now() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

std::string host_name() {
  char name[HOST_NAME_MAX + 1] = {};
  return ::gethostname(name, sizeof name - 1) == 0 && name[0] ? name : "localhost";
}

}  // namespace

std::string event_file_name(int64_t seconds, std::string_view host) {
  return cat("events.out.tfevents.", seconds, ".", host);
}

EventWriter::EventWriter(const std::string& dir) {
  std::error_code error;
  fs::create_directories(dir, error);
  if (error) throw Error(cat("cannot create the event file's directory ", dir, ": ", error.message()));
  const double now = seconds_now();
  path_ = (fs::path(dir) / event_file_name(int64_t(now), host_name())).string();
  file_.open(path_, std::ios::binary | std::ios::trunc);
  if (!file_) throw Error(cat("cannot create the event file ", path_));
  append(file_version_event(now));
  flush();
}

void EventWriter::add_scalar(std::string_view tag, int64_t step, float value) {
  append(scalar_event(seconds_now(), step, tag, value));
}

void EventWriter::add_histogram(std::string_view tag, int64_t step, const HistogramSummary& histogram) {
  append(histogram_event(seconds_now(), step, tag, histogram));
}

void EventWriter::add_text(std::string_view tag, int64_t step, std::string_view markdown) {
  append(text_event(seconds_now(), step, tag, markdown));
}

void EventWriter::append(const std::string& event) {
  std::string record;
  append_record(record, event);
  file_.write(record.data(), std::streamsize(record.size()));
}

void EventWriter::flush() {
  file_.flush();
  if (!file_) throw Error(cat("cannot write the event file ", path_));
}

}  // namespace minidl::io
