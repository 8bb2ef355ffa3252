// Claiming a file that a long command will write at its end (vouch baseline's FILE), as the
// run folder is claimed (cli/run_dir.cc): two commands given one file never both write it and
// both say "written". The claim is the file itself, created empty with O_EXCL when it is new,
// and a flock on it held until the claim ends (or vouch does, SIGKILL included).
#pragma once

#include <string>

#include "util/result.h"

namespace vouch {

class FileClaim {
 public:
  FileClaim() = default;
  FileClaim(FileClaim&& o) noexcept;
  FileClaim& operator=(FileClaim&& o) noexcept;
  FileClaim(const FileClaim&) = delete;
  FileClaim& operator=(const FileClaim&) = delete;
  // Drops the flock; a file the claim created and nothing was written to is removed.
  ~FileClaim();

  // Claims PATH. A new PATH is created empty (O_EXCL|O_NOFOLLOW) and locked. An existing one
  // is refused unless OVERWRITE, or unless it is empty and unlocked (the claim of a command
  // that was killed). Either way a file another live command holds is refused, naming PATH.
  // WHAT names what is written in errors ("baseline").
  static Result<FileClaim> Claim(const std::string& path, bool overwrite, const std::string& what);

  // The content was written (renamed over PATH): the file is kept when the claim ends.
  void Keep() { created_ = false; }

 private:
  void Release();
  int fd_ = -1;
  std::string path_;
  bool created_ = false;  // created empty by this claim (removed at the end unless kept)
};

}  // namespace vouch
