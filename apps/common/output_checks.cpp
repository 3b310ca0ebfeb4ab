#include "output_checks.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstring>
#include <filesystem>

#include "minidl/tensor/error.hpp"

namespace fs = std::filesystem;

namespace minidl::apps {

namespace {

// The same file: the same resolved path, or (both existing) the same device and inode, which
// also catches hard links and bind mounts.
bool same_file(const std::string& a, const std::string& b) {
  std::error_code error;
  if (fs::weakly_canonical(a, error) == fs::weakly_canonical(b, error) && !error) return true;
  return fs::exists(a, error) && fs::exists(b, error) && fs::equivalent(a, b, error) && !error;
}

std::string directory_of(const std::string& path) {
  const fs::path parent = fs::path(path).parent_path();
  return parent.empty() ? std::string(".") : parent.string();
}

// A file can be created in dir: made and removed at once (a read-only filesystem, a full
// inode table or missing permissions show here, before training, not after). Named as the
// writers' temporaries are (hidden, ".tmp."), since a kill between the two calls leaves it.
void check_can_create_in(const NamedFile& out, const std::string& dir) {
  std::string pattern = (fs::path(dir) / ".minidl-write-test.tmp.XXXXXX").string();
  const int fd = ::mkstemp(pattern.data());
  if (fd < 0)
    throw UsageError(cat(out.option, " ", out.path, ": cannot create a file in ", dir, ": ", std::strerror(errno)));
  ::close(fd);
  ::unlink(pattern.c_str());
}

void check_one_output(const NamedFile& out) {
  std::error_code error;
  if (fs::is_directory(out.path, error))
    throw UsageError(cat(out.option, " ", out.path, ": is a directory, not a file"));
  const std::string name = fs::path(out.path).filename().string();
  if (name.empty() || name == "." || name == "..")
    throw UsageError(cat(out.option, " \"", out.path, "\": names a directory, not a file"));
  const std::string dir = directory_of(out.path);
  const long name_max = ::pathconf(dir.c_str(), _PC_NAME_MAX);
  if (name_max > 0 && name.size() > size_t(name_max))
    throw UsageError(cat(out.option, " ", out.path, ": the file name has ", name.size(), " bytes, more than the ",
                         name_max, " its filesystem allows"));
  if (!fs::is_directory(dir, error))
    throw UsageError(cat(out.option, " ", out.path, ": the directory ", dir, " does not exist"));
}

}  // namespace

void check_outputs(const std::vector<NamedFile>& inputs, const std::vector<NamedFile>& outputs,
                   const std::string& save_dir) {
  for (size_t i = 0; i < outputs.size(); ++i) {
    const NamedFile& out = outputs[i];
    for (const NamedFile& in : inputs)
      if (same_file(out.path, in.path))
        throw UsageError(cat(out.option, " ", out.path, " is the input ", in.path, " (", in.option,
                             "): writing it would destroy it; choose another file"));
    for (size_t j = 0; j < i; ++j)
      if (same_file(out.path, outputs[j].path))
        throw UsageError(cat(out.option, " ", out.path, " is also the output of ", outputs[j].option,
                             ": give each output its own file"));
    if (out.option != "--save") check_one_output(out);
  }
  for (const NamedFile& out : outputs)
    if (out.option != "--save") check_can_create_in(out, directory_of(out.path));
  if (save_dir.empty()) return;
  std::error_code error;
  if (fs::exists(save_dir, error) && !fs::is_directory(save_dir, error))
    throw UsageError(cat("--save ", save_dir, ": exists and is not a directory"));
  for (const NamedFile& out : outputs)
    if (out.option == "--save" && fs::exists(save_dir, error)) check_one_output(out);
}

void prepare_save_directory(const std::string& save_dir) {
  if (save_dir.empty()) return;
  std::error_code error;
  fs::create_directories(save_dir, error);
  if (error) throw UsageError(cat("--save ", save_dir, ": cannot create the directory: ", error.message()));
  check_can_create_in({"--save", save_dir}, save_dir);
}

}  // namespace minidl::apps
