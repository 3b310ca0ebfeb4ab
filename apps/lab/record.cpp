#include <cstdio>

#include "lab.hpp"
#include "minidl/tensor/error.hpp"

namespace minidl::lab {

Record& Record::set(const std::string& name, Value value) {
  for (auto& field : fields)
    if (field.first == name) {
      field.second = std::move(value);
      return *this;
    }
  fields.emplace_back(name, std::move(value));
  return *this;
}

namespace {
const Record::Value& find(const Record& record, const std::string& name) {
  for (const auto& field : record.fields)
    if (field.first == name) return field.second;
  throw Error(cat("the record has no field \"", name, "\""));
}
}  // namespace

double Record::num(const std::string& name) const {
  const Value& value = find(*this, name);
  if (const double* number = std::get_if<double>(&value)) return *number;
  throw Error(cat("the record's field \"", name, "\" holds text, not a number"));
}

const std::string& Record::text(const std::string& name) const {
  const Value& value = find(*this, name);
  if (const std::string* text = std::get_if<std::string>(&value)) return *text;
  throw Error(cat("the record's field \"", name, "\" holds a number, not text"));
}

std::string records_csv(const std::vector<Record>& records) {
  if (records.empty()) return "";
  std::string csv;
  for (size_t i = 0; i < records.front().fields.size(); ++i) csv += (i ? "," : "") + records.front().fields[i].first;
  csv += "\n";
  char number[32];
  for (const Record& record : records) {
    for (size_t i = 0; i < record.fields.size(); ++i) {
      if (i) csv += ",";
      if (const double* value = std::get_if<double>(&record.fields[i].second)) {
        std::snprintf(number, sizeof number, "%.9g", *value);
        csv += number;
      } else {
        csv += std::get<std::string>(record.fields[i].second);
      }
    }
    csv += "\n";
  }
  return csv;
}

std::string verdict_text(Verdict verdict) {
  static const char* const texts[] = {"held", "held partly", "did not hold", "inconclusive", "not run"};  // by Verdict
  return texts[size_t(verdict)];
}

}  // namespace minidl::lab
