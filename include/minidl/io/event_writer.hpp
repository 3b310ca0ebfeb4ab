#pragma once
// A TensorBoard event file, as `tensorboard --logdir` reads it: TFRecord frames
// (record_writer.hpp) of Event messages (event_encoding.hpp), file_version first.
//
//   io::EventWriter log("runs/layer/seed0");   // runs/layer/seed0/events.out.tfevents.<time>.<host>
//   log.add_scalar("train/loss", step, loss);
//   log.flush();                              // throws when the file cannot take the records
#include <cstdint>
#include <fstream>
#include <string>
#include <string_view>

#include "minidl/io/event_encoding.hpp"

namespace minidl::io {

/// "events.out.tfevents.<seconds>.<host>", the name TensorBoard looks for.
std::string event_file_name(int64_t seconds, std::string_view host);

class EventWriter {
 public:
  /// Creates dir (and its parents) and the event file in it, and writes the file_version
  /// record. Throws minidl::Error naming the path when either cannot be created.
  explicit EventWriter(const std::string& dir);

  /// Each appends one event stamped with the current time (written at flush or destruction).
  void add_scalar(std::string_view tag, int64_t step, float value);
  void add_histogram(std::string_view tag, int64_t step, const HistogramSummary& histogram);
  void add_text(std::string_view tag, int64_t step, std::string_view markdown);

  /// Writes what was added; throws minidl::Error naming the path when the file cannot take it.
  void flush();
  const std::string& path() const { return path_; }

 private:
  void append(const std::string& event);

  std::string path_;
  std::ofstream file_;
};

}  // namespace minidl::io
