#pragma once
// DataLoader: mini-batches of a TensorDataset, like torch.utils.data.DataLoader.
//
//   data::DataLoader loader(dataset, {.batch_size = 64, .shuffle = true, .seed = 0});
//   for (int epoch = 0; epoch < 5; ++epoch)
//     for (const data::Batch& batch : loader) { ... batch.inputs, batch.targets ... }
//
// Each pass over the loader is one epoch; with shuffle every pass draws a new permutation
// from the loader's own Generator (Fisher-Yates with Generator::below), so the same seed
// gives the same batches on every machine. loader.epoch(order) runs one epoch in an order
// given from outside (to replay a run made elsewhere).
#include <cstdint>
#include <iterator>
#include <vector>

#include "minidl/data/tensor_dataset.hpp"
#include "minidl/tensor/generator.hpp"

namespace minidl::data {

struct DataLoaderOptions {
  int64_t batch_size = 1;  // batch_size=1
  bool shuffle = false;    // shuffle=False
  bool drop_last = false;  // drop_last=False: the short last batch is kept
  uint64_t seed = 0;       // seeds the loader's generator (PyTorch draws from the global one)
};

struct Batch {
  Tensor inputs;   // (B, ...) rows of the dataset's inputs
  Tensor targets;  // (B, ...) the matching rows of its targets
};

class DataLoader {
 public:
  /// Throws minidl::Error when batch_size is not positive.
  explicit DataLoader(const TensorDataset& dataset, DataLoaderOptions options = {});
  /// DataLoader(inputs, targets, {.batch_size = 64}): over TensorDataset(inputs, targets).
  DataLoader(Tensor inputs, Tensor targets, DataLoaderOptions options = {})
      : DataLoader(TensorDataset(std::move(inputs), std::move(targets)), options) {}

  /// Walks the batches of one epoch. The batch it points to stays valid until it moves on.
  class Iterator {
   public:
    using value_type = Batch;
    using difference_type = std::ptrdiff_t;

    const Batch& operator*() const { return batch_; }
    const Batch* operator->() const { return &batch_; }
    Iterator& operator++();
    void operator++(int) { ++*this; }
    bool operator==(std::default_sentinel_t) const { return start_ >= stop_; }

   private:
    friend class DataLoader;
    Iterator(DataLoader& loader, int64_t stop);
    void load();

    DataLoader* loader_;
    int64_t start_ = 0;  // index into the epoch's order of this batch's first example
    int64_t stop_;       // where the epoch's batches end (drop_last already applied)
    Batch batch_;
  };

  /// One epoch as a range: its order is fixed when epoch() or begin() is called.
  class Epoch {
   public:
    Iterator begin() { return loader_->iterate(); }
    std::default_sentinel_t end() const { return {}; }

   private:
    friend class DataLoader;
    explicit Epoch(DataLoader& loader) : loader_(&loader) {}
    DataLoader* loader_;
  };

  /// Starts a new epoch: a fresh permutation when shuffling, else 0, 1, ..., N-1.
  Epoch epoch();
  /// An epoch in the given order of example indices: batches are its consecutive chunks.
  /// Throws minidl::Error naming the position of an index outside 0..N-1.
  Epoch epoch(const std::vector<int64_t>& order);

  /// Range-for over the loader runs epoch(): each pass is a new epoch.
  Iterator begin() { return epoch().begin(); }
  std::default_sentinel_t end() const { return {}; }

  /// Batches per epoch (len(loader) in PyTorch).
  int64_t size() const;
  const TensorDataset& dataset() const { return dataset_; }
  const DataLoaderOptions& options() const { return options_; }
  /// The generator the shuffles draw from (its state saves and restores the data order).
  Generator& generator() { return generator_; }
  /// The order of the current epoch's examples.
  const std::vector<int64_t>& order() const { return order_; }

 private:
  Iterator iterate();
  int64_t batch_count(int64_t examples) const;

  TensorDataset dataset_;
  DataLoaderOptions options_;
  Generator generator_;
  std::vector<int64_t> order_;    // reused every epoch
  std::vector<int64_t> indices_;  // reused every batch: this batch's slice of order_
};

}  // namespace minidl::data
