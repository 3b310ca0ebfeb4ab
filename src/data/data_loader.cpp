#include "minidl/data/data_loader.hpp"

#include <algorithm>
#include <numeric>
#include <utility>

#include "minidl/ops/shape_ops.hpp"
#include "minidl/tensor/error.hpp"

namespace minidl::data {

DataLoader::DataLoader(const TensorDataset& dataset, DataLoaderOptions options)
    : dataset_(dataset), options_(options), generator_(options.seed) {
  if (options_.batch_size <= 0)
    throw Error(cat("DataLoader: batch_size should be a positive integer value, but got batch_size=",
                    options_.batch_size));
  order_.reserve(size_t(dataset_.size()));
  // A batch never holds more than the dataset (a batch_size of 2^62 means one batch of all).
  indices_.reserve(size_t(std::min(options_.batch_size, dataset_.size())));
}

DataLoader::Epoch DataLoader::epoch() {
  order_.resize(size_t(dataset_.size()));
  std::iota(order_.begin(), order_.end(), int64_t(0));
  if (options_.shuffle)  // Fisher-Yates: position i takes a uniform pick among 0..i
    for (int64_t i = int64_t(order_.size()) - 1; i > 0; --i)
      std::swap(order_[size_t(i)], order_[generator_.below(uint64_t(i) + 1)]);
  return Epoch(*this);
}

DataLoader::Epoch DataLoader::epoch(const std::vector<int64_t>& order) {
  for (size_t i = 0; i < order.size(); ++i)
    if (order[i] < 0 || order[i] >= dataset_.size())
      throw Error(cat("DataLoader: index ", order[i], " at position ", i, " of the epoch's order is outside 0..",
                      dataset_.size() - 1, " (the dataset has ", dataset_.size(), " examples)"));
  order_ = order;
  return Epoch(*this);
}

int64_t DataLoader::batch_count(int64_t examples) const {
  const int64_t b = options_.batch_size;  // written so that no batch size overflows
  return examples / b + (!options_.drop_last && examples % b != 0);
}

int64_t DataLoader::size() const { return batch_count(dataset_.size()); }

DataLoader::Iterator DataLoader::iterate() {
  const auto examples = int64_t(order_.size());
  return Iterator(*this, options_.drop_last ? batch_count(examples) * options_.batch_size : examples);
}

DataLoader::Iterator::Iterator(DataLoader& loader, int64_t stop)
    : loader_(&loader), stop_(std::min(stop, int64_t(loader.order_.size()))) {
  load();
}

DataLoader::Iterator& DataLoader::Iterator::operator++() {
  start_ += std::min(loader_->options_.batch_size, stop_ - start_);
  load();
  return *this;
}

void DataLoader::Iterator::load() {
  if (start_ >= stop_) {
    batch_ = {};  // release the last batch's tensors
    return;
  }
  const int64_t end = start_ + std::min(loader_->options_.batch_size, stop_ - start_);
  auto& indices = loader_->indices_;
  indices.assign(loader_->order_.begin() + start_, loader_->order_.begin() + end);
  batch_.inputs = select_rows(loader_->dataset_.inputs(), indices);
  batch_.targets = select_rows(loader_->dataset_.targets(), indices);
}

}  // namespace minidl::data
