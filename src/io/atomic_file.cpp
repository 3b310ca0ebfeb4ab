#include "minidl/io/atomic_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <vector>

#include "minidl/tensor/error.hpp"

namespace minidl::io {

namespace {

[[noreturn]] void fail(const std::string& path, const std::string& step, int error) {
  throw Error(cat("cannot write ", path, ": ", step, " failed: ", std::strerror(error)));
}

void write_all(int fd, std::string_view bytes, const std::string& path) {
  while (!bytes.empty()) {
    ssize_t written = ::write(fd, bytes.data(), bytes.size());
    if (written < 0 && errno == EINTR) continue;
    if (written <= 0) fail(path, "write", errno);
    bytes.remove_prefix(size_t(written));
  }
}

// Makes the rename itself durable.
void sync_directory(const std::filesystem::path& dir) {
  int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY);
  if (fd < 0) return;  // some filesystems refuse: the data itself is already synced
  ::fsync(fd);
  ::close(fd);
}

}  // namespace

void write_file_atomically(const std::string& path, std::string_view bytes) {
  const std::filesystem::path target(path);
  std::filesystem::path dir = target.parent_path();
  if (dir.empty()) dir = ".";
  // Built by append: GCC 12 warns (-Wrestrict, a false positive) on "." + std::string.
  std::string hidden_name = ".";
  hidden_name.append(target.filename().string()).append(".tmp.XXXXXX");
  std::string pattern = (dir / hidden_name).string();
  std::vector<char> name(pattern.begin(), pattern.end());
  name.push_back('\0');
  int fd = ::mkstemp(name.data());
  if (fd < 0) fail(path, cat("creating a temporary file in ", dir.string()), errno);
  const std::string temp(name.data());
  try {
    write_all(fd, bytes, path);
    if (::fsync(fd) != 0) fail(path, "fsync", errno);
    if (::fchmod(fd, 0644) != 0) fail(path, "chmod", errno);  // mkstemp makes it 0600
    if (::close(fd) != 0) {
      fd = -1;
      fail(path, "close", errno);
    }
    fd = -1;
    if (::rename(temp.c_str(), path.c_str()) != 0) fail(path, "rename", errno);
  } catch (...) {
    if (fd >= 0) ::close(fd);
    ::unlink(temp.c_str());
    throw;
  }
  sync_directory(dir);
}

}  // namespace minidl::io
