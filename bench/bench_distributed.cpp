// bench_distributed: data-parallel throughput of the wide net (depth 8 x [Linear(1024, 1024),
// norm, Tanh], then Linear(1024, 10)) at a global batch of 512 (--batch), SGD steps on
// synthetic data, each rank on batch / N. Run it once per rank count and compare the
// examples per second:
//   mpirun --allow-run-as-root -np 1 build/bench/bench_distributed
//   mpirun --allow-run-as-root -np 2 build/bench/bench_distributed
// Per norm (none, local BatchNorm1d, SyncBatchNorm) rank 0 prints the median step time, the
// examples per second, and the part of the step spent averaging gradients (the buckets'
// allreduce) and the bytes it averages. The gradients are views into the buckets
// (gradient_as_bucket_view) unless --copy-gradients; --allreduce times the allreduce alone.
#include <mpi.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <cxxopts.hpp>
#include <thread>

#include "cli.hpp"
#include "minidl/distributed/collectives.hpp"
#include "minidl/distributed/data_parallel.hpp"
#include "minidl/distributed/environment.hpp"
#include "minidl/distributed/sync_batch_norm.hpp"
#include "minidl/minidl.hpp"
#include "models/norm_kind.hpp"
#include "timing.hpp"

using namespace minidl;
namespace dist = minidl::distributed;

namespace {

struct Options {
  int64_t depth = 8, width = 1024, batch = 512, classes = 10;
  int steps = 20;
};

// A run's norm: none, BatchNorm1d, or BatchNorm1d as SyncBatchNorm ("sync").
struct NormRun {
  apps::NormKind norm;
  bool sync = false;
  std::string name() const { return sync ? "SyncBatchNorm" : norm == apps::NormKind::Batch ? "BatchNorm1d" : "none"; }
  std::string key() const { return sync ? "sync" : apps::short_name(norm); }
};
constexpr NormRun kRuns[] = {{apps::NormKind::None}, {apps::NormKind::Batch}, {apps::NormKind::Batch, true}};

std::shared_ptr<nn::Module> wide_net(const Options& o, NormRun norm, Generator& gen) {
  auto model = std::make_shared<nn::Sequential>();
  for (int64_t i = 0; i < o.depth; ++i) {
    model->push_back(std::make_shared<nn::Linear>(o.width, o.width, gen));
    if (norm.norm != apps::NormKind::None) model->push_back(std::make_shared<nn::BatchNorm1d>(o.width));
    model->push_back(std::make_shared<nn::Tanh>());
  }
  model->push_back(std::make_shared<nn::Linear>(o.width, o.classes, gen));
  return norm.sync ? dist::convert_sync_batchnorm(model) : model;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

void report(const Options& o, NormRun norm, bool bucket_view) {
  const int world = dist::world_size();
  const int64_t local = o.batch / world;
  Generator gen(0);
  auto model = wide_net(o, norm, gen);
  dist::DistributedDataParallel ddp(model, {.gradient_as_bucket_view = bucket_view});
  optim::SGD optimizer(model->parameters(), {.lr = 0.01});
  Generator data(1 + uint64_t(dist::rank()));
  const Tensor inputs = Tensor::randn({local, o.width}, data);          // (B / N, width)
  const Tensor targets = Tensor::randint(0, o.classes, {local}, data);  // (B / N)
  std::vector<double> step_seconds, reduce_seconds, cpu_seconds;
  for (int s = 0; s < o.steps + 2; ++s) {
    dist::barrier();  // every rank starts the step together
    const auto start = bench::Clock::now();
    const double cpu_start = bench::process_cpu_seconds();
    optimizer.zero_grad();
    cross_entropy(ddp(inputs), targets).backward();
    const auto reduce_start = bench::Clock::now();
    ddp.reduce_gradients();
    const double reduce = bench::seconds_since(reduce_start);
    optimizer.step();
    const double step = bench::seconds_since(start), cpu = bench::process_cpu_seconds() - cpu_start;
    if (s >= 2) {  // the first two warm the caches and OpenBLAS's buffers
      step_seconds.push_back(step);
      cpu_seconds.push_back(cpu);
      reduce_seconds.push_back(reduce);
    }
  }
  int64_t floats = 0;
  for (const Tensor& p : model->parameters()) floats += p.numel();
  const double step = median(step_seconds), reduce = median(reduce_seconds);
  // CPU seconds per step over all ranks and threads: on a machine shared with other work the
  // wall clock waits for cores, CPU time does not (though MPI's busy waiting counts in it).
  std::vector<double> cpu{median(cpu_seconds)};
  dist::all_reduce(std::span<double>(cpu));
  if (dist::rank() == 0)
    std::printf(
        "%-13s ranks %d  threads/rank %d  batch/rank %lld  %7.1f ms/step  %6.0f examples/s  "
        "%7.1f CPU ms/step  %6.0f apps/CPU s  gradient allreduce %6.1f ms (%4.1f%%) of %.1f MB in "
        "%zu buckets\n",
        norm.name().c_str(), world, get_num_threads(), static_cast<long long>(local), step * 1e3,
        double(o.batch) / step, cpu[0] * 1e3, double(o.batch) / cpu[0], reduce * 1e3, 100.0 * reduce / step,
        double(floats) * 4e-6, ddp.buckets().size());
}

// The average as DistributedDataParallel makes it, gradients (elsewhere) into a bucket:
// divided into the bucket in a pass of its own, then summed, against all_reduce_divided,
// which divides in the ring as it reads them; medians of 9 each.
void report_averaging(const std::vector<float>& gradients) {
  std::vector<float> bucket(gradients.size());
  const float ranks = float(dist::world_size());
  const auto timed = [](const auto& collective) {
    dist::barrier();
    const auto start = bench::Clock::now();
    collective();
    return bench::seconds_since(start);
  };
  const dist::Segment whole{gradients.data(), gradients.size()};
  std::vector<double> separate, folded;
  for (int round = 0; round < 11; ++round) {
    const double a = timed([&] {
      for (size_t i = 0; i < gradients.size(); ++i) bucket[i] = gradients[i] / ranks;
      dist::all_reduce(std::span<float>(bucket));
    });
    const double b = timed([&] { dist::all_reduce_divided(std::span(&whole, 1), std::span<float>(bucket), ranks); });
    if (round >= 2) {
      separate.push_back(a);
      folded.push_back(b);
    }
  }
  if (dist::rank() == 0)
    std::printf(
        "average of %.1f MB on %d ranks into a bucket: divide pass + allreduce %.1f ms, all_reduce_divided "
        "%.1f ms (%.2fx)\n",
        double(gradients.size()) * 4e-6, dist::world_size(), median(separate) * 1e3, median(folded) * 1e3,
        median(folded) / median(separate));
}

// An MPI-3 shared-memory window per rank of one machine (MPI_Win_allocate_shared), holding
// that rank's bucket: the alternative to the ring measured against it.
struct SharedBuckets {
  MPI_Comm node = MPI_COMM_NULL;
  MPI_Win window = MPI_WIN_NULL;
  std::vector<float*> buckets;  // (ranks) every rank's bucket, mapped into this process

  explicit SharedBuckets(size_t floats) {
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
    int ranks = 0;
    MPI_Comm_size(node, &ranks);
    float* mine = nullptr;
    MPI_Win_allocate_shared(MPI_Aint(floats * sizeof(float)), int(sizeof(float)), MPI_INFO_NULL, node, &mine, &window);
    for (int k = 0; k < ranks; ++k) {
      MPI_Aint size = 0;
      int unit = 0;
      float* base = nullptr;
      MPI_Win_shared_query(window, k, &size, &unit, &base);
      buckets.push_back(base);
    }
    MPI_Win_lock_all(MPI_MODE_NOCHECK, window);
  }
  ~SharedBuckets() {
    MPI_Win_unlock_all(window);
    MPI_Win_free(&window);
    MPI_Comm_free(&node);
  }
  SharedBuckets(const SharedBuckets&) = delete;
  SharedBuckets& operator=(const SharedBuckets&) = delete;
  void sync() const {  // every rank's writes so far visible to every rank
    MPI_Win_sync(window);
    MPI_Barrier(node);
    MPI_Win_sync(window);
  }
};

// The average through the shared window: each rank sums its block (in the ring's order,
// from the block's own rank on, so the bits are the ring's), reading every rank's bucket,
// into its own bucket; then copies the other blocks from their owners. With the gradients
// already in the window (written there by the backward), and copied in divided first (as
// when zero_grad drops them and the backward writes new tensors).
void report_shared_window(const std::vector<float>& gradients) {
  const int p = dist::world_size(), r = dist::rank();
  const size_t n = gradients.size(), width = (n + size_t(p) - 1) / size_t(p);
  const float ranks = float(p);
  SharedBuckets shared(n);
  if (shared.buckets.size() != size_t(p)) return;  // ranks on several machines: the ring only
  float* mine = shared.buckets[size_t(r)];
  const auto block_of = [&](int b) { return std::min(n, width * size_t(b)); };
  const auto average = [&](bool divided_in) {  // divided_in: the bucket holds gradients / ranks
    const size_t begin = block_of(r), end = block_of(r + 1), chunk = 4096;
    for (size_t at = begin; at < end; at += chunk) {  // a chunk at a time, summed while in cache
      const size_t count = std::min(chunk, end - at);
      float* sum = mine + at;
      if (!divided_in)
        for (size_t i = 0; i < count; ++i) sum[i] /= ranks;
      for (int j = 1; j < p; ++j) {
        const float* v = shared.buckets[size_t((r + j) % p)] + at;
        if (divided_in)
          for (size_t i = 0; i < count; ++i) sum[i] += v[i];
        else
          for (size_t i = 0; i < count; ++i) sum[i] += v[i] / ranks;
      }
    }
    shared.sync();
    for (int k = 0; k < p; ++k)
      if (k != r)
        std::memcpy(mine + block_of(k), shared.buckets[size_t(k)] + block_of(k),
                    (block_of(k + 1) - block_of(k)) * sizeof(float));
    shared.sync();
  };
  std::vector<double> in_window, copied_in;
  for (int round = 0; round < 11; ++round) {
    std::copy(gradients.begin(), gradients.end(), mine);
    dist::barrier();
    auto start = bench::Clock::now();
    average(false);
    const double a = bench::seconds_since(start);
    dist::barrier();
    start = bench::Clock::now();
    for (size_t i = 0; i < n; ++i) mine[i] = gradients[i] / ranks;
    shared.sync();
    average(true);
    const double b = bench::seconds_since(start);
    if (round >= 2) {
      in_window.push_back(a);
      copied_in.push_back(b);
    }
  }
  std::vector<float> ring(n);
  const dist::Segment whole{gradients.data(), n};
  dist::all_reduce_divided(std::span(&whole, 1), std::span<float>(ring), ranks);
  const bool same = std::equal(ring.begin(), ring.end(), mine);
  if (r == 0)
    std::printf(
        "average of %.1f MB on %d ranks through a shared window: gradients in it %.1f ms, copied in divided "
        "%.1f ms (%s bits as all_reduce_divided)\n",
        double(n) * 4e-6, p, median(in_window) * 1e3, median(copied_in) * 1e3, same ? "the same" : "other");
}

// The gradient buffer's allreduce alone: minidl's all_reduce (a ring from 256 KiB on),
// MPI_Allreduce as the MPI library chooses, and the non-blocking MPI_Iallreduce an overlap
// with the backward would start (waited for at once: its cost with nothing to hide it
// behind), on the same 33.6 MB, in turn, medians of 9 each.
void report_allreduce(const Options& o) {
  const size_t floats = size_t(o.depth * (o.width * o.width + o.width) + o.width * o.classes + o.classes);
  std::vector<float> values(floats, 1.0f);
  // Seconds of one collective, the ranks starting it together.
  const auto timed = [](const auto& collective) {
    dist::barrier();
    const auto start = bench::Clock::now();
    collective();
    return bench::seconds_since(start);
  };
  std::vector<double> ours, blocking, nonblocking;
  for (int round = 0; round < 11; ++round) {
    const double a = timed([&] { dist::all_reduce(std::span<float>(values)); });
    const double b =
        timed([&] { MPI_Allreduce(MPI_IN_PLACE, values.data(), int(floats), MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD); });
    const double c = timed([&] {
      MPI_Request request;
      MPI_Iallreduce(MPI_IN_PLACE, values.data(), int(floats), MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD, &request);
      MPI_Wait(&request, MPI_STATUS_IGNORE);
    });
    if (round >= 2) {  // the first two warm the buffers
      ours.push_back(a);
      blocking.push_back(b);
      nonblocking.push_back(c);
    }
  }
  if (dist::rank() == 0)
    std::printf(
        "allreduce of %.1f MB on %d ranks: minidl %.1f ms, MPI_Allreduce %.1f ms (%.2fx), MPI_Iallreduce + MPI_Wait "
        "%.1f ms\n",
        double(floats) * 4e-6, dist::world_size(), median(ours) * 1e3, median(blocking) * 1e3,
        median(ours) / median(blocking), median(nonblocking) * 1e3);
  report_averaging(values);
  report_shared_window(values);
}

}  // namespace

int main(int argc, char** argv) {
  dist::Environment mpi;
  return dist::run_or_abort("bench_distributed", [&] {
    cxxopts::Options cli("bench_distributed", "Data-parallel throughput of the wide net; run under mpirun");
    // Numbers as text (cxxopts' own integer parser trips GCC 12's -Wrestrict).
    cli.add_options()("steps", "timed steps per norm", cxxopts::value<std::string>()->default_value("20"))(
        "threads", "threads per rank (default: the machine's cores / ranks on it)", cxxopts::value<std::string>())(
        "norm", "none, batch, sync or all", cxxopts::value<std::string>()->default_value("all"))(
        "batch", "the global batch, split across the ranks", cxxopts::value<std::string>()->default_value("512"))(
        "allreduce", "time the gradient buffer's allreduce alone: minidl's against MPI_Allreduce")(
        "copy-gradients", "gradients copied out of the buckets (default: gradient_as_bucket_view)")("help",
                                                                                                    "show this help");
    Options o;
    int threads = 0;
    cxxopts::ParseResult args;
    try {  // bad usage: one line from every rank and exit code 2, as the other programs
      args = cli.parse(argc, argv);
      if (args.count("help")) {
        if (dist::rank() == 0) std::printf("%s\n", cli.help().c_str());
        return 0;
      }
      o.steps = int(bench::whole_number("--steps", args["steps"].as<std::string>(), 1));
      o.batch = bench::whole_number("--batch", args["batch"].as<std::string>(), 1);
      const int cores = int(std::max(1u, std::thread::hardware_concurrency()));
      threads = args.count("threads") ? int(bench::whole_number("--threads", args["threads"].as<std::string>(), 1))
                                      : std::max(1, cores / dist::local_size());
      const std::string norm = args["norm"].as<std::string>();
      if (norm != "all" && norm != "none" && norm != "batch" && norm != "sync")
        throw UsageError(cat("--norm must be none, batch, sync or all, got ", norm));
      if (o.batch % dist::world_size() != 0)
        throw UsageError(cat("--batch must be a multiple of the ", dist::world_size(), " ranks, got ", o.batch));
    } catch (const std::exception& e) {
      dist::abort_run("bench_distributed", cat("error: ", e.what(), " (see bench_distributed --help)"), 2);
    }
    set_num_threads(threads);
    if (args.count("allreduce")) {
      report_allreduce(o);
      return 0;
    }
    const std::string which = args["norm"].as<std::string>();
    for (const NormRun& n : kRuns)
      if (which == "all" || which == n.key())  // one rank has nothing to average: no copy into views
        report(o, n, !args.count("copy-gradients") && dist::world_size() > 1);
    return 0;
  });
}
