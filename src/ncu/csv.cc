#include "ncu/csv.h"

namespace vouch::ncu {

Result<std::vector<CsvRow>> ParseCsv(std::string_view text, const std::string& label,
                                     std::vector<std::size_t>* row_lines) {
  std::vector<CsvRow> rows;
  if (row_lines) row_lines->clear();
  std::size_t row_line = 1;  // where the row being read began
  CsvRow row;
  std::string field;
  bool in_quotes = false;
  bool row_has_content = false;
  std::size_t line = 1, quote_line = 0;
  for (std::size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (in_quotes) {
      if (c == '"') {
        if (i + 1 < text.size() && text[i + 1] == '"') {
          field += '"';
          ++i;
        } else {
          in_quotes = false;
        }
      } else {
        if (c == '\n') ++line;
        field += c;
      }
      continue;
    }
    switch (c) {
      case '"':
        in_quotes = true;
        quote_line = line;
        row_has_content = true;
        break;
      case ',':
        row.push_back(std::move(field));
        field.clear();
        row_has_content = true;
        break;
      case '\r':
        break;  // CRLF: the '\n' ends the row
      case '\n':
        ++line;
        if (row_has_content || !field.empty()) {
          row.push_back(std::move(field));
          rows.push_back(std::move(row));
          if (row_lines) row_lines->push_back(row_line);
        }
        row_line = line;
        row.clear();
        field.clear();
        row_has_content = false;
        break;
      default:
        field += c;
        row_has_content = true;
    }
  }
  if (in_quotes)
    return MakeError(
        "{}: a quoted CSV field that starts on line {} never ends: the file is truncated", label,
        quote_line);
  if (row_has_content || !field.empty()) {
    row.push_back(std::move(field));
    rows.push_back(std::move(row));
    if (row_lines) row_lines->push_back(row_line);
  }
  return rows;
}

}  // namespace vouch::ncu
