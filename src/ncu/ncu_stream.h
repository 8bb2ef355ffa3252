// Reads an Nsight Compute CSV export fed in chunks of any size (issue 39): one row at a time,
// each kernel's metrics folded into its figures as soon as its rows end. It holds one row,
// one kernel's metrics and every kernel's figures, never the file: a 313 MB export was read
// whole and split into strings (8.7-9.1x the file in memory).
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "ncu/ncu_csv.h"
#include "util/result.h"

namespace vouch::ncu {

class NcuCsvStream {
 public:
  // LABEL names the export in every error and in the report.
  explicit NcuCsvStream(std::string label);
  ~NcuCsvStream();
  NcuCsvStream(const NcuCsvStream&) = delete;
  NcuCsvStream& operator=(const NcuCsvStream&) = delete;

  // The next bytes of the export. An error (two exports appended, a row past the cap) ends
  // the reading: Finish is not to be called after it.
  Status Feed(std::string_view chunk);
  // The end of the export: the table, or why there is none.
  Result<NcuReport> Finish();

 private:
  struct State;
  std::unique_ptr<State> s_;
};

}  // namespace vouch::ncu
