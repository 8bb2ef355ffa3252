// A small RFC 4180 CSV reader: quoted fields, doubled quotes, commas and line breaks
// inside quotes, CRLF or LF line ends.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "util/result.h"

namespace vouch::ncu {

using CsvRow = std::vector<std::string>;

// Parses TEXT into rows of fields. An unterminated quoted field is an error naming LABEL
// and the line where the field began. ROW_LINES, when given, gets the 1-based line of TEXT on
// which each row begins.
Result<std::vector<CsvRow>> ParseCsv(std::string_view text, const std::string& label,
                                     std::vector<std::size_t>* row_lines = nullptr);

}  // namespace vouch::ncu
