// A small RFC 4180 CSV reader: quoted fields, doubled quotes, commas and line breaks
// inside quotes, CRLF or LF line ends. CsvReader takes the text in chunks of any size and
// hands over one row at a time, so a file of any length is read in the memory of one row.
#pragma once

#include <cstddef>
#include <deque>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "util/result.h"

namespace vouch::ncu {

using CsvRow = std::vector<std::string>;
// One row's fields: views valid only during the call that hands them over.
using CsvFields = std::vector<std::string_view>;

// A row longer than this is refused (a quote that never closes, a file that is not a CSV
// export): the reader never holds more than one row.
inline constexpr std::size_t kMaxCsvRowBytes = std::size_t{256} << 20;

class CsvReader {
 public:
  // ROW gets each row's fields and the line on which the row begins; an error it returns
  // stops the reading and is returned.
  using RowSink = std::function<Status(const CsvFields& fields, std::size_t line)>;

  // LABEL names the text in errors; FIRST_LINE is the line of its first byte.
  CsvReader(std::string label, std::size_t first_line = 1,
            std::size_t max_row_bytes = kMaxCsvRowBytes)
      : label_(std::move(label)), line_(first_line), max_row_(max_row_bytes) {}

  // The next bytes of the text: every row they complete goes to ROW.
  Status Feed(std::string_view data, const RowSink& row);
  // The end of the text: a last row without a line end goes to ROW; a quoted field still
  // open is an error naming the label and the line where it began.
  Status Finish(const RowSink& row);

 private:
  enum class Step { kRow, kBlank, kMore };
  // Reads one row (or blank line) at the front of [P, END) into fields_; *NEXT is past it.
  Step ReadRow(const char* p, const char* end, bool eof, const char** next, std::size_t* lines);
  // Reads one field that does not fit the fast paths, into a scratch string.
  const char* SlowField(const char* p, const char* end, bool eof, bool* content, std::size_t* lines,
                        bool* more);
  Status Parse(std::string_view src, bool eof, const RowSink& row, std::size_t* used);

  std::string label_;
  std::size_t line_;  // the line where the next row begins
  std::size_t max_row_;
  std::string pending_;       // the start of a row the fed bytes did not complete
  std::size_t retry_at_ = 0;  // pending_'s size at which to try that row again
  CsvFields fields_;
  std::deque<std::string> scratch_;  // unescaped fields (a deque: views into them stay valid)
  std::size_t scratch_used_ = 0;
  std::size_t quote_line_ = 0;  // where the quoted field still open at the end began
  bool open_quote_ = false;
};

// Parses TEXT into rows of fields. An unterminated quoted field is an error naming LABEL
// and the line where the field began. ROW_LINES, when given, gets the 1-based line of TEXT on
// which each row begins.
Result<std::vector<CsvRow>> ParseCsv(std::string_view text, const std::string& label,
                                     std::vector<std::size_t>* row_lines = nullptr);

}  // namespace vouch::ncu
