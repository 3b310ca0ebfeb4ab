#pragma once
// TensorBoard's Event messages, encoded by hand in the protobuf wire format: only the fields
// these functions write, with the field numbers of TensorBoard's event.proto, summary.proto
// and tensor.proto (the subset is kept in tests/tensorboard/, where the tests decode the
// output with protoc's classes). A hand encoder of a dozen fields costs less than a build
// dependency on libprotobuf and protoc (docs/comparing-runs.md says why).
//
//   Event { double wall_time = 1; int64 step = 2; string file_version = 3; Summary summary = 5; }
//   Summary { repeated Value value = 1; }
//   Value { string tag = 1; float simple_value = 2; HistogramProto histo = 5;
//           TensorProto tensor = 8; SummaryMetadata metadata = 9; }
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace minidl::io {

/// HistogramProto: bucket[i] counts the values in (bucket_limit[i-1], bucket_limit[i]].
struct HistogramSummary {
  double min = 0.0, max = 0.0;
  double num = 0.0;  // the values counted: the sum of the buckets
  double sum = 0.0, sum_squares = 0.0;
  std::vector<double> bucket_limit{};  // increasing upper edges
  std::vector<double> bucket{};        // one count per edge
};

/// The first event of every file: file_version "brain.Event:2".
std::string file_version_event(double wall_time);
/// A scalar: Value { tag, simple_value } (TensorBoard's Scalars tab).
std::string scalar_event(double wall_time, int64_t step, std::string_view tag, float value);
/// A histogram: Value { tag, histo } (the Histograms and Distributions tabs).
std::string histogram_event(double wall_time, int64_t step, std::string_view tag, const HistogramSummary& histogram);
/// Text (Markdown): a scalar DT_STRING tensor with the "text" plugin's metadata (the Text tab).
std::string text_event(double wall_time, int64_t step, std::string_view tag, std::string_view text);

}  // namespace minidl::io
