#include "minidl/io/atomic_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstring>
#include <filesystem>
#include <vector>

#include "minidl/tensor/error.hpp"

namespace fs = std::filesystem;

namespace minidl::io {

namespace {

// When this process started (static initialization): a temporary older than this was left
// by a writer that died, not by one still running in this process.
const fs::file_time_type kProcessStart = fs::file_time_type::clock::now();

constexpr std::string_view kTempSuffix = ".tmp.XXXXXX";

[[noreturn]] void fail(const std::string& path, const std::string& step, int error) {
  throw Error(cat("cannot write ", path, ": ", step, " failed: ", std::strerror(error)));
}

void write_all(int fd, std::string_view bytes, const std::string& path) {
  while (!bytes.empty()) {
    ssize_t written = ::write(fd, bytes.data(), bytes.size());
    if (written < 0 && errno == EINTR) continue;
    if (written <= 0) fail(path, "write", written < 0 ? errno : ENOSPC);
    bytes.remove_prefix(size_t(written));
  }
}

// Makes the rename itself durable.
void sync_directory(const fs::path& dir) {
  int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY);
  if (fd < 0) return;  // some filesystems refuse: the data itself is already synced
  ::fsync(fd);
  ::close(fd);
}

// ".<name>", cut so that it and the suffix fit the directory's limit on name length.
std::string hidden_prefix(const fs::path& dir, const std::string& name) {
  const long limit = ::pathconf(dir.c_str(), _PC_NAME_MAX);
  const size_t room = (limit > 0 ? size_t(limit) : size_t(NAME_MAX)) - 1 - kTempSuffix.size();
  std::string prefix = ".";
  return prefix.append(name.substr(0, room));  // by append: GCC 12 warns (-Wrestrict) on "." + std::string
}

// Removes ".<name>.tmp.??????" files in dir older than this process: a SIGKILL leaves them.
void remove_stale_temporaries(const fs::path& dir, const std::string& prefix) {
  std::error_code error;
  const std::string start = prefix + ".tmp.";
  for (const fs::directory_entry& entry : fs::directory_iterator(dir, error)) {
    const std::string name = entry.path().filename().string();
    if (name.size() != start.size() + 6 || !name.starts_with(start)) continue;
    if (!entry.is_regular_file(error) || entry.last_write_time(error) >= kProcessStart || error) continue;
    fs::remove(entry.path(), error);
  }
}

// The mode a new file gets: 0666 less the umask (read without changing it, unlike umask()).
mode_t new_file_mode() {
  mode_t mode = 0644;
  if (FILE* status = std::fopen("/proc/self/status", "r")) {
    char line[256];
    unsigned mask = 0;
    while (std::fgets(line, sizeof line, status))
      if (std::sscanf(line, "Umask: %o", &mask) == 1) mode = mode_t(0666 & ~mask);
    std::fclose(status);
  }
  return mode;
}

// Writes into an existing device, FIFO or other non-regular file, as the user asked.
void write_in_place(const std::string& path, std::string_view bytes) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_TRUNC | O_CLOEXEC);
  if (fd < 0) fail(path, "opening", errno);
  try {
    write_all(fd, bytes, path);
  } catch (...) {
    ::close(fd);
    throw;
  }
  if (::close(fd) != 0) fail(path, "close", errno);
}

void replace_atomically(const fs::path& target, std::string_view bytes, mode_t mode) {
  const std::string path = target.string();
  fs::path dir = target.parent_path();
  if (dir.empty()) dir = ".";
  const std::string prefix = hidden_prefix(dir, target.filename().string());
  remove_stale_temporaries(dir, prefix);
  std::string pattern = (dir / (prefix + std::string(kTempSuffix))).string();
  std::vector<char> name(pattern.begin(), pattern.end());
  name.push_back('\0');
  int fd = ::mkstemp(name.data());
  if (fd < 0) fail(path, cat("creating a temporary file in ", dir.string()), errno);
  const std::string temp(name.data());
  try {
    write_all(fd, bytes, path);
    if (::fsync(fd) != 0) fail(path, "fsync", errno);
    if (::fchmod(fd, mode) != 0) fail(path, "chmod", errno);  // mkstemp makes it 0600
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

}  // namespace

void write_file_atomically(const std::string& path, std::string_view bytes) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) {  // nothing there, or a dangling symlink: a new file
    replace_atomically(path, bytes, new_file_mode());
  } else if (!S_ISREG(st.st_mode)) {
    write_in_place(path, bytes);
  } else {  // a regular file, perhaps behind symlinks: replace the file itself, keep its mode
    std::error_code error;
    const fs::path target = fs::canonical(path, error);
    replace_atomically(error ? fs::path(path) : target, bytes, st.st_mode & 07777);
  }
}

}  // namespace minidl::io
